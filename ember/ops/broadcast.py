"""Broadcasting and its gradient: ``Expand`` and ``SumTo`` are each other's vjp.

This is the one place broadcasting's gradient lives: binary ops call ``sum_to`` on each input
gradient whose shape differs from the input's.

>>> import ember
>>> from ember.ops.broadcast import sum_to
>>> sum_to(ember.ones(2, 3), (1, 3))
tensor([[2., 2., 2.]])
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from .. import dtypes as _dt
from .._errors import ShapeError
from .._shape import broadcast_shapes
from ..backend.kernels import sums as _sums
from ..backend.overrides import register
from . import _layout_sums
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

    def axes(self, shape: tuple) -> tuple:
        """The axes of an input of ``shape`` that are summed (kept as size 1)."""
        return _summed_axes(shape, self.shape)

    def forward(self, xp, x):
        axes = _summed_axes(x.shape, self.shape)
        if not axes:
            return x.reshape(self.shape)
        out = _dt.widen_half(x).sum(axis=axes)  # float32 sums, as Sum's
        return (out if out.dtype == x.dtype else out.astype(x.dtype)).reshape(self.shape)

    def infer(self, x):
        if broadcast_shapes("sum_to", x.shape, self.shape) != tuple(x.shape):
            raise ShapeError(f"sum_to: cannot sum shape {tuple(x.shape)} down to {self.shape}")
        return Spec(self.shape, x.dtype)

    def vjp(self, g, out, x):
        return (expand(g, tuple(x.shape)),)


@register(SumTo, "cuda")
def _sum_to_cuda(op, xp, x):
    """A bias gradient's sum over the leading axes as one cuBLAS product (``leading_sum``)."""
    out = _sums.leading_sum(xp, x, op.axes(x.shape), True)
    return out if out is NotImplemented else out.reshape(op.shape)


@register(SumTo, "cpu")
def _sum_to_cpu(op, xp, x):
    """A bias gradient's sum as matrix-vector products where x's layout makes NumPy's sum slow
    (``_layout_sums``)."""
    out = _layout_sums.sum_by_products(x, op.axes(x.shape))
    return NotImplemented if out is None else out.reshape(op.shape)


@functools.lru_cache(maxsize=1024)
def _summed_axes(shape: tuple, to: tuple) -> tuple:
    lead = len(shape) - len(to)
    return tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(to) if s == 1 and shape[lead + i] != 1
    )


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
