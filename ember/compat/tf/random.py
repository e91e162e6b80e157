"""``tf.random``: ``normal``, ``uniform``, ``truncated_normal``, ``shuffle``, ``set_seed``.

>>> import ember.compat.tf as tf
>>> tf.random.set_seed(0); tf.random.normal((2, 2)).shape
ember.Size([2, 2])
"""

from .ops import random_normal as normal
from .ops import random_shuffle as shuffle
from .ops import random_uniform as uniform
from .ops import set_random_seed as set_seed
from .ops import truncated_normal

__all__ = ["normal", "set_seed", "shuffle", "truncated_normal", "uniform"]
