"""Elementwise arithmetic: + - * / // % **, abs, sign, clamp, maximum/minimum, where, masked_fill.

Math functions (exp, sqrt, erf...) are in ``ember.functions.math``, comparisons in
``ember.functions.compare``, logical and bitwise ops in ``ember.functions.logical``.

>>> import ember
>>> ember.add(ember.tensor([1, 2]), 0.5)
tensor([1.5000, 2.5000])
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _caches
from .. import dtypes as _dt
from .._errors import DTypeError, EmberError
from .._shape import broadcast_shapes
from .._tensor import Tensor
from ..amp.autocast_mode import rule as _autocast_rule
from ..ops import elementwise as E
from ..ops.base import apply
from ._promote import as_tensor_arg, binary, scalar_tensor, to_float

_FLOOR_DIVIDE, _TRUNC_DIVIDE = E.FLOOR_DIVIDE, E.TRUNC_DIVIDE
_REMAINDER, _FMOD = E.Remainder(), E.Fmod()
_MAXIMUM, _MINIMUM, _ABS, _RECIPROCAL = E.Maximum(), E.Minimum(), E.Abs(), E.Reciprocal()


_POW_SCALAR: dict = {}  # (type, exponent) -> PowScalar op, so x ** 2 builds no dataclass


def _scalar_dtype(x: Tensor, scalars) -> _dt.DType:
    """``result_type(x, *scalars)``, short-cut for the common float-tensor/number case."""
    kind = x._data.dtype.kind
    if kind == "f":
        if all(type(s) is float or type(s) is int for s in scalars):
            return x.dtype
    elif kind in "iu" and all(type(s) is int for s in scalars):
        return x.dtype
    return _dt.result_type(x, *scalars)


def _scaled(other, alpha, input, op: str):
    """``alpha * other`` for add/sub, refusing a float alpha on integer operands (PyTorch)."""
    if isinstance(alpha, float) or isinstance(alpha, np.floating):
        dts = [t.dtype for t in (input, other) if isinstance(t, Tensor)]
        if all(not d.is_floating_point for d in dts) and not any(
            isinstance(v, (float, np.floating)) for v in (input, other)
        ):
            raise DTypeError(
                f"{op}: for integral input tensors, argument alpha must not be a floating point "
                f"number (got alpha={alpha!r})"
            )
    if isinstance(other, Tensor):
        return mul(other, alpha)
    return other * alpha


def add(input, other, *, alpha=1) -> Tensor:
    """``input + alpha * other`` with PyTorch's type promotion.

    >>> import ember
    >>> ember.add(ember.ones(2), ember.ones(2), alpha=2)
    tensor([3., 3.])
    """
    if alpha != 1:
        other = _scaled(other, alpha, input, "add")
    a, b = binary(input, other, "add")
    return apply(E.ADD, a, b)


def sub(input, other, *, alpha=1) -> Tensor:
    """``input - alpha * other`` (bool tensors refuse: use ``^`` / ``logical_xor``).

    >>> import ember
    >>> ember.sub(ember.ones(2), 3)
    tensor([-2., -2.])
    """
    if alpha != 1:
        other = _scaled(other, alpha, input, "sub")
    a, b = binary(input, other, "sub")
    if (a is not input or b is not other) and (_is_bool(input) or _is_bool(other)):
        raise DTypeError(
            "sub: Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return apply(E.SUB, a, b)


def _is_bool(x) -> bool:
    if isinstance(x, Tensor):
        return x._data.dtype == np.bool_
    return isinstance(x, (bool, np.bool_))


def rsub(input, other, *, alpha=1) -> Tensor:
    """``other - alpha * input``.

    >>> import ember
    >>> ember.rsub(ember.ones(2), 3)
    tensor([2., 2.])
    """
    return sub(other, input, alpha=alpha)


def mul(input, other) -> Tensor:
    """``input * other``.

    >>> import ember
    >>> ember.mul(ember.tensor([1, 2]), 3)
    tensor([3, 6])
    """
    a, b = binary(input, other, "mul")
    return apply(E.MUL, a, b)


def _no_bool(a: Tensor, op: str, kernel: str) -> None:
    if a.dtype is _dt.bool_:
        raise DTypeError(f"{op}: \"{kernel}_cpu\" not implemented for 'Bool'")


def _no_bool_binary(input, other, name: str, kernel: str, op) -> Tensor:
    """Promote both operands and apply ``op``, refusing bool as PyTorch's ``kernel`` does."""
    a, b = binary(input, other, name)
    _no_bool(a, name, kernel)
    return apply(op, a, b)


