"""Reductions: sum (and more to come).

>>> import ember
>>> ember.sum(ember.ones(2, 3), dim=1)
tensor([3., 3.])
"""

from __future__ import annotations

from .. import dtypes as _dt
from .._shape import wrap_dim
from .._tensor import Tensor
from ..ops import reduce as R
from ..ops.base import apply
from ..ops.elementwise import cast


def normalize_dims(dim, ndim: int, op: str) -> tuple | None:
    """``dim`` (int, sequence or None) as a sorted tuple of non-negative dims, or None for all."""
    if dim is None:
        return None
    if isinstance(dim, int):
        return (wrap_dim(dim, ndim, op),)
    dims = tuple(sorted({wrap_dim(d, ndim, op) for d in dim}))
    return dims or None


def sum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Sum of elements over ``dim`` (all when None); bool and integer inputs sum as int64.

    >>> import ember
    >>> ember.sum(ember.tensor([[1, 2], [3, 4]]))
    tensor(10)
    """
    x = input
    if dtype is not None:
        x = cast(x, _dt.to_dtype(dtype))
    elif not x.dtype.is_floating_point:
        x = cast(x, _dt.int64)
    return apply(R.Sum(normalize_dims(dim, x.ndim, "sum"), keepdim), x)


__all__ = ["sum"]
TENSOR_METHODS = {"sum": sum}
