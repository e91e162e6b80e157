"""Selecting ops: ``where``, the NaN-propagating ``maximum`` / ``minimum``, and clamping to
number or tensor bounds.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(Clamp(lo=0.0, hi=1.0), ember.tensor([-1.0, 0.5, 2.0]))
tensor([0.0000, 0.5000, 1.0000])
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._shape import broadcast_shapes
from ..base import Spec, apply
from ..broadcast import sum_to
from .arithmetic import mul
from .compare import EQ, GE, GT, LE, LOGICAL_AND, LOGICAL_OR, LT
from .kinds import Binary, Elementwise, Unary, const_like, copy_into, substitute


def where(cond, a, b):
    return apply(WHERE, cond, a, b)


@dataclass(frozen=True)
class Where(Elementwise):
    """``a`` where ``cond`` else ``b`` (cond bool; a and b of one dtype; all broadcast)."""

    scalar = "y if x else z"
    saves_inputs = True  # the vjp reads cond

    def forward(self, xp, cond, a, b):
        return xp.where(cond, a, b)

    def infer(self, cond, a, b):
        shape = broadcast_shapes("where", tuple(cond.shape), tuple(a.shape), tuple(b.shape))
        return Spec(shape, a.dtype)

    def vjp(self, g, out, cond, a, b):
        zero = const_like(g, 0)
        return (
            None,
            sum_to(where(cond, g, zero), tuple(a.shape)) if a._requires_grad else None,
            sum_to(where(cond, zero, g), tuple(b.shape)) if b._requires_grad else None,
        )


class _Extremum(Binary):
    """maximum / minimum: NaN propagates; at ties each input gets half the gradient."""

    saves_inputs = True

    def vjp(self, g, out, a, b):
        zero = const_like(g, 0)
        half = where(apply(EQ, a, b), mul(g, const_like(g, 0.5)), g)
        a_loses = apply(self.loser, a, b)  # a < b for maximum, a > b for minimum
        b_loses = apply(self.loser, b, a)
        return (
            sum_to(where(a_loses, zero, half), tuple(a.shape)) if a._requires_grad else None,
            sum_to(where(b_loses, zero, half), tuple(b.shape)) if b._requires_grad else None,
        )


@dataclass(frozen=True)
class Maximum(_Extremum):
    fname = "maximum"
    scalar = "x if x >= y or x != x else y"

    @property
    def loser(self):
        return LT

    def forward(self, xp, a, b, out=None):
        return xp.maximum(a, b, out=out)


@dataclass(frozen=True)
class Minimum(_Extremum):
    fname = "minimum"
    scalar = "x if x <= y or x != x else y"

    @property
    def loser(self):
        return GT

    def forward(self, xp, a, b, out=None):
        return xp.minimum(a, b, out=out)


@dataclass(frozen=True)
class Clamp(Unary):
    """Clamp to ``[lo, hi]`` (either may be None); the gradient passes where lo <= x <= hi."""

    lo: float | None = None
    hi: float | None = None
    saves_inputs = True
    node_name = "ClampBackward1"  # PyTorch's clamp with number bounds

    @property
    def scalar(self) -> str:
        """``maximum`` with ``lo``, then ``minimum`` with ``hi``."""
        e = "x"
        if self.lo is not None:
            e = f"({substitute(Maximum.scalar, e, 'lo')})"
        if self.hi is not None:
            e = f"({substitute(Minimum.scalar, e, 'hi')})"
        return e

    def forward(self, xp, x, out=None):
        r = x
        if self.lo is not None:
            r = xp.maximum(r, xp.asarray(self.lo, dtype=x.dtype), out=out)
        if self.hi is not None:
            r = xp.minimum(r, xp.asarray(self.hi, dtype=x.dtype), out=out)
        return copy_into(xp, x, out) if r is x else r

    def vjp(self, g, out, x):  # g where lo <= x <= hi, +0.0 (PyTorch's) elsewhere
        return (apply(ClampGrad(self.lo, self.hi), g, x),)


@dataclass(frozen=True)
class ClampGrad(Elementwise):
    """``g if lo <= x <= hi else 0`` (either bound may be None): ``Clamp``'s gradient in one op,
    PyTorch's bit for bit (``g``'s own bits where it passes, +0.0 where not, and where ``x`` is
    NaN). It clears ``g``'s bits with a mask, as ``ReluGrad`` does (NumPy's ``where`` is slower)."""

    lo: float | None = None
    hi: float | None = None
    saves_inputs = True

    numpy_passes = 4  # with numba, a compiled graph runs it as one kernel (passes.fuse)

    @property
    def scalar(self) -> str:
        keep = [c for c, b in (("y >= lo", self.lo), ("y <= hi", self.hi)) if b is not None]
        return f"x if {' and '.join(keep)} else 0" if keep else "x"

    def forward(self, xp, g, x, out=None):
        keep = xp.ones(x.shape, dtype=bool) if self.lo is None else xp.greater_equal(x, self.lo)
        if self.hi is not None:
            keep &= xp.less_equal(x, self.hi)
        bits = xp.dtype(f"int{8 * g.dtype.itemsize}")
        ones = xp.negative(keep.view(xp.uint8), dtype=bits)  # all ones where kept, else 0
        r = xp.bitwise_and(g.view(bits), ones, out=None if out is None else out.view(bits))
        return r.view(g.dtype)

    def infer(self, g, x):
        return Spec(tuple(g.shape), g.dtype)

    def vjp(self, h, _, g, x):
        return (apply(ClampGrad(self.lo, self.hi), h, x) if g._requires_grad else None, None)


@dataclass(frozen=True)
class ClampTensor(Elementwise):
    """``min(max(x, lo), hi)`` with tensor bounds; inputs are ``x`` then the bounds present.

    Gradients as PyTorch's: x's where lo <= x <= hi; lo's where x < lo < hi; hi's where
    x > hi or hi < lo (the result is hi when the bounds cross).
    """

    has_lo: bool = True
    has_hi: bool = True
    node_name = "ClampBackward0"  # PyTorch's clamp with tensor bounds
    saves_inputs = True

    def _bounds(self, rest):
        lo = rest[0] if self.has_lo else None
        hi = rest[-1] if self.has_hi else None
        return lo, hi

    def forward(self, xp, x, *rest):
        lo, hi = self._bounds(rest)
        if lo is not None:
            x = xp.maximum(x, lo)
        if hi is not None:
            x = xp.minimum(x, hi)
        return x

    def infer(self, x, *rest):
        shape = broadcast_shapes("clamp", tuple(x.shape), *(tuple(r.shape) for r in rest))
        return Spec(shape, x.dtype)

    def vjp(self, g, out, x, *rest):
        lo, hi = self._bounds(rest)
        zero = const_like(g, 0)
        keep = None
        if lo is not None:
            keep = apply(GE, x, lo)
        if hi is not None:
            below = apply(LE, x, hi)
            keep = below if keep is None else apply(LOGICAL_AND, keep, below)
        grads = [sum_to(where(keep, g, zero), tuple(x.shape)) if x._requires_grad else None]
        if lo is not None:
            gl = None
            if lo._requires_grad:
                take = apply(LT, x, lo)
                if hi is not None:
                    take = apply(LOGICAL_AND, take, apply(LT, lo, hi))
                gl = sum_to(where(take, g, zero), tuple(lo.shape))
            grads.append(gl)
        if hi is not None:
            gh = None
            if hi._requires_grad:
                take = apply(GT, x, hi)
                if lo is not None:
                    take = apply(LOGICAL_OR, take, apply(LT, hi, lo))
                gh = sum_to(where(take, g, zero), tuple(hi.shape))
            grads.append(gh)
        return tuple(grads)


WHERE = Where()