def div(input, other, *, rounding_mode: str | None = None) -> Tensor:
    """True division (integers give floats), or ``rounding_mode='trunc'|'floor'``.

    Rounded division keeps integer dtypes and has a zero gradient.

    >>> import ember
    >>> ember.div(ember.tensor([3]), 2)
    tensor([1.5000])
    >>> ember.div(ember.tensor([-7, 7]), 2, rounding_mode="trunc")
    tensor([-3,  3])
    """
    if rounding_mode is not None:
        if rounding_mode == "floor":
            return floor_divide(input, other)
        if rounding_mode == "trunc":
            return trunc_divide(input, other)
        raise EmberError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{rounding_mode}'"
        )
    a, b = binary(input, other, "div")
    if not a.dtype.is_floating_point:
        dt = _dt.get_default_dtype()
        a, b = E.cast(a, dt), E.cast(b, dt)
    return apply(E.DIV, a, b)


def floor_divide(input, other) -> Tensor:
    """Division rounded down, like Python's ``//`` (integer division by zero is an error).

    >>> import ember
    >>> ember.floor_divide(ember.tensor([-7, 7]), 2)
    tensor([-4,  3])
    """
    return _no_bool_binary(input, other, "floor_divide", "div_floor", _FLOOR_DIVIDE)


def trunc_divide(input, other) -> Tensor:
    """Division rounded toward zero: ``div(input, other, rounding_mode='trunc')``.

    >>> import ember
    >>> ember.functions.elementwise.trunc_divide(ember.tensor([-7.0]), 2)
    tensor([-3.])
    """
    return _no_bool_binary(input, other, "div", "div_trunc", _TRUNC_DIVIDE)


def remainder(input, other) -> Tensor:
    """Python's modulus ``%``: the result takes the sign of the divisor.

    >>> import ember
    >>> ember.remainder(ember.tensor([-3.0, 3.0]), 2)
    tensor([1., 1.])
    """
    return _no_bool_binary(input, other, "remainder", "remainder", _REMAINDER)


def fmod(input, other) -> Tensor:
    """C's ``fmod``: the result takes the sign of the dividend.

    >>> import ember
    >>> ember.fmod(ember.tensor([-3.0, 3.0]), 2)
    tensor([-1.,  1.])
    """
    return _no_bool_binary(input, other, "fmod", "fmod", _FMOD)


def pow(input, exponent) -> Tensor:
    """``input ** exponent`` (either may be a Python number; integer powers stay integer).

    >>> import ember
    >>> ember.pow(ember.tensor([2.0, 3.0]), 2)
    tensor([4., 9.])
    >>> ember.pow(2, ember.tensor([1, 2, 3]))
    tensor([2, 4, 8])
    """
    if isinstance(input, Tensor) and isinstance(exponent, (numbers.Real, np.bool_)):
        dt = _scalar_dtype(input, (exponent,))
        x = E.cast(input, dt)
        if dt.is_floating_point:
            e = float(exponent)
        else:
            e = int(exponent)
            if e < 0:
                raise EmberError("pow: Integers to negative integer powers are not allowed.")
        op = _POW_SCALAR.get((type(e), e))
        if op is None:
            op = _POW_SCALAR[(type(e), e)] = E.PowScalar(e)
        return apply(op, x)
    a, b = binary(input, exponent, "pow")
    _no_bool(a, "pow", "pow")
    return apply(E.POW, a, b)


def square(input) -> Tensor:
    """``input ** 2`` (bool becomes int64, as in PyTorch).

    >>> import ember
    >>> ember.square(ember.tensor([-2, 3]))
    tensor([4, 9])
    """
    return pow(as_tensor_arg(input, "square"), 2)


def neg(input) -> Tensor:
    """``-input`` (refused for bool tensors: use ``~``).

    >>> import ember
    >>> ember.neg(ember.tensor([1.0]))
    tensor([-1.])
    """
    return apply(E.NEG, as_tensor_arg(input, "neg"))


def positive(input) -> Tensor:
    """``+input``: the tensor itself.

    >>> import ember
    >>> ember.positive(ember.tensor([-1.0]))
    tensor([-1.])
    """
    x = as_tensor_arg(input, "positive")
    if x.dtype is _dt.bool_:
        raise DTypeError("positive: The `+` operator, on a bool tensor is not supported.")
    return x


