"""Elementwise primitives: unary math, binary arithmetic, comparisons, logic, where, cast.

Binary primitives take inputs of one dtype (the public functions in ``ember.functions``
promote first) and broadcast; their vjps reduce gradients back with ``sum_to``. Ops that need
floats (exp, sqrt, erf...) get floats: the public functions convert integers first.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(MUL, ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
tensor([3., 8.])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import dtypes as _dt
from .._errors import DTypeError, EmberError
from .._shape import broadcast_shapes
from ..backend.arrays import errstate
from ..dtypes import is_float_np
from .base import Op, Spec, apply
from .broadcast import sum_to

# -- helpers for vjps: primitives on same-dtype tensors, no promotion ----------------------------


def add(a, b):
    return apply(ADD, a, b)


def sub(a, b):
    return apply(SUB, a, b)


def mul(a, b):
    return apply(MUL, a, b)


def neg(a):
    return apply(NEG, a)


def div(a, b):
    return apply(DIV, a, b)


def where(cond, a, b):
    return apply(WHERE, cond, a, b)


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


def zeros_like(x):
    """Zeros shaped like ``x``, with no history: the gradient of piecewise-constant ops."""
    return apply(ZEROS_LIKE, x)


def _mask_to(mask, like):
    """A bool mask as 0/1 in ``like``'s dtype (a constant: masks carry no gradient)."""
    return cast(mask, like.dtype)


def _int_zero_division(xp, b, name: str) -> None:
    if b.dtype.kind in "iub" and not bool(xp.all(b)):
        raise EmberError(f"{name}: ZeroDivisionError (integer division by zero)")


def _require_integral(name: str, *specs) -> None:
    for s in specs:
        if s.dtype.is_floating_point:
            raise DTypeError(
                f'{name}: "{name}_cpu" not implemented for '
                f"'{_torch_name(s.dtype)}' ({s.dtype}): bitwise ops need integer or bool tensors"
            )


def _torch_name(dt: _dt.DType) -> str:
    return {
        "float16": "Half",
        "bfloat16": "BFloat16",
        "float32": "Float",
        "float64": "Double",
        "bool": "Bool",
        "uint8": "Byte",
        "int8": "Char",
        "int16": "Short",
        "int32": "Int",
        "int64": "Long",
    }[dt.name]


# -- unary ------------------------------------------------------------------------------------


class Unary(Op):
    def infer(self, x):
        return Spec(tuple(x.shape), x.dtype)


class Predicate(Unary):
    """A unary test giving a bool tensor (isnan, logical_not...): no gradient."""

    differentiable = False

    def infer(self, x):
        return Spec(tuple(x.shape), _dt.bool_)


@dataclass(frozen=True)
class ZerosLike(Unary):
    differentiable = False

    def forward(self, xp, x):
        return xp.zeros_like(x)


@dataclass(frozen=True)
class Neg(Unary):
    def forward(self, xp, x):
        return xp.negative(x)

    def infer(self, x):
        if x.dtype is _dt.bool_:
            raise DTypeError(
                "neg: Negation, the `-` operator, on a bool tensor is not supported. If you are "
                "trying to invert a mask, use the `~` or `logical_not()` operator instead."
            )
        return Spec(tuple(x.shape), x.dtype)

    def vjp(self, g, out, x):
        return (neg(g),)


@dataclass(frozen=True)
class Abs(Unary):
    saves_inputs = True

    def forward(self, xp, x):
        return xp.abs(x)

    def vjp(self, g, out, x):
        return (mul(g, apply(SIGN, x)),)


@dataclass(frozen=True)
class Sign(Unary):
    """-1, 0 or 1 (0 for NaN, as PyTorch); its gradient is zero."""

    def forward(self, xp, x):
        if x.dtype.kind == "b":
            return x.copy()
        s = xp.sign(x)
        if is_float_np(x.dtype):
            s = xp.where(s != s, xp.zeros((), x.dtype), s)
        return s

    def vjp(self, g, out, x):
        return (zeros_like(g),)


@dataclass(frozen=True)
class Exp(Unary):
    saves_output = True

    def forward(self, xp, x):
        return xp.exp(x)

    def vjp(self, g, out, x):
        return (mul(g, out),)


