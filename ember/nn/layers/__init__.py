"""Layers (Linear, Conv2d, ...), one family a file; re-exported by ``ember.nn``."""

from . import (
    activation,
    attention,
    conv,
    distance,
    dropout,
    embedding,
    fold,
    linear,
    loss,
    loss_likelihood,
    loss_margin,
    normalization,
    pooling,
    resampling,
    rnn,
    transformer,
)
from .activation import *  # noqa: F403
from .attention import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .embedding import *  # noqa: F403
from .fold import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .loss_likelihood import *  # noqa: F403
from .loss_margin import *  # noqa: F403
from .normalization import *  # noqa: F403
from .pooling import *  # noqa: F403
from .resampling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .transformer import *  # noqa: F403

__all__ = [
    *activation.__all__,
    *attention.__all__,
    *conv.__all__,
    *distance.__all__,
    *dropout.__all__,
    *embedding.__all__,
    *fold.__all__,
    *linear.__all__,
    *loss.__all__,
    *loss_likelihood.__all__,
    *loss_margin.__all__,
    *normalization.__all__,
    *pooling.__all__,
    *resampling.__all__,
    *rnn.__all__,
    *transformer.__all__,
]