def abs(input) -> Tensor:
    """Absolute value; its gradient is ``sign(input)`` (0 at 0).

    >>> import ember
    >>> ember.abs(ember.tensor([-1.5, 2.0]))
    tensor([1.5000, 2.0000])
    """
    x = as_tensor_arg(input, "abs")
    _no_bool(x, "abs", "abs")
    return apply(_ABS, x)


def sign(input) -> Tensor:
    """-1, 0 or 1 by the sign of each element (0 for NaN); its gradient is zero.

    >>> import ember
    >>> ember.sign(ember.tensor([-2.0, 0.0, 3.0]))
    tensor([-1.,  0.,  1.])
    """
    return apply(E.SIGN, as_tensor_arg(input, "sign"))


def reciprocal(input) -> Tensor:
    """``1 / input`` (integers give floats).

    >>> import ember
    >>> ember.reciprocal(ember.tensor([2, 4]))
    tensor([0.5000, 0.2500])
    """
    return apply(_RECIPROCAL, to_float(as_tensor_arg(input, "reciprocal")))


def _bound(v, x: Tensor, dt: _dt.DType) -> Tensor:
    return E.cast(v, dt) if isinstance(v, Tensor) else scalar_tensor(v, dt, x)


def clamp(input, min=None, max=None) -> Tensor:
    """Limit values to ``[min, max]`` (either may be None; numbers or tensors).

    The gradient passes where ``min <= input <= max``; where ``min > max`` the result is
    ``max``, as in PyTorch.

    >>> import ember
    >>> ember.clamp(ember.tensor([-1.0, 0.5, 2.0]), min=0, max=1)
    tensor([0.0000, 0.5000, 1.0000])
    >>> ember.clamp(ember.tensor([1, 5]), max=ember.tensor([2, 3]))
    tensor([1, 3])
    """
    x = as_tensor_arg(input, "clamp")
    if min is None and max is None:
        raise EmberError("clamp: at least one of 'min' or 'max' must not be None")
    bounds = [v for v in (min, max) if v is not None]
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        dt = _dt.result_type(x, *bounds)
        x = E.cast(x, dt)
        rest = [_bound(v, x, dt) for v in bounds]
        return apply(E.ClampTensor(min is not None, max is not None), x, *rest)
    for v in bounds:
        if not isinstance(v, numbers.Real):
            raise DTypeError(f"clamp: min and max must be numbers or tensors, got {v!r}")
    x = E.cast(x, _scalar_dtype(x, bounds))
    key = (type(min), min, type(max), max)
    op = _CLAMP_OPS.get(key)
    if op is None:  # building the frozen dataclass costs more than clamping a small tensor
        op = E.Clamp(min, max)
        if len(_CLAMP_OPS) < 1024:
            _CLAMP_OPS[key] = op
    return apply(op, x)


_CLAMP_OPS: dict = {}
_caches.register("clamp ops", _CLAMP_OPS.clear, _CLAMP_OPS.__len__)


clip = clamp


def clamp_min(input, min) -> Tensor:
    """``clamp(input, min=min)``.

    >>> import ember
    >>> ember.clamp_min(ember.tensor([-1.0, 2.0]), 0)
    tensor([0., 2.])
    """
    return clamp(input, min=min)


def clamp_max(input, max) -> Tensor:
    """``clamp(input, max=max)``.

    >>> import ember
    >>> ember.clamp_max(ember.tensor([-1.0, 2.0]), 0)
    tensor([-1.,  0.])
    """
    return clamp(input, max=max)


def maximum(input, other) -> Tensor:
    """Elementwise maximum; NaN propagates; at ties each input gets half the gradient.

    >>> import ember
    >>> ember.maximum(ember.tensor([1.0, 4.0]), ember.tensor([3.0, 2.0]))
    tensor([3., 4.])
    """
    a, b = binary(input, other, "maximum")
    return apply(_MAXIMUM, a, b)


def minimum(input, other) -> Tensor:
    """Elementwise minimum; NaN propagates; at ties each input gets half the gradient.

    >>> import ember
    >>> ember.minimum(ember.tensor([1.0, 4.0]), ember.tensor([3.0, 2.0]))
    tensor([1., 2.])
    """
    a, b = binary(input, other, "minimum")
    return apply(_MINIMUM, a, b)


def _check_bool_mask(mask, op: str, what: str) -> None:
    if not isinstance(mask, Tensor):
        raise DTypeError(f"{op}: expected {what} to be a bool Tensor, got {type(mask).__name__}")
    if mask._data.dtype != np.bool_:
        raise DTypeError(
            f"{op}: expected {what} to be a boolean tensor, but got a tensor with dtype "
            f"{mask.dtype}"
        )


