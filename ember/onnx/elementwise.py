"""Converters for ``ember.ops.elementwise``: unary math, binary arithmetic, comparisons, logic,
where, cast, clamp.

Ops with no ONNX operator of their own are written with a few: ``expm1`` is ``Exp - 1``,
``log1p`` is ``Log(1 + x)``, ``trunc`` picks ``Floor`` or ``Ceil`` by sign, ``atan2`` corrects
``Atan(a / b)`` by quadrant, ``remainder`` corrects ``Mod(fmod=1)`` by sign, integer floor
division subtracts the remainder first. Booleans use the logical operators (``Add`` of bools
is ``Or``, ``Mul`` is ``And``).
"""

from __future__ import annotations

import math

import numpy as np

from ..functions.conversion import Clone, ToDevice
from ..ops import elementwise as E
from ..ops import reduce as R
from .context import converts


def _dt(value) -> np.dtype:
    return np.dtype(value.dtype)


def _is_float(value) -> bool:
    return _dt(value).kind == "f" or _dt(value).name == "bfloat16"


# -- unary ---------------------------------------------------------------------------------

_SIMPLE_UNARY = {
    E.Neg: "Neg",
    E.Abs: "Abs",
    E.Exp: "Exp",
    E.Log: "Log",
    E.Sqrt: "Sqrt",
    E.Reciprocal: "Reciprocal",
    E.Sin: "Sin",
    E.Cos: "Cos",
    E.Sinh: "Sinh",
    E.Cosh: "Cosh",
    E.Asin: "Asin",
    E.Acos: "Acos",
    E.Atan: "Atan",
    E.Tanh: "Tanh",
    E.Sigmoid: "Sigmoid",
    E.Relu: "Relu",
    E.Erf: "Erf",
    E.IsNan: "IsNaN",
    E.IsInf: "IsInf",
}


def _simple_unary(onnx_op: str):
    def convert(ctx, node, x):
        return ctx.add(onnx_op, [x])

    return convert


for _cls, _onnx_op in _SIMPLE_UNARY.items():
    converts(_cls)(_simple_unary(_onnx_op))


@converts(E.Tan)
def _tan(ctx, node, x):
    """Tan, as Sin / Cos in float64: onnxruntime has no float64 Tan kernel (digamma's
    reflection computes in float64)."""
    if _dt(node.output) == np.float64:
        return ctx.add("Div", [ctx.add("Sin", [x]), ctx.add("Cos", [x])])
    return ctx.add("Tan", [x])


@converts(E.ZerosLike)
def _zeros_like(ctx, node, x):
    shape = ctx.add("Shape", [x])
    zero = ctx.helper.make_tensor("value", _elem(node.output), [1], [0])
    return ctx.add("ConstantOfShape", [shape], value=zero)


def _elem(value) -> int:
    from .context import elem_type

    return elem_type(value.dtype)


@converts(E.Sign, R.SignConst)
def _sign(ctx, node, x):
    if _dt(node.inputs[0]).kind == "b":
        return ctx.add("Identity", [x])
    s = ctx.add("Sign", [x])
    if _is_float(node.inputs[0]):  # NaN -> 0, as PyTorch
        zero = ctx.scalar(0, _dt(node.output))
        s = ctx.add("Where", [ctx.add("IsNaN", [x]), zero, s])
    return s


@converts(E.Expm1)
def _expm1(ctx, node, x):
    return ctx.add("Sub", [ctx.add("Exp", [x]), ctx.scalar(1, _dt(node.output))])


@converts(E.Log1p)
def _log1p(ctx, node, x):
    return ctx.add("Log", [ctx.add("Add", [x, ctx.scalar(1, _dt(node.output))])])


@converts(E.Log2, E.Log10)
def _log_base(ctx, node, x):
    base = 2.0 if isinstance(node.op, E.Log2) else 10.0
    scale = ctx.scalar(1.0 / math.log(base), _dt(node.output))
    return ctx.add("Mul", [ctx.add("Log", [x]), scale])


@converts(E.Rsqrt)
def _rsqrt(ctx, node, x):
    return ctx.add("Reciprocal", [ctx.add("Sqrt", [x])])