@dataclass(frozen=True)
class Expm1(Unary):
    saves_output = True

    def forward(self, xp, x):
        return xp.expm1(x)

    def vjp(self, g, out, x):
        return (mul(g, add(out, const_like(out, 1))),)


@dataclass(frozen=True)
class Log(Unary):
    saves_inputs = True

    def forward(self, xp, x):
        return xp.log(x)

    def vjp(self, g, out, x):
        return (div(g, x),)


@dataclass(frozen=True)
class Log1p(Unary):
    saves_inputs = True

    def forward(self, xp, x):
        return xp.log1p(x)

    def vjp(self, g, out, x):
        return (div(g, add(x, const_like(x, 1))),)


@dataclass(frozen=True)
class Log2(Unary):
    """A primitive (not log(x) / log(2)) so powers of two give exact results."""

    saves_inputs = True

    def forward(self, xp, x):
        return xp.log2(x)

    def vjp(self, g, out, x):
        return (div(g, mul(x, const_like(x, math.log(2.0)))),)


@dataclass(frozen=True)
class Log10(Unary):
    saves_inputs = True

    def forward(self, xp, x):
        return xp.log10(x)

    def vjp(self, g, out, x):
        return (div(g, mul(x, const_like(x, math.log(10.0)))),)


@dataclass(frozen=True)
class Sqrt(Unary):
    saves_output = True

    def forward(self, xp, x):
        return xp.sqrt(x)

    def vjp(self, g, out, x):
        return (div(g, mul(out, const_like(out, 2))),)


@dataclass(frozen=True)
class Rsqrt(Unary):
    saves_output = True

    def forward(self, xp, x):
        return xp.reciprocal(xp.sqrt(x))

    def vjp(self, g, out, x):
        cube = mul(out, mul(out, out))
        return (mul(g, mul(cube, const_like(out, -0.5))),)


@dataclass(frozen=True)
class Reciprocal(Unary):
    saves_output = True

    def forward(self, xp, x):
        return xp.reciprocal(x)

    def vjp(self, g, out, x):
        return (neg(mul(g, mul(out, out))),)


@dataclass(frozen=True)
class PowScalar(Unary):
    """``x ** exponent`` for a Python-number exponent (``x ** 2`` is the common case).

    A primitive beside ``Pow`` because NumPy's scalar-power fast paths (square, sqrt,
    reciprocal) need a Python number, and the gradient needs no log.
    """

    exponent: float = 2
    saves_inputs = True

    def forward(self, xp, x):
        out = x**self.exponent
        return out if out.dtype == x.dtype else out.astype(x.dtype)  # bfloat16 ** 0.5 -> float32

    def vjp(self, g, out, x):
        c = self.exponent
        if c == 0:
            return (zeros_like(g),)
        if c == 1:
            return (g,)
        d = x if c == 2 else apply(PowScalar(c - 1), x)
        return (mul(g, mul(d, const_like(x, c))),)


@dataclass(frozen=True)
class Sin(Unary):
    saves_inputs = True

    def forward(self, xp, x):
        return xp.sin(x)

    def vjp(self, g, out, x):
        return (mul(g, apply(COS, x)),)


@dataclass(frozen=True)
class Cos(Unary):
    saves_inputs = True

    def forward(self, xp, x):
        return xp.cos(x)

    def vjp(self, g, out, x):
        return (neg(mul(g, apply(SIN, x))),)


@dataclass(frozen=True)
class Tan(Unary):
    saves_output = True

    def forward(self, xp, x):
        return xp.tan(x)

    def vjp(self, g, out, x):
        return (mul(g, add(const_like(out, 1), mul(out, out))),)


@dataclass(frozen=True)
class Sinh(Unary):
    saves_inputs = True

    def forward(self, xp, x):
        return xp.sinh(x)

    def vjp(self, g, out, x):
        return (mul(g, apply(COSH, x)),)


@dataclass(frozen=True)
class Cosh(Unary):
    saves_inputs = True

    def forward(self, xp, x):
        return xp.cosh(x)

    def vjp(self, g, out, x):
        return (mul(g, apply(SINH, x)),)


def _one_minus_square(x):
    return sub(const_like(x, 1), mul(x, x))


