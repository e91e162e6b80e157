"""Layers (Linear, Conv2d, ...), one family a file; re-exported by ``ember.nn``."""

from . import (
    activation,
    attention,
    conv,
    extra,
    linear,
    loss,
    loss_extra,
    misc,
    normalization,
    pooling,
    resampling,
    rnn,
    transformer,
)
from .activation import *  # noqa: F403
from .attention import *  # noqa: F403
from .conv import *  # noqa: F403
from .extra import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .loss_extra import *  # noqa: F403
from .misc import *  # noqa: F403
from .normalization import *  # noqa: F403
from .pooling import *  # noqa: F403
from .resampling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .transformer import *  # noqa: F403

__all__ = [
    *activation.__all__,
    *attention.__all__,
    *conv.__all__,
    *extra.__all__,
    *linear.__all__,
    *loss.__all__,
    *loss_extra.__all__,
    *misc.__all__,
    *normalization.__all__,
    *pooling.__all__,
    *resampling.__all__,
    *rnn.__all__,
    *transformer.__all__,
]
