"""Argument helpers the shape functions share: a shape given as ints or one sequence, dims
wrapped and checked for repeats, and ``infer_shape`` (the single ``-1`` of a reshape).

>>> infer_shape((2, -1), 6, "view", (3, 2))
(2, 3)
"""

from __future__ import annotations

from math import prod

from ..._errors import DTypeError, ShapeError
from ..._shape import wrap_dim


def _shape_arg(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    if type(shape) is tuple and all(type(s) is int for s in shape):
        return shape
    try:
        return tuple(int(s) for s in shape)
    except TypeError:
        raise DTypeError(f"expected a shape of integers, got {shape!r}") from None


def _dims_arg(dims, ndim: int, op: str) -> tuple:
    if isinstance(dims, int):
        dims = (dims,)
    out = tuple(wrap_dim(int(d), ndim, op) for d in dims)
    if len(set(out)) != len(out):
        raise ShapeError(f"{op}: dim {list(dims)} appears multiple times in the list of dims")
    return out


def infer_shape(shape: tuple, numel: int, op: str, src: tuple) -> tuple:
    """Fill in a single -1 in ``shape`` so it holds ``numel`` elements."""
    known = prod(shape)
    if known == numel and known >= 0 and min(shape, default=0) >= 0:
        return shape
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise ShapeError(f"{op}: only one dimension can be inferred (-1), got shape {list(shape)}")
    for s in shape:
        if s < -1:
            raise ShapeError(f"{op}: invalid shape dimension {s} in {list(shape)}")
    if unknown:
        known = -known
        if known == 0 or numel % known:
            raise ShapeError(
                f"{op}: shape {list(shape)} is invalid for input of shape {list(src)} "
                f"({numel} elements)"
            )
        return shape[: unknown[0]] + (numel // known,) + shape[unknown[0] + 1 :]
    raise ShapeError(
        f"{op}: shape {list(shape)} is invalid for input of shape {list(src)} ({numel} elements)"
    )
