"""Reductions with TensorFlow's semantics: ``reduce_sum`` keeps the input's dtype,
``reduce_mean`` of integers is a truncated integer mean, ``axis`` takes an int, a list or
None, ``keepdims``; argmax and argmin (``axis=0`` by default).

>>> import ember.compat.tf as tf
>>> tf.reduce_max(tf.constant([[1, 5], [3, 2]]), axis=1)
tensor([5, 3], dtype=ember.int32)
"""

from __future__ import annotations

import builtins

import ember
from ember._errors import DTypeError
from ember._tensor import Tensor

from ._arguments import _dims
from .conversion import convert_to_tensor
from .dtypes import as_dtype, bool, int64  # tf.bool, not the builtin


def _refuse_bool(x: Tensor, what: str) -> None:
    if x.dtype is bool:
        raise DTypeError(f"{what}: bool tensors are not supported; cast them first (tf.cast)")


def _reduce(fn, x: Tensor, axis, keepdims, what: str) -> Tensor:
    """``fn(x, dim=..., keepdim=keepdims)`` over TensorFlow's ``axis`` (``x`` itself when empty)."""
    dims = _dims(x, axis, what)
    return fn(x, dim=dims, keepdim=keepdims) if dims else x


def reduce_sum(input_tensor, axis=None, keepdims: builtins.bool = False, name=None) -> Tensor:
    """Sum over ``axis`` (an int, a list, or None for all); the result keeps the input's dtype.

    >>> import ember.compat.tf as tf
    >>> x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    >>> tf.reduce_sum(x), tf.reduce_sum(x, axis=1), tf.reduce_sum(x, [0, 1], keepdims=True)
    (tensor(10.), tensor([3., 7.]), tensor([[10.]]))
    """
    x = convert_to_tensor(input_tensor)
    _refuse_bool(x, "reduce_sum")
    dims = _dims(x, axis, "reduce_sum")
    if not dims:
        return x
    out = ember.sum(x, dim=dims, keepdim=keepdims)
    return out if out.dtype == x.dtype else out.to(x.dtype)


def reduce_mean(input_tensor, axis=None, keepdims: builtins.bool = False, name=None) -> Tensor:
    """Mean over ``axis``; the mean of integers is an integer (truncated toward zero).

    >>> import ember.compat.tf as tf
    >>> tf.reduce_mean(tf.constant([1, 2])), tf.reduce_mean(tf.constant([1.0, 2.0]))
    (tensor(1, dtype=ember.int32), tensor(1.5000))
    """
    x = convert_to_tensor(input_tensor)
    _refuse_bool(x, "reduce_mean")
    dims = _dims(x, axis, "reduce_mean")
    if not dims:
        return x
    if x.dtype.is_floating_point:
        return ember.mean(x, dim=dims, keepdim=keepdims)
    n = 1
    for d in dims:
        n = n * x.shape[d]
    s = ember.sum(x, dim=dims, keepdim=keepdims)
    if isinstance(n, builtins.int):
        n = builtins.max(n, 1)
    return ember.div(s, n, rounding_mode="trunc").to(x.dtype)


def reduce_max(input_tensor, axis=None, keepdims: builtins.bool = False, name=None) -> Tensor:
    """Maximum over ``axis`` (the gradient is shared among tied maxima).

    >>> import ember.compat.tf as tf
    >>> tf.reduce_max(tf.constant([[1, 5], [3, 4]]), axis=1)
    tensor([5, 4], dtype=ember.int32)
    """
    return _reduce(ember.amax, convert_to_tensor(input_tensor), axis, keepdims, "reduce_max")


def reduce_min(input_tensor, axis=None, keepdims: builtins.bool = False, name=None) -> Tensor:
    """Minimum over ``axis``.

    >>> import ember.compat.tf as tf
    >>> tf.reduce_min(tf.constant([[1.0, 5.0], [3.0, 4.0]]))
    tensor(1.)
    """
    return _reduce(ember.amin, convert_to_tensor(input_tensor), axis, keepdims, "reduce_min")


def reduce_prod(input_tensor, axis=None, keepdims: builtins.bool = False, name=None) -> Tensor:
    """Product over ``axis``; keeps the input's dtype.

    >>> import ember.compat.tf as tf
    >>> tf.reduce_prod(tf.constant([[1, 2], [3, 4]]), axis=0)
    tensor([3, 8], dtype=ember.int32)
    """
    x = convert_to_tensor(input_tensor)
    dims = _dims(x, axis, "reduce_prod")
    out = x
    for d in sorted({d % x.ndim for d in dims}, reverse=True):
        out = ember.prod(out, dim=d, keepdim=keepdims)
    return out if out.dtype == x.dtype else out.to(x.dtype)


def reduce_logsumexp(input_tensor, axis=None, keepdims: builtins.bool = False, name=None):
    """``log(sum(exp(x)))`` over ``axis``, computed stably.

    >>> import ember.compat.tf as tf
    >>> tf.reduce_logsumexp(tf.constant([0.0, 0.0]))
    tensor(0.6931)
    """
    return _reduce(
        ember.logsumexp, convert_to_tensor(input_tensor), axis, keepdims, "reduce_logsumexp"
    )


def reduce_any(input_tensor, axis=None, keepdims: builtins.bool = False, name=None) -> Tensor:
    """Logical or over ``axis``.

    >>> import ember.compat.tf as tf
    >>> tf.reduce_any(tf.constant([[True, False], [False, False]]), axis=1)
    tensor([ True, False])
    """
    return _reduce(
        ember.amax, convert_to_tensor(input_tensor).to(bool), axis, keepdims, "reduce_any"
    )


def reduce_all(input_tensor, axis=None, keepdims: builtins.bool = False, name=None) -> Tensor:
    """Logical and over ``axis``.

    >>> import ember.compat.tf as tf
    >>> tf.reduce_all(tf.constant([[True, False], [True, True]]), axis=1)
    tensor([False,  True])
    """
    return _reduce(
        ember.amin, convert_to_tensor(input_tensor).to(bool), axis, keepdims, "reduce_all"
    )


def argmax(input, axis=None, output_type=int64, name: str | None = None) -> Tensor:  # noqa: A002
    """Index of the maximum along ``axis`` (default 0, as TensorFlow), int64 unless
    ``output_type``.

    >>> import ember.compat.tf as tf
    >>> tf.argmax(tf.constant([[1, 5], [3, 4]])), tf.argmax([[1, 5], [3, 4]], axis=1)
    (tensor([1, 0]), tensor([1, 1]))
    """
    x = convert_to_tensor(input)
    return ember.argmax(x, dim=0 if axis is None else builtins.int(axis)).to(as_dtype(output_type))


def argmin(input, axis=None, output_type=int64, name: str | None = None) -> Tensor:  # noqa: A002
    """Index of the minimum along ``axis`` (default 0), int64 unless ``output_type``.

    >>> import ember.compat.tf as tf
    >>> tf.argmin(tf.constant([3.0, 1.0, 2.0]))
    tensor(1)
    """
    x = convert_to_tensor(input)
    return ember.argmin(x, dim=0 if axis is None else builtins.int(axis)).to(as_dtype(output_type))
