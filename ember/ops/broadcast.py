"""Broadcasting and its gradient: ``Expand`` and ``SumTo`` are each other's vjp.

This is the one place broadcasting's gradient lives: binary ops call ``sum_to`` on each input
gradient whose shape differs from the input's.

>>> import ember
>>> from ember.ops.broadcast import sum_to
>>> sum_to(ember.ones(2, 3), (1, 3))
tensor([[2., 2., 2.]])
"""

from __future__ import annotations

from dataclasses import dataclass

from .._errors import ShapeError
from .._shape import broadcast_shapes
from .base import Op, Spec, apply


@dataclass(frozen=True)
class Expand(Op):
    """Broadcast to ``shape`` (a read-only view, like ``torch.expand``)."""

    shape: tuple
    is_view = True
    read_only_view = True

    def forward(self, xp, x):
        return xp.broadcast_to(x, self.shape)

    def infer(self, x):
        if (
            len(self.shape) < x.ndim
            or broadcast_shapes("expand", x.shape, self.shape) != self.shape
        ):
            raise ShapeError(
                f"expand: the shape {tuple(x.shape)} cannot be expanded to {self.shape}: "
                "each dimension must match or be 1, and new dimensions go in front"
            )
        return Spec(self.shape, x.dtype)

    def vjp(self, g, out, x):
        return (sum_to(g, tuple(x.shape)),)


@dataclass(frozen=True)
class SumTo(Op):
    """Sum a broadcast array back down to ``shape``."""

    shape: tuple

    def forward(self, xp, x):
        lead = x.ndim - len(self.shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, s in enumerate(self.shape) if s == 1 and x.shape[lead + i] != 1
        )
        out = x.sum(axis=axes, keepdims=True) if axes else x
        return out.reshape(self.shape)

    def infer(self, x):
        if broadcast_shapes("sum_to", x.shape, self.shape) != tuple(x.shape):
            raise ShapeError(f"sum_to: cannot sum shape {tuple(x.shape)} down to {self.shape}")
        return Spec(self.shape, x.dtype)

    def vjp(self, g, out, x):
        return (expand(g, tuple(x.shape)),)


def sum_to(g, shape: tuple):
    """``g`` summed over the dimensions that broadcasting added or stretched, to ``shape``."""
    if tuple(g.shape) == shape:
        return g
    return apply(SumTo(shape), g)


def expand(x, shape: tuple):
    """``x`` broadcast to ``shape`` (no-op when it already has it)."""
    if tuple(x.shape) == shape:
        return x
    return apply(Expand(shape), x)
