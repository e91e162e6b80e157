"""Random ops over ember's generator: random_normal, truncated_normal, random_uniform,
random_shuffle, and set_random_seed (which seeds that generator).

>>> import ember.compat.tf as tf
>>> tf.set_random_seed(0)
>>> tf.random_uniform([2], maxval=10, dtype=tf.int32).dtype
ember.int32
"""

from __future__ import annotations

import builtins

import ember
from ember._errors import EmberError
from ember._tensor import Tensor

from ._arguments import _shape
from .conversion import convert_to_tensor
from .dtypes import as_dtype, float32


def random_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None) -> Tensor:
    """Normal samples (float32 unless ``dtype``) from ember's generator: seed it with
    ``tf.random.set_seed``; the op-level ``seed`` is accepted and ignored.

    >>> import ember.compat.tf as tf
    >>> tf.random.set_seed(0)
    >>> tf.random_normal((2, 3), stddev=0.1).shape
    ember.Size([2, 3])
    """
    t = ember.randn(_shape(shape, "random_normal"), dtype=as_dtype(dtype))
    if stddev != 1:
        t = t * stddev
    if not (isinstance(mean, (builtins.int, builtins.float)) and mean == 0):
        t = t + mean
    return t


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    """Normal samples redrawn until within two standard deviations of ``mean``.

    >>> import ember.compat.tf as tf
    >>> (tf.reduce_max(tf.abs(tf.random.truncated_normal((100,)))) <= 2).item()
    True
    """
    t = ember.empty(_shape(shape, "truncated_normal"), dtype=as_dtype(dtype))
    lo, hi = mean - 2 * stddev, mean + 2 * stddev
    return ember.nn.init.trunc_normal_(t, mean=mean, std=stddev, a=lo, b=hi)


def random_uniform(shape, minval=0, maxval=None, dtype=float32, seed=None, name=None) -> Tensor:
    """Uniform samples in ``[minval, maxval)`` (``maxval`` defaults to 1 for floats; integer
    dtypes need it).

    >>> import ember.compat.tf as tf
    >>> x = tf.random.uniform((100,), -1.0, 1.0)
    >>> (tf.reduce_min(x) >= -1.0).item(), tf.random.uniform((2,), 0, 5, tf.int32).dtype
    (True, ember.int32)
    """
    d = as_dtype(dtype)
    shp = _shape(shape, "random_uniform")
    if not d.is_floating_point:
        if maxval is None:
            raise EmberError(f"random.uniform: maxval is needed for an integer dtype ({d.name})")
        return ember.randint(builtins.int(minval), builtins.int(maxval), shp, dtype=d)
    if maxval is None:
        maxval = 1.0
    t = ember.rand(shp, dtype=d)
    if (minval, maxval) != (0, 1):
        t = t * (maxval - minval) + minval
    return t


def set_random_seed(seed: int) -> None:
    """Seed the generator every random op draws from (``tf.random.set_seed``).

    >>> import ember.compat.tf as tf
    >>> tf.random.set_seed(1); a = tf.random.normal((2,))
    >>> tf.random.set_seed(1); tf.reduce_all(a == tf.random.normal((2,))).item()
    True
    """
    ember.manual_seed(seed)


def random_shuffle(value, seed=None, name: str | None = None) -> Tensor:
    """``value`` with its first dimension shuffled.

    >>> import ember.compat.tf as tf
    >>> sorted(tf.random.shuffle(tf.range(4)).tolist())
    [0, 1, 2, 3]
    """
    x = convert_to_tensor(value)
    return x[ember.randperm(x.shape[0])]
