"""Unary math (exp and log families, roots, trigonometric and hyperbolic functions), the
tensor power ``a ** b``, ``atan2`` and rounding.

Ops that need floats get floats: the public functions in ``ember.functions`` convert integers
first. Rounding ops pass integers through unchanged and have a zero gradient.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(EXP, ember.zeros(2))
tensor([1., 1.])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...dtypes import is_float_np
from ..base import apply
from ..broadcast import sum_to
from .arithmetic import add, div, mul, neg, sub, zeros_like
from .compare import EQ, GE, LOGICAL_AND
from .kinds import Binary, Unary, const_like, copy_into
from .select import where


@dataclass(frozen=True)
class Exp(Unary):
    scalar = "exp(x)"
    saves_output = True

    def forward(self, xp, x, out=None):
        return xp.exp(x, out=out)

    def vjp(self, g, out, x):
        return (mul(g, out),)


@dataclass(frozen=True)
class Expm1(Unary):
    saves_output = True

    def forward(self, xp, x, out=None):
        return xp.expm1(x, out=out)

    def vjp(self, g, out, x):
        return (mul(g, add(out, const_like(out, 1))),)


@dataclass(frozen=True)
class Log(Unary):
    scalar = "log(x)"
    saves_inputs = True

    def forward(self, xp, x, out=None):
        return xp.log(x, out=out)

    def vjp(self, g, out, x):
        return (div(g, x),)


@dataclass(frozen=True)
class Log1p(Unary):
    saves_inputs = True

    def forward(self, xp, x, out=None):
        return xp.log1p(x, out=out)

    def vjp(self, g, out, x):
        return (div(g, add(x, const_like(x, 1))),)


@dataclass(frozen=True)
class Log2(Unary):
    """A primitive (not log(x) / log(2)) so powers of two give exact results."""

    saves_inputs = True

    def forward(self, xp, x, out=None):
        return xp.log2(x, out=out)

    def vjp(self, g, out, x):
        return (div(g, mul(x, const_like(x, math.log(2.0)))),)


@dataclass(frozen=True)
class Log10(Unary):
    saves_inputs = True

    def forward(self, xp, x, out=None):
        return xp.log10(x, out=out)

    def vjp(self, g, out, x):
        return (div(g, mul(x, const_like(x, math.log(10.0)))),)


@dataclass(frozen=True)
class Sqrt(Unary):
    scalar = "sqrt(x)"
    saves_output = True

    def forward(self, xp, x, out=None):
        return xp.sqrt(x, out=out)

    def vjp(self, g, out, x):
        return (div(g, mul(out, const_like(out, 2))),)


@dataclass(frozen=True)
class Rsqrt(Unary):
    scalar = "1 / sqrt(x)"
    saves_output = True

    def forward(self, xp, x, out=None):
        return xp.reciprocal(xp.sqrt(x, out=out), out=out)

    def vjp(self, g, out, x):
        cube = mul(out, mul(out, out))
        return (mul(g, mul(cube, const_like(out, -0.5))),)


@dataclass(frozen=True)
class Sin(Unary):
    saves_inputs = True

    def forward(self, xp, x, out=None):
        return xp.sin(x, out=out)

    def vjp(self, g, out, x):
        return (mul(g, apply(COS, x)),)


@dataclass(frozen=True)
class Cos(Unary):
    saves_inputs = True

    def forward(self, xp, x, out=None):
        return xp.cos(x, out=out)

    def vjp(self, g, out, x):
        return (neg(mul(g, apply(SIN, x))),)


@dataclass(frozen=True)
class Tan(Unary):
    saves_output = True

    def forward(self, xp, x, out=None):
        return xp.tan(x, out=out)

    def vjp(self, g, out, x):
        return (mul(g, add(const_like(out, 1), mul(out, out))),)


@dataclass(frozen=True)
class Sinh(Unary):
    saves_inputs = True

    def forward(self, xp, x, out=None):
        return xp.sinh(x, out=out)

    def vjp(self, g, out, x):
        return (mul(g, apply(COSH, x)),)


@dataclass(frozen=True)
class Cosh(Unary):
    saves_inputs = True

    def forward(self, xp, x, out=None):
        return xp.cosh(x, out=out)

    def vjp(self, g, out, x):
        return (mul(g, apply(SINH, x)),)


def _one_minus_square(x):
    return sub(const_like(x, 1), mul(x, x))


@dataclass(frozen=True)
class Asin(Unary):
    saves_inputs = True

    def forward(self, xp, x, out=None):
        return xp.arcsin(x, out=out)

    def vjp(self, g, out, x):
        return (div(g, apply(SQRT, _one_minus_square(x))),)


@dataclass(frozen=True)
class Acos(Unary):
    saves_inputs = True

    def forward(self, xp, x, out=None):
        return xp.arccos(x, out=out)

    def vjp(self, g, out, x):
        return (neg(div(g, apply(SQRT, _one_minus_square(x)))),)


@dataclass(frozen=True)
class Atan(Unary):
    saves_inputs = True

    def forward(self, xp, x, out=None):
        return xp.arctan(x, out=out)

    def vjp(self, g, out, x):
        return (div(g, add(const_like(x, 1), mul(x, x))),)


@dataclass(frozen=True)
class Tanh(Unary):
    scalar = "tanh(x)"
    saves_output = True

    def forward(self, xp, x, out=None):
        return xp.tanh(x, out=out)

    def vjp(self, g, out, x):
        one = const_like(out, 1)
        return (mul(g, add(one, neg(mul(out, out)))),)


@dataclass(frozen=True)
class Pow(Binary):
    """``a ** b``, with PyTorch's gradients: the base's is 0 where b == 0, the exponent's
    is 0 where a == 0 and b >= 0 (and NaN for negative bases)."""

    saves_inputs = True
    scalar = "x ** y"
    node_name = "PowBackward1"  # PyTorch's pow with a tensor exponent

    def forward(self, xp, a, b):
        return xp.power(a, b)

    def vjp(self, g, out, a, b):
        ga = gb = None
        if a._requires_grad:
            zero = const_like(b, 0)
            d = mul(b, pow_(a, sub(b, const_like(b, 1))))
            ga = sum_to(mul(g, where(apply(EQ, b, zero), zero, d)), tuple(a.shape))
        if b._requires_grad:
            zero = const_like(a, 0)
            at_zero = apply(LOGICAL_AND, apply(EQ, a, zero), apply(GE, b, const_like(b, 0)))
            # log(1) = 0 where the gradient is 0 by definition, so no inf/NaN leaks through
            safe_log = apply(LOG, where(at_zero, const_like(a, 1), a))
            gb = sum_to(mul(g, mul(pow_(a, b), safe_log)), tuple(b.shape))
        return ga, gb


def pow_(a, b):
    return apply(POW, a, b)


@dataclass(frozen=True)
class LogOrZero(Unary):
    """log(x) where x > 0, else 0."""

    saves_inputs = True

    def forward(self, xp, x):
        return xp.where(x > 0, xp.log(xp.where(x > 0, x, 1)), 0).astype(x.dtype)

    def vjp(self, g, out, x):
        return (div(g, x),)


@dataclass(frozen=True)
class Atan2(Binary):
    fname = "atan2"
    saves_inputs = True

    def forward(self, xp, a, b):
        return xp.arctan2(a, b)

    def vjp(self, g, out, a, b):
        r = div(g, add(mul(a, a), mul(b, b)))
        return (
            sum_to(mul(r, b), tuple(a.shape)) if a._requires_grad else None,
            sum_to(neg(mul(r, a)), tuple(b.shape)) if b._requires_grad else None,
        )


# -- rounding ---------------------------------------------------------------------------------


class Rounding(Unary):
    """Piecewise-constant ops: integers pass through unchanged, the gradient is zero."""

    def vjp(self, g, out, x):
        return (zeros_like(g),)


@dataclass(frozen=True)
class Floor(Rounding):
    def forward(self, xp, x, out=None):
        return xp.floor(x, out=out) if is_float_np(x.dtype) else copy_into(xp, x, out)


@dataclass(frozen=True)
class Ceil(Rounding):
    def forward(self, xp, x, out=None):
        return xp.ceil(x, out=out) if is_float_np(x.dtype) else copy_into(xp, x, out)


@dataclass(frozen=True)
class Trunc(Rounding):
    def forward(self, xp, x, out=None):
        return xp.trunc(x, out=out) if is_float_np(x.dtype) else copy_into(xp, x, out)


@dataclass(frozen=True)
class Round(Rounding):
    """Round half to even, optionally to ``decimals`` places (as PyTorch and NumPy)."""

    decimals: int = 0

    def forward(self, xp, x, out=None):
        if not is_float_np(x.dtype):
            return copy_into(xp, x, out)
        if self.decimals == 0:
            return xp.rint(x, out=out)
        r = xp.round(x, self.decimals).astype(x.dtype, copy=False)
        return r if out is None else copy_into(xp, r, out)


EXP, LOG, SQRT, POW = Exp(), Log(), Sqrt(), Pow()
SIN, COS, SINH, COSH = Sin(), Cos(), Sinh(), Cosh()
