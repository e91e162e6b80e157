"""Reduction primitives.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(Sum((1,), False), ember.ones(2, 3))
tensor([3., 3.])
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Op, Spec, apply
from .broadcast import expand


def reduced_shape(shape: tuple, axis: tuple | None, keepdim: bool) -> tuple:
    """``shape`` with ``axis`` (normalized, or None for all) removed or kept as 1."""
    if axis is None:
        return tuple(1 for _ in shape) if keepdim else ()
    if keepdim:
        return tuple(1 if i in axis else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axis)


def keepdim_shape(shape: tuple, axis: tuple | None) -> tuple:
    return reduced_shape(shape, axis, True)


@dataclass(frozen=True)
class Sum(Op):
    """Sum over ``axis`` (a tuple of non-negative dims, or None for all)."""

    axis: tuple | None = None
    keepdim: bool = False

    def forward(self, xp, x):
        return x.sum(axis=self.axis, keepdims=self.keepdim)

    def infer(self, x):
        return Spec(reduced_shape(tuple(x.shape), self.axis, self.keepdim), x.dtype)

    def vjp(self, g, out, x):
        shape = tuple(x.shape)
        if not self.keepdim:
            from .movement import reshape

            g = reshape(g, keepdim_shape(shape, self.axis))
        return (expand(g, shape),)


def sum_(x, axis: tuple | None = None, keepdim: bool = False):
    return apply(Sum(axis, keepdim), x)
