"""Tensors from data with TensorFlow's dtype inference: ``convert_to_tensor`` and ``constant``
(Python floats float32, ints int32, NumPy arrays keep their dtype), and the conversion of a
binary op's Python operand to the other operand's dtype.

>>> import ember.compat.tf as tf
>>> tf.constant([1, 2]).dtype, tf.constant(1.5).dtype
(ember.int32, ember.float32)
"""

from __future__ import annotations

import math as _math

import numpy as np

import ember
from ember import dtypes as _dt
from ember._errors import DTypeError, ShapeError
from ember._tensor import Tensor

from ._arguments import _shape
from .dtypes import DType, as_dtype, bool, float32, int32, int64  # tf.bool, not the builtin

_INT32 = np.iinfo(np.int32)


def _infer_dtype(value) -> DType:
    """The dtype TensorFlow gives ``value``: NumPy arrays keep theirs, Python numbers don't."""
    if isinstance(value, (np.ndarray, np.generic)):
        return _dt.from_numpy_dtype(value.dtype)
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as e:
        raise DTypeError(f"convert_to_tensor: can't convert {type(value).__name__}: {e}") from None
    kind = arr.dtype.kind
    if kind == "b":
        return bool
    if kind in "iu":
        if arr.size and (arr.min() < _INT32.min or arr.max() > _INT32.max):
            return int64
        return int32
    if kind == "f":
        return float32
    raise DTypeError(
        f"convert_to_tensor: can't convert {type(value).__name__} of NumPy kind "
        f"{arr.dtype} to a tensor"
    )


def convert_to_tensor(value, dtype=None, dtype_hint=None, name: str | None = None) -> Tensor:
    """``value`` as a tensor: tensors are returned as they are (a different ``dtype`` is an
    error), lists of tensors are stacked, other data get TensorFlow's dtype (Python floats
    float32, ints int32; NumPy arrays keep theirs) unless ``dtype`` says otherwise.

    >>> import numpy as np, ember.compat.tf as tf
    >>> tf.convert_to_tensor(1.5).dtype, tf.convert_to_tensor([1, 2]).dtype
    (ember.float32, ember.int32)
    >>> tf.convert_to_tensor(np.zeros(2)).dtype, tf.convert_to_tensor([1, 2], tf.float32)
    (ember.float64, tensor([1., 2.]))
    """
    if isinstance(value, Tensor):
        if dtype is not None and as_dtype(dtype) != value.dtype:
            raise DTypeError(
                f"convert_to_tensor: requested dtype {as_dtype(dtype).name} for a tensor of "
                f"dtype {value.dtype.name}; use tf.cast"
            )
        return value
    if isinstance(value, (list, tuple)) and value and any(isinstance(v, Tensor) for v in value):
        return ember.stack([convert_to_tensor(v, dtype) for v in value])
    if dtype is None:
        d = _infer_dtype(value) if dtype_hint is None else as_dtype(dtype_hint)
        if dtype_hint is not None and _infer_dtype(value).is_floating_point > d.is_floating_point:
            d = _infer_dtype(value)
    else:
        d = as_dtype(dtype)
        if not d.is_floating_point:
            src = value.dtype if isinstance(value, (np.ndarray, np.generic)) else None
            if src is None:
                src = np.asarray(value).dtype
            if src.kind == "f":
                raise DTypeError(
                    f"convert_to_tensor: can't convert floating-point data to {d.name}; use tf.cast"
                )
    return ember.tensor(value, dtype=d)


def constant(value, dtype=None, shape=None, name: str | None = None) -> Tensor:
    """A tensor of ``value`` (TensorFlow's dtype inference); with ``shape``, a scalar is filled
    in and other values are reshaped.

    >>> import ember.compat.tf as tf
    >>> tf.constant(2.0, shape=(2, 2))
    tensor([[2., 2.],
            [2., 2.]])
    >>> tf.constant([1, 2, 3, 4], shape=[2, 2], dtype=tf.float64)
    tensor([[1., 2.],
            [3., 4.]], dtype=ember.float64)
    """
    if isinstance(value, Tensor):
        t = value if dtype is None else value.to(as_dtype(dtype))
    else:
        t = convert_to_tensor(value, dtype)
    if shape is None:
        return t
    shape = _shape(shape, "constant")
    n = _math.prod(shape)
    if t.numel() == 1 and n != 1:
        return t.reshape(()).expand(*shape).clone()
    if t.numel() != n:
        raise ShapeError(f"constant: {t.numel()} values can't fill shape {shape} ({n} elements)")
    return t.reshape(shape)


def _binary(x, y) -> tuple[Tensor, Tensor]:
    """Convert Python operands to the other operand's dtype, as TensorFlow does."""
    if isinstance(x, Tensor):
        if not isinstance(y, Tensor):
            y = convert_to_tensor(y, x.dtype)
    elif isinstance(y, Tensor):
        x = convert_to_tensor(x, y.dtype)
    else:
        x = convert_to_tensor(x)
        y = convert_to_tensor(y, x.dtype) if not isinstance(y, Tensor) else y
    return x, y
