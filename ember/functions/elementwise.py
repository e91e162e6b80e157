"""Elementwise math: arithmetic, powers, exponentials, activations, clamping, comparisons.

>>> import ember
>>> ember.add(ember.tensor([1, 2]), 0.5)
tensor([1.5000, 2.5000])
"""

from __future__ import annotations

from .. import dtypes as _dt
from .._tensor import Tensor
from ..ops import elementwise as E
from ..ops.base import apply
from ._promote import as_tensor_arg, binary, to_float


def add(input, other, *, alpha=1) -> Tensor:
    """``input + alpha * other`` with PyTorch's type promotion.

    >>> import ember
    >>> ember.add(ember.ones(2), ember.ones(2), alpha=2)
    tensor([3., 3.])
    """
    if alpha != 1:
        other = mul(other, alpha)
    a, b = binary(input, other, "add")
    return apply(E.ADD, a, b)


def sub(input, other, *, alpha=1) -> Tensor:
    """``input - alpha * other``.

    >>> import ember
    >>> ember.sub(ember.ones(2), 3)
    tensor([-2., -2.])
    """
    if alpha != 1:
        other = mul(other, alpha)
    a, b = binary(input, other, "sub")
    return apply(E.SUB, a, b)


def mul(input, other) -> Tensor:
    """``input * other``.

    >>> import ember
    >>> ember.mul(ember.tensor([1, 2]), 3)
    tensor([3, 6])
    """
    a, b = binary(input, other, "mul")
    return apply(E.MUL, a, b)


def div(input, other, *, rounding_mode: str | None = None) -> Tensor:
    """True division (integers give floats), or ``rounding_mode='trunc'|'floor'``.

    >>> import ember
    >>> ember.div(ember.tensor([3]), 2)
    tensor([1.5000])
    """
    if rounding_mode is not None:
        from .elementwise_more import floor_divide, trunc_divide

        if rounding_mode == "floor":
            return floor_divide(input, other)
        if rounding_mode == "trunc":
            return trunc_divide(input, other)
        raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    a, b = binary(input, other, "div")
    if not a.dtype.is_floating_point:
        dt = _dt.get_default_dtype()
        a, b = E.cast(a, dt), E.cast(b, dt)
    return apply(E.DIV, a, b)


def pow(input, exponent) -> Tensor:
    """``input ** exponent``.

    >>> import ember
    >>> ember.pow(ember.tensor([2.0, 3.0]), 2)
    tensor([4., 9.])
    """
    a, b = binary(input, exponent, "pow")
    return apply(E.POW, a, b)


def neg(input) -> Tensor:
    """``-input``.

    >>> import ember
    >>> ember.neg(ember.tensor([1.0]))
    tensor([-1.])
    """
    return apply(E.NEG, as_tensor_arg(input, "neg"))


def exp(input) -> Tensor:
    """e to the power of each element (integers become floats).

    >>> import ember
    >>> ember.exp(ember.tensor([0.0]))
    tensor([1.])
    """
    return apply(E.Exp(), to_float(as_tensor_arg(input, "exp")))


def log(input) -> Tensor:
    """Natural logarithm.

    >>> import ember
    >>> ember.log(ember.tensor([1.0]))
    tensor([0.])
    """
    return apply(E.Log(), to_float(as_tensor_arg(input, "log")))


def tanh(input) -> Tensor:
    """Hyperbolic tangent.

    >>> import ember
    >>> ember.tanh(ember.tensor([0.0]))
    tensor([0.])
    """
    return apply(E.Tanh(), to_float(as_tensor_arg(input, "tanh")))


def relu(input) -> Tensor:
    """max(x, 0); the gradient at 0 is 0, as in PyTorch.

    >>> import ember
    >>> ember.relu(ember.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return apply(E.Relu(), as_tensor_arg(input, "relu"))


def clamp(input, min=None, max=None) -> Tensor:
    """Limit values to ``[min, max]`` (either may be None; tensors allowed).

    >>> import ember
    >>> ember.clamp(ember.tensor([-1.0, 0.5, 2.0]), min=0, max=1)
    tensor([0.0000, 0.5000, 1.0000])
    """
    x = as_tensor_arg(input, "clamp")
    if min is None and max is None:
        raise ValueError("clamp: at least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        from .elementwise_more import maximum, minimum

        if min is not None:
            x = maximum(x, min)
        if max is not None:
            x = minimum(x, max)
        return x
    dt = _dt.result_type(x, *(v for v in (min, max) if v is not None))
    x = E.cast(x, dt)
    return apply(E.Clamp(min, max), x)


clip = clamp


def gt(input, other) -> Tensor:
    """``input > other`` as a bool tensor.

    >>> import ember
    >>> ember.gt(ember.tensor([1, 3]), 2)
    tensor([False,  True])
    """
    a, b = binary(input, other, "gt")
    return apply(E.GT, a, b)


def _rsub(self, other):
    return sub(other, self)


def _rdiv(self, other):
    return div(other, self)


def _rpow(self, other):
    return pow(other, self)


__all__ = ["add", "sub", "mul", "div", "pow", "neg", "exp", "log", "tanh", "relu", "clamp", "clip", "gt"]

TENSOR_METHODS = {
    "add": add,
    "sub": sub,
    "mul": mul,
    "div": div,
    "pow": pow,
    "neg": neg,
    "exp": exp,
    "log": log,
    "tanh": tanh,
    "relu": relu,
    "clamp": clamp,
    "clip": clamp,
    "gt": gt,
    "__add__": add,
    "__radd__": add,
    "__sub__": sub,
    "__rsub__": _rsub,
    "__mul__": mul,
    "__rmul__": mul,
    "__truediv__": div,
    "__rtruediv__": _rdiv,
    "__pow__": pow,
    "__rpow__": _rpow,
    "__neg__": neg,
    "__gt__": gt,
}
