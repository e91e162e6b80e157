"""TensorFlow's dtype names (``tf.float32``, ``tf.int32``, ``tf.bool``...; ``half`` and
``double`` too) over ember's dtypes, ``tf.newaxis``, and ``as_dtype``, TensorFlow's reading of
a dtype spelling (Python ``float`` is float32, ``int`` int32).

>>> import ember.compat.tf as tf
>>> tf.float32, tf.as_dtype(int)
(ember.float32, ember.int32)
"""

from __future__ import annotations

import builtins

from ember import dtypes as _dt

float16 = half = _dt.float16
bfloat16 = _dt.bfloat16
float32 = _dt.float32
float64 = double = _dt.float64
int8 = _dt.int8
int16 = _dt.int16
int32 = _dt.int32
int64 = _dt.int64
uint8 = _dt.uint8
bool = _dt.bool_  # noqa: A001  (tf.bool)
DType = _dt.DType
newaxis = None


def as_dtype(dtype) -> DType:
    """TensorFlow's reading of a dtype spelling: Python ``float`` is float32, ``int`` int32.

    >>> import ember.compat.tf as tf
    >>> tf.as_dtype(float), tf.as_dtype("int64"), tf.as_dtype(tf.bool)
    (ember.float32, ember.int64, ember.bool)
    """
    if dtype is builtins.float:
        return float32
    if dtype is builtins.int:
        return int32
    return _dt.to_dtype(dtype)
