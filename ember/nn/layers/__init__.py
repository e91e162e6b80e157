"""Layers (Linear, Conv2d, ...), one family a file; re-exported by ``ember.nn``."""

from . import activation, attention, conv, linear, loss, misc, normalization, pooling, rnn
from .activation import *  # noqa: F403
from .attention import *  # noqa: F403
from .conv import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .misc import *  # noqa: F403
from .normalization import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403

__all__ = [
    *activation.__all__,
    *attention.__all__,
    *conv.__all__,
    *linear.__all__,
    *loss.__all__,
    *misc.__all__,
    *normalization.__all__,
    *pooling.__all__,
    *rnn.__all__,
]