def where(condition, input=None, other=None):
    """``input`` where ``condition`` is True, else ``other`` (numbers allowed; all broadcast).

    With only ``condition``, the indices of its True elements, one tensor per dimension.

    >>> import ember
    >>> c = ember.tensor([True, False, True])
    >>> ember.where(c, ember.tensor([1.0, 2.0, 3.0]), 0.0)
    tensor([1., 0., 3.])
    >>> ember.where(c)
    (tensor([0, 2]),)
    """
    if input is None and other is None:
        return nonzero_tuple(condition)
    _check_bool_mask(condition, "where", "condition")
    if isinstance(input, Tensor) or isinstance(other, Tensor):
        a, b = binary(input, other, "where")
    else:
        dt = _dt.result_type(input, other)
        a, b = scalar_tensor(input, dt, condition), scalar_tensor(other, dt, condition)
    return apply(E.WHERE, condition, a, b)


def nonzero_tuple(input: Tensor) -> tuple:
    """The indices of nonzero elements, one int64 tensor per dimension (``as_tuple=True``)."""
    data = input._data
    xp = input.device.xp
    if data.ndim == 0:
        data = data.reshape(1)
    return tuple(Tensor._make(i.astype(np.int64, copy=False)) for i in xp.nonzero(data))


def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    """``input`` with ``value`` where ``mask`` is True (mask bool, broadcastable to input).

    ``value`` is a number or a 0-d tensor (which then gets the gradient of the filled places).

    >>> import ember
    >>> ember.ones(3).masked_fill(ember.tensor([True, False, True]), -1.0)
    tensor([-1.,  1., -1.])
    """
    x = as_tensor_arg(input, "masked_fill")
    _check_bool_mask(mask, "masked_fill", "mask")
    broadcast_shapes("masked_fill", tuple(x.shape), tuple(mask.shape))
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise EmberError(
                "masked_fill: only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s)"
            )
        v = E.cast(value, x.dtype)
    else:
        if not isinstance(value, (numbers.Number, np.generic)) or isinstance(value, complex):
            raise DTypeError(f"masked_fill: value must be a number or a 0-d tensor, got {value!r}")
        v = scalar_tensor(value, x.dtype, x)
    return apply(E.WHERE, mask, v, x)


def _where_method(self, condition, other):
    return where(condition, self, other)


def _reflected(fn):
    """The reflected operator (``__rsub__``...): ``fn`` with its operands swapped."""

    def op(self, other):
        return fn(other, self)

    return op


subtract = sub
multiply = mul
divide = div
true_divide = div
negative = neg
absolute = abs
sgn = sign

__all__ = [
    "add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide", "remainder", "fmod", "pow", "square", "neg", "negative", "positive", "abs",
    "absolute", "sign", "sgn", "reciprocal", "clamp", "clip", "clamp_min", "clamp_max", "maximum",
    "minimum", "where", "masked_fill",
]  # fmt: skip

TENSOR_METHODS = {
    "add": add,
    "sub": sub,
    "subtract": sub,
    "mul": mul,
    "multiply": mul,
    "div": div,
    "divide": div,
    "true_divide": div,
    "floor_divide": floor_divide,
    "remainder": remainder,
    "fmod": fmod,
    "pow": pow,
    "square": square,
    "neg": neg,
    "negative": neg,
    "positive": positive,
    "abs": abs,
    "absolute": abs,
    "sign": sign,
    "sgn": sign,
    "reciprocal": reciprocal,
    "clamp": clamp,
    "clip": clamp,
    "clamp_min": clamp_min,
    "clamp_max": clamp_max,
    "maximum": maximum,
    "minimum": minimum,
    "where": _where_method,
    "masked_fill": masked_fill,
    "__add__": add,
    "__radd__": add,
    "__sub__": sub,
    "__rsub__": _reflected(sub),
    "__mul__": mul,
    "__rmul__": mul,
    "__truediv__": div,
    "__rtruediv__": _autocast_rule("__rtruediv__")(_reflected(div)),
    "__floordiv__": floor_divide,
    "__rfloordiv__": _reflected(floor_divide),
    "__mod__": remainder,
    "__rmod__": _reflected(remainder),
    "__pow__": pow,
    "__rpow__": _reflected(pow),
    "__neg__": neg,
    "__pos__": positive,
    "__abs__": abs,
}