@converts(E.PowScalar)
def _pow_scalar(ctx, node, x):
    c = node.op.exponent
    dt = _dt(node.output)
    if c == 1:
        return ctx.add("Identity", [x])
    if c == 2:
        return ctx.add("Mul", [x, x])
    if c == 0.5 and dt.kind == "f":
        return ctx.add("Sqrt", [x])
    if c == -1 and dt.kind == "f":
        return ctx.add("Reciprocal", [x])
    if dt.kind != "f" and float(c) != int(c):
        return ctx.cast(ctx.add("Pow", [x, ctx.scalar(c, np.float64)]), dt)
    return ctx.add("Pow", [x, ctx.scalar(c, dt)])


@converts(E.Erfc)
def _erfc(ctx, node, x):
    return ctx.add("Sub", [ctx.scalar(1, _dt(node.output)), ctx.add("Erf", [x])])


@converts(E.Floor, E.Ceil, E.Trunc, E.Round)
def _rounding(ctx, node, x):
    if not _is_float(node.inputs[0]):
        return ctx.add("Identity", [x])
    op = node.op
    if isinstance(op, E.Floor):
        return ctx.add("Floor", [x])
    if isinstance(op, E.Ceil):
        return ctx.add("Ceil", [x])
    if isinstance(op, E.Trunc):
        return _trunc(ctx, x, _dt(node.output))
    if op.decimals == 0:
        return ctx.add("Round", [x])  # half to even, as NumPy and PyTorch
    scale = ctx.scalar(10.0**op.decimals, _dt(node.output))
    return ctx.add("Div", [ctx.add("Round", [ctx.add("Mul", [x, scale])]), scale])


def _trunc(ctx, x: str, dtype) -> str:
    neg = ctx.add("Less", [x, ctx.scalar(0, dtype)])
    return ctx.add("Where", [neg, ctx.add("Ceil", [x]), ctx.add("Floor", [x])])


def _clamp(ctx, node, x, lo, hi):
    dt = _dt(node.inputs[0])
    if lo is not None:
        x = ctx.add("Max", [x, ctx.scalar(lo, dt)])
    if hi is not None:
        x = ctx.add("Min", [x, ctx.scalar(hi, dt)])
    return x


@converts(E.Clamp)
def _clamp_scalar(ctx, node, x):
    return _clamp(ctx, node, x, node.op.lo, node.op.hi)


@converts(E.ClampGrad)
def _clamp_grad(ctx, node, g, x):
    dt = _dt(node.inputs[1])
    keep = None
    if node.op.lo is not None:
        keep = ctx.add("GreaterOrEqual", [x, ctx.scalar(node.op.lo, dt)])
    if node.op.hi is not None:
        le = ctx.add("LessOrEqual", [x, ctx.scalar(node.op.hi, dt)])
        keep = le if keep is None else ctx.add("And", [keep, le])
    if keep is None:
        return g
    return ctx.add("Where", [keep, g, ctx.scalar(0.0, _dt(node.inputs[0]))])


def _ones_bool(ctx, x):
    shape = ctx.add("Shape", [x])
    one = ctx.helper.make_tensor("value", 9, [1], [True])
    return ctx.add("ConstantOfShape", [shape], value=one)


@converts(E.ClampTensor)
def _clamp_tensor(ctx, node, x, *bounds):
    if node.op.has_lo:
        x = ctx.add("Max", [x, bounds[0]])
    if node.op.has_hi:
        x = ctx.add("Min", [x, bounds[-1]])
    return x


@converts(E.Cast)
def _cast(ctx, node, x):
    return ctx.cast(x, node.op.dtype)


@converts(Clone, ToDevice)
def _identity(ctx, node, x):
    return ctx.add("Identity", [x])  # a copy; ONNX runtimes place tensors themselves


@converts(E.IsFinite)
def _isfinite(ctx, node, x):
    if not _is_float(node.inputs[0]):
        return _ones_bool(ctx, x)
    bad = ctx.add("Or", [ctx.add("IsNaN", [x]), ctx.add("IsInf", [x])])
    return ctx.add("Not", [bad])