@dataclass(frozen=True)
class Asin(Unary):
    saves_inputs = True

    def forward(self, xp, x):
        return xp.arcsin(x)

    def vjp(self, g, out, x):
        return (div(g, apply(SQRT, _one_minus_square(x))),)


@dataclass(frozen=True)
class Acos(Unary):
    saves_inputs = True

    def forward(self, xp, x):
        return xp.arccos(x)

    def vjp(self, g, out, x):
        return (neg(div(g, apply(SQRT, _one_minus_square(x)))),)


@dataclass(frozen=True)
class Atan(Unary):
    saves_inputs = True

    def forward(self, xp, x):
        return xp.arctan(x)

    def vjp(self, g, out, x):
        return (div(g, add(const_like(x, 1), mul(x, x))),)


@dataclass(frozen=True)
class Tanh(Unary):
    saves_output = True

    def forward(self, xp, x):
        return xp.tanh(x)

    def vjp(self, g, out, x):
        one = const_like(out, 1)
        return (mul(g, add(one, neg(mul(out, out)))),)


@dataclass(frozen=True)
class Sigmoid(Unary):
    """1 / (1 + exp(-x)); a primitive for its output-only gradient and to keep the
    overflow of exp(-x) for very negative x quiet."""

    saves_output = True

    def forward(self, xp, x):
        with errstate(xp, over="ignore"):  # exp(-x) overflows for x < -88 (float32): 0 is right
            return xp.reciprocal(xp.exp(-x) + 1)

    def vjp(self, g, out, x):
        return (mul(g, mul(out, sub(const_like(out, 1), out))),)


@dataclass(frozen=True)
class Relu(Unary):
    saves_output = True

    def forward(self, xp, x):
        return xp.maximum(x, 0)

    def vjp(self, g, out, x):
        return (apply(ReluGrad(), g, out),)


@dataclass(frozen=True)
class ReluGrad(Op):
    """``g`` where ``out > 0``, else 0 (PyTorch's threshold_backward): a primitive because
    NumPy's ``where`` is ~8x slower here than a mask product, on every ReLU network's hot path."""

    saves_inputs = True

    def forward(self, xp, g, out):
        return g * (out > 0)

    def infer(self, g, out):
        return Spec(tuple(g.shape), g.dtype)

    def vjp(self, h, _, g, out):
        return (apply(ReluGrad(), h, out) if g._requires_grad else None, None)


class Rounding(Unary):
    """Piecewise-constant ops: integers pass through unchanged, the gradient is zero."""

    def vjp(self, g, out, x):
        return (zeros_like(g),)


@dataclass(frozen=True)
class Floor(Rounding):
    def forward(self, xp, x):
        return xp.floor(x) if is_float_np(x.dtype) else x.copy()


@dataclass(frozen=True)
class Ceil(Rounding):
    def forward(self, xp, x):
        return xp.ceil(x) if is_float_np(x.dtype) else x.copy()


@dataclass(frozen=True)
class Trunc(Rounding):
    def forward(self, xp, x):
        return xp.trunc(x) if is_float_np(x.dtype) else x.copy()


@dataclass(frozen=True)
class Round(Rounding):
    """Round half to even, optionally to ``decimals`` places (as PyTorch and NumPy)."""

    decimals: int = 0

    def forward(self, xp, x):
        if not is_float_np(x.dtype):
            return x.copy()
        if self.decimals == 0:
            return xp.rint(x)
        return xp.round(x, self.decimals).astype(x.dtype, copy=False)


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
        return xp.minimum(
            xp.maximum(x, xp.asarray(self.lo, dtype=x.dtype)), xp.asarray(self.hi, dtype=x.dtype)
        )

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


@dataclass(frozen=True)
class IsNan(Predicate):
    def forward(self, xp, x):
        return xp.isnan(x)


@dataclass(frozen=True)
class IsInf(Predicate):
    def forward(self, xp, x):
        return xp.isinf(x)


@dataclass(frozen=True)
class IsFinite(Predicate):
    def forward(self, xp, x):
        return xp.isfinite(x)


@dataclass(frozen=True)
class LogicalNot(Predicate):
    def forward(self, xp, x):
        return xp.logical_not(x)


