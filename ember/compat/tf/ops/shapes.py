"""Shape ops with TensorFlow's spellings: shape, size, rank (int32 tensors), reshape,
transpose (no ``perm`` reverses the dimensions), concat, stack, squeeze and expand_dims.

>>> import ember.compat.tf as tf
>>> tf.transpose(tf.zeros([2, 3, 4])).shape
ember.Size([4, 3, 2])
"""

from __future__ import annotations

import builtins

import ember
from ember._errors import ShapeError
from ember._tensor import Tensor

from ._arguments import _dims, _shape
from .conversion import convert_to_tensor
from .dtypes import as_dtype, int32


def shape(input, out_type=int32, name: str | None = None) -> Tensor:  # noqa: A002
    """The shape of ``input`` as a 1-D int32 tensor.

    >>> import ember.compat.tf as tf
    >>> tf.shape(tf.zeros((2, 3)))
    tensor([2, 3], dtype=ember.int32)
    """
    return ember.tensor(list(convert_to_tensor(input).shape), dtype=as_dtype(out_type))


def size(input, out_type=int32, name: str | None = None) -> Tensor:  # noqa: A002
    """The number of elements of ``input`` as a 0-d int32 tensor.

    >>> import ember.compat.tf as tf
    >>> tf.size(tf.zeros((2, 3)))
    tensor(6, dtype=ember.int32)
    """
    return ember.tensor(convert_to_tensor(input).numel(), dtype=as_dtype(out_type))


def rank(input, name: str | None = None) -> Tensor:  # noqa: A002
    """The number of dimensions of ``input`` as a 0-d int32 tensor.

    >>> import ember.compat.tf as tf
    >>> tf.rank(tf.zeros((2, 3)))
    tensor(2, dtype=ember.int32)
    """
    return ember.tensor(convert_to_tensor(input).ndim, dtype=int32)


def reshape(tensor, shape, name: str | None = None) -> Tensor:
    """``tensor`` with a new shape (one size may be -1).

    >>> import ember.compat.tf as tf
    >>> tf.reshape(tf.range(6), [2, -1]).shape
    ember.Size([2, 3])
    """
    return convert_to_tensor(tensor).reshape(_shape(shape, "reshape"))


def transpose(a, perm=None, name: str | None = None) -> Tensor:
    """``a`` with its dimensions permuted by ``perm`` (default: reversed).

    >>> import ember.compat.tf as tf
    >>> tf.transpose(tf.zeros((2, 3, 4))).shape
    ember.Size([4, 3, 2])
    """
    x = convert_to_tensor(a)
    perm = tuple(reversed(builtins.range(x.ndim))) if perm is None else _shape(perm, "transpose")
    return x.permute(*perm)


def concat(values, axis: int, name: str | None = None) -> Tensor:
    """Join tensors along an existing ``axis``.

    >>> import ember.compat.tf as tf
    >>> tf.concat([tf.zeros((1, 2)), tf.ones((1, 2))], axis=0).shape
    ember.Size([2, 2])
    """
    return ember.cat([convert_to_tensor(v) for v in values], dim=builtins.int(axis))


def stack(values, axis: int = 0, name: str | None = None) -> Tensor:
    """Join tensors along a new ``axis``.

    >>> import ember.compat.tf as tf
    >>> tf.stack([tf.zeros(2), tf.ones(2)], axis=1).shape
    ember.Size([2, 2])
    """
    return ember.stack([convert_to_tensor(v) for v in values], dim=builtins.int(axis))


def squeeze(input, axis=None, name: str | None = None) -> Tensor:  # noqa: A002
    """Drop size-1 dimensions (all of them, or those in ``axis``).

    >>> import ember.compat.tf as tf
    >>> tf.squeeze(tf.zeros((1, 2, 1)), axis=[0]).shape
    ember.Size([2, 1])
    """
    x = convert_to_tensor(input)
    if axis is None:
        return ember.squeeze(x)
    for d in sorted({d % x.ndim for d in _dims(x, axis, "squeeze")}, reverse=True):
        if x.shape[d] != 1:
            raise ShapeError(
                f"squeeze: can't squeeze dimension {d} of size {x.shape[d]} "
                f"(shape {tuple(x.shape)})"
            )
        x = x.squeeze(d)
    return x


def expand_dims(input, axis: int, name: str | None = None) -> Tensor:  # noqa: A002
    """``input`` with a size-1 dimension inserted at ``axis``.

    >>> import ember.compat.tf as tf
    >>> tf.expand_dims(tf.zeros(3), -1).shape
    ember.Size([3, 1])
    """
    return convert_to_tensor(input).unsqueeze(builtins.int(axis))
