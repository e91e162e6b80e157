"""Creation ops with TensorFlow's spellings and dtypes: zeros, ones, zeros_like, ones_like,
fill, range and one_hot (float32 unless ``dtype`` says otherwise).

>>> import ember.compat.tf as tf
>>> tf.range(3), tf.fill([2], 7)
(tensor([0, 1, 2], dtype=ember.int32), tensor([7, 7], dtype=ember.int32))
"""

from __future__ import annotations

import ember
from ember._errors import EmberError
from ember._tensor import Tensor

from ._arguments import _shape
from .conversion import _infer_dtype, convert_to_tensor
from .dtypes import as_dtype, float32


def zeros(shape, dtype=float32, name: str | None = None) -> Tensor:
    """A tensor of zeros (float32 unless ``dtype``).

    >>> import ember.compat.tf as tf
    >>> tf.zeros((2,), tf.int32)
    tensor([0, 0], dtype=ember.int32)
    """
    return ember.zeros(_shape(shape, "zeros"), dtype=as_dtype(dtype))


def ones(shape, dtype=float32, name: str | None = None) -> Tensor:
    """A tensor of ones (float32 unless ``dtype``).

    >>> import ember.compat.tf as tf
    >>> tf.ones([2, 1])
    tensor([[1.],
            [1.]])
    """
    return ember.ones(_shape(shape, "ones"), dtype=as_dtype(dtype))


def zeros_like(input, dtype=None, name: str | None = None) -> Tensor:  # noqa: A002
    """Zeros of ``input``'s shape (and dtype unless ``dtype``).

    >>> import ember.compat.tf as tf
    >>> tf.zeros_like(tf.constant([1.0, 2.0]))
    tensor([0., 0.])
    """
    x = convert_to_tensor(input)
    return ember.zeros_like(x, dtype=None if dtype is None else as_dtype(dtype))


def ones_like(input, dtype=None, name: str | None = None) -> Tensor:  # noqa: A002
    """Ones of ``input``'s shape (and dtype unless ``dtype``).

    >>> import ember.compat.tf as tf
    >>> tf.ones_like(tf.constant([1, 2]))
    tensor([1, 1], dtype=ember.int32)
    """
    x = convert_to_tensor(input)
    return ember.ones_like(x, dtype=None if dtype is None else as_dtype(dtype))


def fill(dims, value, name: str | None = None) -> Tensor:
    """A tensor of shape ``dims`` filled with ``value`` (its TensorFlow dtype).

    >>> import ember.compat.tf as tf
    >>> tf.fill([2], 7)
    tensor([7, 7], dtype=ember.int32)
    """
    v = convert_to_tensor(value)
    return ember.full(_shape(dims, "fill"), v.item(), dtype=v.dtype)


def range(start, limit=None, delta=1, dtype=None, name: str | None = None) -> Tensor:  # noqa: A001
    """``start, start + delta, ...`` below ``limit`` (int32 for ints, float32 for floats).

    >>> import ember.compat.tf as tf
    >>> tf.range(3), tf.range(0.0, 1.0, 0.5)
    (tensor([0, 1, 2], dtype=ember.int32), tensor([0.0000, 0.5000]))
    """
    if limit is None:
        start, limit = 0, start
    if dtype is None:
        dtype = _infer_dtype([start, limit, delta])
    return ember.arange(start, limit, delta, dtype=as_dtype(dtype))


def one_hot(indices, depth: int, on_value=None, off_value=None, axis=None, dtype=None):
    """One-hot rows (float32 unless ``dtype``) along a new last axis; out-of-range indices give
    all ``off_value``.

    >>> import ember.compat.tf as tf
    >>> tf.one_hot([0, 2], 3)
    tensor([[1., 0., 0.],
            [0., 0., 1.]])
    """
    if axis not in (None, -1):
        raise EmberError("one_hot: only axis=-1 (a new last axis) is supported")
    idx = convert_to_tensor(indices)
    d = as_dtype(dtype) if dtype is not None else float32
    hot = idx.unsqueeze(-1) == ember.arange(depth, dtype=idx.dtype)
    if on_value is None and off_value is None:
        return hot.to(d)
    on = convert_to_tensor(1 if on_value is None else on_value, d)
    off = convert_to_tensor(0 if off_value is None else off_value, d)
    return ember.where(hot, on, off)