@dataclass(frozen=True)
class BitwiseNot(Unary):
    differentiable = False

    def forward(self, xp, x):
        return xp.invert(x)

    def infer(self, x):
        _require_integral("bitwise_not", x)
        return Spec(tuple(x.shape), x.dtype)


# -- binary -----------------------------------------------------------------------------------


class Binary(Op):
    fname = ""  # the public name, for messages (the class name lowercased when empty)

    def infer(self, a, b):
        name = self.fname or self.name.lower()
        return Spec(broadcast_shapes(name, tuple(a.shape), tuple(b.shape)), a.dtype)


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

    def infer(self, a, b):
        if a.dtype is _dt.bool_:
            raise DTypeError(
                "sub: Subtraction, the `-` operator, with two bool tensors is not supported. "
                "Use the `^` or `logical_xor()` operator instead."
            )
        return Binary.infer(self, a, b)

    def vjp(self, g, out, a, b):
        return (
            sum_to(g, tuple(a.shape)) if a._requires_grad else None,
            sum_to(neg(g), tuple(b.shape)) if b._requires_grad else None,
        )


@dataclass(frozen=True)
class Mul(Binary):
    saves_inputs = "cross"  # a is read only for b's gradient and b only for a's

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
class FloorDivide(Binary):
    """Division rounded down (Python's ``//``); its gradient is zero."""

    fname = "floor_divide"

    def forward(self, xp, a, b):
        _int_zero_division(xp, b, "floor_divide")
        return xp.floor_divide(a, b)

    def vjp(self, g, out, a, b):
        return (
            sum_to(zeros_like(g), tuple(a.shape)) if a._requires_grad else None,
            sum_to(zeros_like(g), tuple(b.shape)) if b._requires_grad else None,
        )


@dataclass(frozen=True)
class TruncDivide(FloorDivide):
    """Division rounded toward zero (C's ``/`` on integers); its gradient is zero."""

    fname = "div"

    def forward(self, xp, a, b):
        if is_float_np(a.dtype):
            return xp.trunc(a / b)
        _int_zero_division(xp, b, "div")
        q = xp.floor_divide(a, b)
        inexact = (xp.remainder(a, b) != 0) & ((a < 0) != (b < 0))
        return q + inexact.astype(q.dtype)


@dataclass(frozen=True)
class Remainder(Binary):
    """``a - floor(a / b) * b``: the result has the sign of ``b`` (Python's ``%``)."""

    fname = "remainder"
    saves_inputs = True

    def forward(self, xp, a, b):
        _int_zero_division(xp, b, "remainder")
        return xp.remainder(a, b)

    def vjp(self, g, out, a, b):
        gb = None
        if b._requires_grad:
            gb = sum_to(neg(mul(g, apply(FLOOR_DIVIDE, a, b))), tuple(b.shape))
        return (sum_to(g, tuple(a.shape)) if a._requires_grad else None, gb)


@dataclass(frozen=True)
class Fmod(Binary):
    """``a - trunc(a / b) * b``: the result has the sign of ``a`` (C's ``fmod``)."""

    fname = "fmod"
    saves_inputs = True

    def forward(self, xp, a, b):
        _int_zero_division(xp, b, "fmod")
        return xp.fmod(a, b)

    def vjp(self, g, out, a, b):
        gb = None
        if b._requires_grad:
            gb = sum_to(neg(mul(g, apply(TRUNC_DIVIDE, a, b))), tuple(b.shape))
        return (sum_to(g, tuple(a.shape)) if a._requires_grad else None, gb)


@dataclass(frozen=True)
class Pow(Binary):
    """``a ** b``, with PyTorch's gradients: the base's is 0 where b == 0, the exponent's
    is 0 where a == 0 and b >= 0 (and NaN for negative bases)."""

    saves_inputs = True

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

    @property
    def loser(self):
        return LT

    def forward(self, xp, a, b):
        return xp.maximum(a, b)


@dataclass(frozen=True)
class Minimum(_Extremum):
    fname = "minimum"

    @property
    def loser(self):
        return GT

    def forward(self, xp, a, b):
        return xp.minimum(a, b)


