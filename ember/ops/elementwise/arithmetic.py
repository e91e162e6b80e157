"""Arithmetic: add, sub, mul, div (true, floor, truncating), remainder, fmod, neg, abs, sign,
reciprocal, a scalar power, and the helpers vjps build from them.

Binary primitives take inputs of one dtype (the public functions in ``ember.functions``
promote first) and broadcast; their vjps reduce gradients back with ``sum_to``.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(MUL, ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
tensor([3., 8.])
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import dtypes as _dt
from ..._errors import DTypeError
from ...backend.kernels import half_elementwise as _half
from ...backend.overrides import register
from ...dtypes import is_float_np
from .. import _arith_numba as _arith
from .. import _layout_sums
from ..base import Spec, apply
from ..broadcast import sum_to
from .kinds import Binary, Unary, _int_zero_division, const_like

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


def zeros_like(x):
    """Zeros shaped like ``x``, with no history: the gradient of piecewise-constant ops."""
    return apply(ZEROS_LIKE, x)


# -- unary ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ZerosLike(Unary):
    differentiable = False

    def forward(self, xp, x):
        return xp.zeros_like(x)


@dataclass(frozen=True)
class Neg(Unary):
    scalar = "-x"

    def forward(self, xp, x, out=None):
        return xp.negative(x, out=out)

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
    scalar = "abs(x)"
    saves_inputs = True

    def forward(self, xp, x, out=None):
        return xp.abs(x, out=out)

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
class Reciprocal(Unary):
    scalar = "1 / x"
    saves_output = True

    def forward(self, xp, x, out=None):
        return xp.reciprocal(x, out=out)

    def vjp(self, g, out, x):
        return (neg(mul(g, mul(out, out))),)


@dataclass(frozen=True)
class PowScalar(Unary):
    """``x ** exponent`` for a Python-number exponent (``x ** 2`` is the common case).

    A primitive beside ``Pow`` because NumPy's scalar-power fast paths (square, sqrt,
    reciprocal) need a Python number, and the gradient needs no log.
    """

    exponent: float = 2
    node_name = "PowBackward0"
    saves_inputs = True

    @property
    def scalar(self) -> str:
        """NumPy's fast paths as the same operations; ``pow`` for other exponents."""
        return {2: "x * x", 0.5: "sqrt(x)", -1: "1 / x"}.get(self.exponent, "x ** exponent")

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


# -- binary -----------------------------------------------------------------------------------


_ARITH_MIN = _arith.PARALLEL_MIN


def _threaded(name: str):
    """The CPU override of ``name``'s op: large arrays on numba's threads (``_arith_numba``)."""

    def override(op, xp, a, b, out=None):
        if a.size < _ARITH_MIN and b.size < _ARITH_MIN:  # small: NumPy, without more checks
            return NotImplemented
        r = _arith.binary(name, a, b, out)
        return NotImplemented if r is None else r

    override.__name__ = override.__qualname__ = f"_{name}_cpu"
    override.writes_out = True
    return override


_add_threaded = _threaded("add")


@dataclass(frozen=True)
class Add(Binary):
    scalar = "x + y"

    def forward(self, xp, a, b, out=None):
        return xp.add(a, b, out=out)

    def vjp(self, g, out, a, b):
        return (
            sum_to(g, tuple(a.shape)) if a._requires_grad else None,
            sum_to(g, tuple(b.shape)) if b._requires_grad else None,
        )


@register(Add, "cpu")
def _add_cpu(op, xp, a, b, out=None):
    """Large arrays on numba's threads (``_threaded``, into ``out`` too); a per-channel bias on
    channels-last memory with rows longer than NumPy's inner loop of C values
    (``_layout_sums.add_trailing``); NotImplemented otherwise."""
    r = _add_threaded(op, xp, a, b, out)
    if r is not NotImplemented or out is not None or a.shape == b.shape:
        return r
    r = _layout_sums.add_trailing(a, b)
    if r is None:
        r = _layout_sums.add_trailing(b, a)
    return NotImplemented if r is None else r


_add_cpu.writes_out = True


@dataclass(frozen=True)
class Sub(Binary):
    scalar = "x - y"

    def forward(self, xp, a, b, out=None):
        return xp.subtract(a, b, out=out)

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
    scalar = "x * y"
    saves_inputs = "cross"  # a is read only for b's gradient and b only for a's

    def forward(self, xp, a, b, out=None):
        return xp.multiply(a, b, out=out)

    def vjp(self, g, out, a, b):
        return (
            sum_to(mul(g, b), tuple(a.shape)) if a._requires_grad else None,
            sum_to(mul(g, a), tuple(b.shape)) if b._requires_grad else None,
        )


@dataclass(frozen=True)
class Div(Binary):
    scalar = "x / y"
    saves_inputs = True

    def forward(self, xp, a, b, out=None):
        return xp.divide(a, b, out=out)

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


register(Sub, "cpu")(_threaded("sub"))
register(Mul, "cpu")(_threaded("mul"))
register(Div, "cpu")(_threaded("div"))

ADD, SUB, MUL, DIV, NEG, SIGN = Add(), Sub(), Mul(), Div(), Neg(), Sign()
ZEROS_LIKE = ZerosLike()
FLOOR_DIVIDE, TRUNC_DIVIDE = FloorDivide(), TruncDivide()


# -- CUDA: float16 / bfloat16 in 16-byte accesses (``backend/kernels/half_elementwise.py``) ----


@register(Add, "cuda")
def _add_cuda(op, xp, a, b):
    return _half.binary(xp, "add", a, b)


@register(Sub, "cuda")
def _sub_cuda(op, xp, a, b):
    return _half.binary(xp, "sub", a, b)


@register(Mul, "cuda")
def _mul_cuda(op, xp, a, b):
    return _half.binary(xp, "mul", a, b)


@register(Neg, "cuda")
def _neg_cuda(op, xp, x):
    return _half.negative(xp, x)