@converts(E.LogicalNot)
def _logical_not(ctx, node, x):
    return ctx.add("Not", [_as_bool(ctx, node.inputs[0], x)])


@converts(E.BitwiseNot)
def _bitwise_not(ctx, node, x):
    dt = _dt(node.inputs[0])
    if dt.kind == "b":
        return ctx.add("Not", [x])
    if ctx.opset >= 18:
        return ctx.add("BitwiseNot", [x])
    if dt.kind == "u":  # ~x == max - x, in int32 (Sub of uint8 needs opset 14)
        wide = ctx.cast(x, np.int32)
        return ctx.cast(ctx.add("Sub", [ctx.scalar(np.iinfo(dt).max, np.int32), wide]), dt)
    return ctx.add("Sub", [ctx.add("Neg", [x]), ctx.scalar(1, dt)])  # ~x == -x - 1


@converts(E.LogOrZero)
def _log_or_zero(ctx, node, x):
    dt = _dt(node.output)
    zero, one = ctx.scalar(0, dt), ctx.scalar(1, dt)
    pos = ctx.add("Greater", [x, zero])
    safe = ctx.add("Where", [pos, x, one])
    return ctx.add("Where", [pos, ctx.add("Log", [safe]), zero])


# -- binary --------------------------------------------------------------------------------


def _as_bool(ctx, value, name: str) -> str:
    return name if _dt(value).kind == "b" else ctx.cast(name, np.bool_)


@converts(E.Add, E.Sub, E.Mul, E.Div)
def _arith(ctx, node, a, b):
    op = type(node.op)
    if _dt(node.inputs[0]).kind == "b" and op in (E.Add, E.Mul):
        return ctx.add("Or" if op is E.Add else "And", [a, b])
    if op is E.Div and not _is_float(node.inputs[0]):
        dt = _dt(node.output)  # true division of integers (not made by ember's own functions)
        return ctx.add("Div", [ctx.cast(a, dt), ctx.cast(b, dt)])
    return ctx.add({E.Add: "Add", E.Sub: "Sub", E.Mul: "Mul", E.Div: "Div"}[op], [a, b])


@converts(E.Pow)
def _pow(ctx, node, a, b):
    return ctx.add("Pow", [a, b])


@converts(E.Maximum, E.Minimum)
def _extremum(ctx, node, a, b):
    return ctx.add("Max" if isinstance(node.op, E.Maximum) else "Min", [a, b])


@converts(E.FloorDivide)
def _floor_divide(ctx, node, a, b):
    if _is_float(node.inputs[0]):
        return ctx.add("Floor", [ctx.add("Div", [a, b])])
    rem = ctx.add("Mod", [a, b], fmod=0)  # the sign of b, as Python's %
    return ctx.add("Div", [ctx.add("Sub", [a, rem]), b])  # exact: a - rem is a multiple of b


@converts(E.TruncDivide)
def _trunc_divide(ctx, node, a, b):
    if _is_float(node.inputs[0]):
        return _trunc(ctx, ctx.add("Div", [a, b]), _dt(node.output))
    return ctx.add("Div", [a, b])  # ONNX integer Div truncates


@converts(E.Remainder)
def _remainder(ctx, node, a, b):
    if not _is_float(node.inputs[0]):
        return ctx.add("Mod", [a, b], fmod=0)
    dt = _dt(node.output)
    zero = ctx.scalar(0, dt)
    r = ctx.add("Mod", [a, b], fmod=1)  # the sign of a; move it to b's where they differ
    differ = ctx.add("Xor", [ctx.add("Less", [r, zero]), ctx.add("Less", [b, zero])])
    fix = ctx.add("And", [differ, ctx.add("Not", [ctx.add("Equal", [r, zero])])])
    return ctx.add("Where", [fix, ctx.add("Add", [r, b]), r])


@converts(E.Fmod)
def _fmod(ctx, node, a, b):
    return ctx.add("Mod", [a, b], fmod=1)  # the sign of a, as C's fmod