class Compare(Binary):
    differentiable = False

    def infer(self, a, b):
        name = self.fname or self.name.lower()
        return Spec(broadcast_shapes(name, tuple(a.shape), tuple(b.shape)), _dt.bool_)


@dataclass(frozen=True)
class Eq(Compare):
    def forward(self, xp, a, b):
        return xp.equal(a, b)


@dataclass(frozen=True)
class Ne(Compare):
    def forward(self, xp, a, b):
        return xp.not_equal(a, b)


@dataclass(frozen=True)
class Lt(Compare):
    def forward(self, xp, a, b):
        return xp.less(a, b)


@dataclass(frozen=True)
class Le(Compare):
    def forward(self, xp, a, b):
        return xp.less_equal(a, b)


@dataclass(frozen=True)
class Gt(Compare):
    def forward(self, xp, a, b):
        return xp.greater(a, b)


@dataclass(frozen=True)
class Ge(Compare):
    def forward(self, xp, a, b):
        return xp.greater_equal(a, b)


@dataclass(frozen=True)
class IsClose(Compare):
    """|a - b| <= atol + rtol * |b| (or equal, or both NaN with ``equal_nan``)."""

    rtol: float = 1e-5
    atol: float = 1e-8
    equal_nan: bool = False
    fname = "isclose"

    def forward(self, xp, a, b):
        if a.dtype.kind == "b":
            return xp.equal(a, b)
        return xp.isclose(a, b, rtol=self.rtol, atol=self.atol, equal_nan=self.equal_nan)


@dataclass(frozen=True)
class LogicalAnd(Compare):
    fname = "logical_and"

    def forward(self, xp, a, b):
        return xp.logical_and(a, b)


@dataclass(frozen=True)
class LogicalOr(Compare):
    fname = "logical_or"

    def forward(self, xp, a, b):
        return xp.logical_or(a, b)


@dataclass(frozen=True)
class LogicalXor(Compare):
    fname = "logical_xor"

    def forward(self, xp, a, b):
        return xp.logical_xor(a, b)


class Bitwise(Binary):
    differentiable = False

    def infer(self, a, b):
        _require_integral(self.fname, a, b)
        return Binary.infer(self, a, b)


@dataclass(frozen=True)
class BitwiseAnd(Bitwise):
    fname = "bitwise_and"

    def forward(self, xp, a, b):
        return xp.bitwise_and(a, b)


@dataclass(frozen=True)
class BitwiseOr(Bitwise):
    fname = "bitwise_or"

    def forward(self, xp, a, b):
        return xp.bitwise_or(a, b)


@dataclass(frozen=True)
class BitwiseXor(Bitwise):
    fname = "bitwise_xor"

    def forward(self, xp, a, b):
        return xp.bitwise_xor(a, b)


# -- ternary ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Where(Op):
    """``a`` where ``cond`` else ``b`` (cond bool; a and b of one dtype; all broadcast)."""

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


@dataclass(frozen=True)
class ClampTensor(Op):
    """``min(max(x, lo), hi)`` with tensor bounds; inputs are ``x`` then the bounds present.

    Gradients as PyTorch's: x's where lo <= x <= hi; lo's where x < lo < hi; hi's where
    x > hi or hi < lo (the result is hi when the bounds cross).
    """

    has_lo: bool = True
    has_hi: bool = True
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


ADD, SUB, MUL, DIV, POW, NEG = Add(), Sub(), Mul(), Div(), Pow(), Neg()
EXP, LOG, SQRT, SIGN = Exp(), Log(), Sqrt(), Sign()
SIN, COS, SINH, COSH = Sin(), Cos(), Sinh(), Cosh()
ZEROS_LIKE, WHERE = ZerosLike(), Where()
FLOOR_DIVIDE, TRUNC_DIVIDE = FloorDivide(), TruncDivide()
EQ, NE, LT, LE, GT, GE = Eq(), Ne(), Lt(), Le(), Gt(), Ge()
LOGICAL_AND, LOGICAL_OR = LogicalAnd(), LogicalOr()


# The error function lives in its own file (its rational approximations are long); re-exported
# here so every elementwise primitive is found in one namespace.
from .erf import Erf, Erfc, erf_array  # noqa: E402,F401
