"""Elementwise primitives: unary math, binary arithmetic, comparisons, where, cast.

Binary primitives take inputs of one dtype (the public functions in ``ember.functions``
promote first) and broadcast; their vjps reduce gradients back with ``sum_to``.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(MUL, ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
tensor([3., 8.])
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import dtypes as _dt
from .._shape import broadcast_shapes
from .base import Op, Spec, apply
from .broadcast import sum_to

# -- helpers for vjps: primitives on same-dtype tensors, no promotion ----------------------------


def add(a, b):
    return apply(ADD, a, b)


def mul(a, b):
    return apply(MUL, a, b)


def neg(a):
    return apply(NEG, a)


def div(a, b):
    return apply(DIV, a, b)


def cast(x, dtype: _dt.DType):
    """``x`` converted to ``dtype`` (itself when it already has it)."""
    if x.dtype is dtype:
        return x
    return apply(Cast(dtype), x)


def const_like(x, value):
    """A 0-d constant with ``x``'s dtype and device."""
    from .._tensor import Tensor

    xp = x.device.xp
    return Tensor._make(xp.asarray(value, dtype=x._data.dtype))


# -- unary ------------------------------------------------------------------------------------


class Unary(Op):
    def infer(self, x):
        return Spec(tuple(x.shape), x.dtype)


@dataclass(frozen=True)
class Neg(Unary):
    def forward(self, xp, x):
        return xp.negative(x)

    def vjp(self, g, out, x):
        return (neg(g),)


@dataclass(frozen=True)
class Exp(Unary):
    saves_output = True

    def forward(self, xp, x):
        return xp.exp(x)

    def vjp(self, g, out, x):
        return (mul(g, out),)


@dataclass(frozen=True)
class Log(Unary):
    saves_inputs = True

    def forward(self, xp, x):
        return xp.log(x)

    def vjp(self, g, out, x):
        return (div(g, x),)


@dataclass(frozen=True)
class Tanh(Unary):
    saves_output = True

    def forward(self, xp, x):
        return xp.tanh(x)

    def vjp(self, g, out, x):
        one = const_like(out, 1)
        return (mul(g, add(one, neg(mul(out, out)))),)


@dataclass(frozen=True)
class Relu(Unary):
    saves_output = True

    def forward(self, xp, x):
        return xp.maximum(x, 0)

    def vjp(self, g, out, x):
        return (mul(g, cast(apply(GT, out, const_like(out, 0)), out.dtype)),)


@dataclass(frozen=True)
class Clamp(Unary):
    """Clamp to ``[lo, hi]`` (either may be None); the gradient passes where lo <= x <= hi."""

    lo: float | None = None
    hi: float | None = None
    saves_inputs = True

    def forward(self, xp, x):
        if self.hi is None:
            return xp.maximum(x, xp.asarray(self.lo, dtype=x.dtype))
        if self.lo is None:
            return xp.minimum(x, xp.asarray(self.hi, dtype=x.dtype))
        return xp.clip(x, xp.asarray(self.lo, dtype=x.dtype), xp.asarray(self.hi, dtype=x.dtype))

    def vjp(self, g, out, x):
        mask = apply(ClampMask(self.lo, self.hi), x)
        return (mul(g, cast(mask, g.dtype)),)


@dataclass(frozen=True)
class ClampMask(Unary):
    lo: float | None = None
    hi: float | None = None
    differentiable = False

    def forward(self, xp, x):
        keep = xp.ones(x.shape, dtype=bool)
        if self.lo is not None:
            keep &= x >= self.lo
        if self.hi is not None:
            keep &= x <= self.hi
        return keep

    def infer(self, x):
        return Spec(tuple(x.shape), _dt.bool_)


@dataclass(frozen=True)
class Cast(Op):
    dtype: _dt.DType

    def forward(self, xp, x):
        return x.astype(self.dtype.np)

    def infer(self, x):
        return Spec(tuple(x.shape), self.dtype)

    def vjp(self, g, out, x):
        if not x.dtype.is_floating_point:
            return (None,)
        return (cast(g, x.dtype),)


# -- binary -----------------------------------------------------------------------------------


class Binary(Op):
    def infer(self, a, b):
        return Spec(broadcast_shapes(self.name.lower(), a.shape, b.shape), a.dtype)


@dataclass(frozen=True)
class Add(Binary):
    def forward(self, xp, a, b):
        return a + b

    def vjp(self, g, out, a, b):
        return (
            sum_to(g, tuple(a.shape)) if a._requires_grad else None,
            sum_to(g, tuple(b.shape)) if b._requires_grad else None,
        )


@dataclass(frozen=True)
class Sub(Binary):
    def forward(self, xp, a, b):
        return a - b

    def vjp(self, g, out, a, b):
        return (
            sum_to(g, tuple(a.shape)) if a._requires_grad else None,
            sum_to(neg(g), tuple(b.shape)) if b._requires_grad else None,
        )


@dataclass(frozen=True)
class Mul(Binary):
    saves_inputs = True

    def forward(self, xp, a, b):
        return a * b

    def vjp(self, g, out, a, b):
        return (
            sum_to(mul(g, b), tuple(a.shape)) if a._requires_grad else None,
            sum_to(mul(g, a), tuple(b.shape)) if b._requires_grad else None,
        )


@dataclass(frozen=True)
class Div(Binary):
    saves_inputs = True

    def forward(self, xp, a, b):
        return a / b

    def vjp(self, g, out, a, b):
        ga = div(g, b)
        return (
            sum_to(ga, tuple(a.shape)) if a._requires_grad else None,
            sum_to(neg(div(mul(ga, a), b)), tuple(b.shape)) if b._requires_grad else None,
        )


@dataclass(frozen=True)
class Pow(Binary):
    """``a ** b``; the exponent's gradient uses log(a) and is 0 where a == 0 (as in PyTorch)."""

    saves_inputs = True

    def forward(self, xp, a, b):
        return xp.power(a, b)

    def vjp(self, g, out, a, b):
        ga = gb = None
        if a._requires_grad:
            one = const_like(b, 1)
            ga = sum_to(mul(g, mul(b, pow_(a, add(b, neg(one))))), tuple(a.shape))
        if b._requires_grad:
            safe_log = apply(LogOrZero(), a)
            gb = sum_to(mul(g, mul(pow_(a, b), safe_log)), tuple(b.shape))
        return ga, gb


def pow_(a, b):
    return apply(POW, a, b)


@dataclass(frozen=True)
class LogOrZero(Unary):
    """log(x) where x > 0, else 0: the exponent gradient of pow at a == 0."""

    saves_inputs = True

    def forward(self, xp, x):
        return xp.where(x > 0, xp.log(xp.where(x > 0, x, 1)), 0).astype(x.dtype)

    def vjp(self, g, out, x):
        return (div(g, x),)


class Compare(Binary):
    differentiable = False

    def infer(self, a, b):
        return Spec(broadcast_shapes(self.name.lower(), a.shape, b.shape), _dt.bool_)


@dataclass(frozen=True)
class Gt(Compare):
    def forward(self, xp, a, b):
        return a > b


ADD, SUB, MUL, DIV, POW, NEG, GT = Add(), Sub(), Mul(), Div(), Pow(), Neg(), Gt()