@converts(E.Atan2)
def _atan2(ctx, node, a, b):
    dt = _dt(node.output)
    zero = ctx.scalar(0, dt)
    pi = ctx.scalar(math.pi, dt)
    base = ctx.add("Atan", [ctx.add("Div", [a, b])])
    # b < 0 (or b == -0.0): add pi with a's sign; b == 0 == a: 0 or +-pi (IEEE atan2)
    b_neg = ctx.add("Or", [ctx.add("Less", [b, zero]), _is_neg_zero(ctx, b, dt)])
    a_neg = ctx.add("Or", [ctx.add("Less", [a, zero]), _is_neg_zero(ctx, a, dt)])
    signed_pi = ctx.add("Where", [a_neg, ctx.add("Neg", [pi]), pi])
    out = ctx.add("Where", [b_neg, ctx.add("Add", [base, signed_pi]), base])
    both_zero = ctx.add("And", [ctx.add("Equal", [a, zero]), ctx.add("Equal", [b, zero])])
    at_zero = ctx.add("Where", [b_neg, signed_pi, ctx.add("Mul", [a, zero])])
    return ctx.add("Where", [both_zero, at_zero, out])


def _is_neg_zero(ctx, x, dt):
    zero = ctx.scalar(0, dt)
    inv = ctx.add("Div", [ctx.scalar(1, dt), x])  # -inf only for -0.0
    return ctx.add("And", [ctx.add("Equal", [x, zero]), ctx.add("Less", [inv, zero])])


_COMPARE = {
    E.Eq: "Equal",
    E.Lt: "Less",
    E.Le: "LessOrEqual",
    E.Gt: "Greater",
    E.Ge: "GreaterOrEqual",
}


@converts(*_COMPARE)
def _compare(ctx, node, a, b):
    return ctx.add(_COMPARE[type(node.op)], [a, b])


@converts(E.Ne)
def _ne(ctx, node, a, b):
    return ctx.add("Not", [ctx.add("Equal", [a, b])])


@converts(E.IsClose)
def _isclose(ctx, node, a, b):
    op = node.op
    dt = _dt(node.inputs[0])
    if dt.kind != "f":
        return ctx.add("Equal", [a, b])
    tol = ctx.add(
        "Add",
        [ctx.scalar(op.atol, dt), ctx.add("Mul", [ctx.scalar(op.rtol, dt), ctx.add("Abs", [b])])],
    )
    close = ctx.add("LessOrEqual", [ctx.add("Abs", [ctx.add("Sub", [a, b])]), tol])
    inf = ctx.add("Or", [ctx.add("IsInf", [a]), ctx.add("IsInf", [b])])
    close = ctx.add("And", [close, ctx.add("Not", [inf])])  # infinities: only when equal
    out = ctx.add("Or", [close, ctx.add("Equal", [a, b])])
    if op.equal_nan:
        both = ctx.add("And", [ctx.add("IsNaN", [a]), ctx.add("IsNaN", [b])])
        out = ctx.add("Or", [out, both])
    return out


_LOGICAL = {E.LogicalAnd: "And", E.LogicalOr: "Or", E.LogicalXor: "Xor"}


@converts(*_LOGICAL)
def _logical(ctx, node, a, b):
    a = _as_bool(ctx, node.inputs[0], a)
    b = _as_bool(ctx, node.inputs[1], b)
    return ctx.add(_LOGICAL[type(node.op)], [a, b])


_BITWISE = {E.BitwiseAnd: "And", E.BitwiseOr: "Or", E.BitwiseXor: "Xor"}


@converts(*_BITWISE)
def _bitwise(ctx, node, a, b):
    logical = _BITWISE[type(node.op)]
    if _dt(node.inputs[0]).kind == "b":
        return ctx.add(logical, [a, b])
    if ctx.opset < 18:
        raise ctx.error(
            f"Bitwise{logical} of integers needs opset 18 or later (pass opset_version=18)"
        )
    return ctx.add(f"Bitwise{logical}", [a, b])


@converts(E.Where)
def _where(ctx, node, cond, a, b):
    return ctx.add("Where", [_as_bool(ctx, node.inputs[0], cond), a, b])
