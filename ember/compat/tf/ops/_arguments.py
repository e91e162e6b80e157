"""Argument helpers the TensorFlow ops share: a shape given as ints, a tensor or one int, and
TensorFlow's ``axis`` (an int, a list, a tensor or None for every dimension), range-checked.

>>> _shape([2, 3], "zeros")
(2, 3)
"""

from __future__ import annotations

import builtins

import numpy as np

from ember._errors import ShapeError
from ember._tensor import Tensor


def _shape(shape, what: str) -> tuple:
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    if isinstance(shape, (builtins.int, np.integer)):
        return (builtins.int(shape),)
    try:
        return tuple(builtins.int(s) for s in shape)
    except (TypeError, ValueError):
        raise ShapeError(f"{what}: shape must be ints, got {shape!r}") from None


def _dims(x: Tensor, axis, what: str) -> tuple:
    if axis is None:
        return tuple(builtins.range(x.ndim))
    if isinstance(axis, Tensor):
        axis = axis.tolist()
    if isinstance(axis, (list, tuple)):
        dims = tuple(builtins.int(a) for a in axis)
    else:
        dims = (builtins.int(axis),)
    for a in dims:
        if not -x.ndim <= a < max(x.ndim, 1):
            raise ShapeError(
                f"{what}: axis {a} is out of range for a tensor of rank {x.ndim} "
                f"(shape {tuple(x.shape)})"
            )
    return dims
