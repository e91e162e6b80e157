"""Elementwise math: exponentials, logarithms, roots, trigonometry, activations, erf, rounding.

Integer and bool inputs of the float-valued functions become the default float dtype first,
as in PyTorch; rounding functions keep integers as they are and have zero gradients.

>>> import ember
>>> ember.sqrt(ember.tensor([4, 9]))
tensor([2., 3.])
"""

from __future__ import annotations

from .. import dtypes as _dt
from .._errors import DTypeError
from .._tensor import Tensor
from ..ops import elementwise as E
from ..ops.base import apply
from ._promote import as_tensor_arg, binary, to_float

_EXP, _LOG, _SQRT, _SIN, _COS = E.EXP, E.LOG, E.SQRT, E.SIN, E.COS
_TANH, _SIGMOID, _RELU, _ERF, _ERFC = E.Tanh(), E.Sigmoid(), E.Relu(), E.Erf(), E.Erfc()
_LOG1P, _EXPM1, _LOG2, _LOG10, _RSQRT = E.Log1p(), E.Expm1(), E.Log2(), E.Log10(), E.Rsqrt()
_TAN, _SINH, _COSH = E.Tan(), E.SINH, E.COSH
_ASIN, _ACOS, _ATAN, _ATAN2 = E.Asin(), E.Acos(), E.Atan(), E.Atan2()
_FLOOR, _CEIL, _TRUNC = E.Floor(), E.Ceil(), E.Trunc()


def _f(input, name: str) -> Tensor:
    """The input as a floating tensor (integers -> the default float dtype)."""
    if isinstance(input, Tensor) and input._data.dtype.kind == "f":
        return input
    return to_float(as_tensor_arg(input, name))


def exp(input) -> Tensor:
    """e to the power of each element (integers become floats).

    >>> import ember
    >>> ember.exp(ember.tensor([0.0]))
    tensor([1.])
    """
    return apply(_EXP, _f(input, "exp"))


def exp2(input) -> Tensor:
    """2 to the power of each element.

    >>> import ember
    >>> ember.exp2(ember.tensor([3.0]))
    tensor([8.])
    """
    x = _f(input, "exp2")
    return apply(E.POW, E.const_like(x, 2), x)


def expm1(input) -> Tensor:
    """``exp(x) - 1``, accurate for small x.

    >>> import ember
    >>> ember.expm1(ember.tensor([0.0]))
    tensor([0.])
    """
    return apply(_EXPM1, _f(input, "expm1"))


def log(input) -> Tensor:
    """Natural logarithm.

    >>> import ember
    >>> ember.log(ember.tensor([1.0]))
    tensor([0.])
    """
    return apply(_LOG, _f(input, "log"))


def log1p(input) -> Tensor:
    """``log(1 + x)``, accurate for small x.

    >>> import ember
    >>> ember.log1p(ember.tensor([0.0]))
    tensor([0.])
    """
    return apply(_LOG1P, _f(input, "log1p"))


def log2(input) -> Tensor:
    """Base-2 logarithm.

    >>> import ember
    >>> ember.log2(ember.tensor([8.0]))
    tensor([3.])
    """
    return apply(_LOG2, _f(input, "log2"))


def log10(input) -> Tensor:
    """Base-10 logarithm.

    >>> import ember
    >>> ember.log10(ember.tensor([1.0, 10.0]))
    tensor([0., 1.])
    """
    return apply(_LOG10, _f(input, "log10"))


def sqrt(input) -> Tensor:
    """Square root.

    >>> import ember
    >>> ember.sqrt(ember.tensor([4.0]))
    tensor([2.])
    """
    return apply(_SQRT, _f(input, "sqrt"))


def rsqrt(input) -> Tensor:
    """``1 / sqrt(x)``.

    >>> import ember
    >>> ember.rsqrt(ember.tensor([4.0]))
    tensor([0.5000])
    """
    return apply(_RSQRT, _f(input, "rsqrt"))


def sin(input) -> Tensor:
    """Sine.

    >>> import ember
    >>> ember.sin(ember.tensor([0.0]))
    tensor([0.])
    """
    return apply(_SIN, _f(input, "sin"))


def cos(input) -> Tensor:
    """Cosine.

    >>> import ember
    >>> ember.cos(ember.tensor([0.0]))
    tensor([1.])
    """
    return apply(_COS, _f(input, "cos"))


def tan(input) -> Tensor:
    """Tangent.

    >>> import ember
    >>> ember.tan(ember.tensor([0.0]))
    tensor([0.])
    """
    return apply(_TAN, _f(input, "tan"))


def sinh(input) -> Tensor:
    """Hyperbolic sine.

    >>> import ember
    >>> ember.sinh(ember.tensor([0.0]))
    tensor([0.])
    """
    return apply(_SINH, _f(input, "sinh"))


def cosh(input) -> Tensor:
    """Hyperbolic cosine.

    >>> import ember
    >>> ember.cosh(ember.tensor([0.0]))
    tensor([1.])
    """
    return apply(_COSH, _f(input, "cosh"))


def asin(input) -> Tensor:
    """Inverse sine (NaN outside [-1, 1]).

    >>> import ember
    >>> ember.asin(ember.tensor([0.0]))
    tensor([0.])
    """
    return apply(_ASIN, _f(input, "asin"))


def acos(input) -> Tensor:
    """Inverse cosine (NaN outside [-1, 1]).

    >>> import ember
    >>> ember.acos(ember.tensor([1.0]))
    tensor([0.])
    """
    return apply(_ACOS, _f(input, "acos"))


def atan(input) -> Tensor:
    """Inverse tangent.

    >>> import ember
    >>> ember.atan(ember.tensor([0.0]))
    tensor([0.])
    """
    return apply(_ATAN, _f(input, "atan"))


def atan2(input, other) -> Tensor:
    """The angle of the point ``(other, input)``: ``atan(input / other)`` in the right quadrant.

    >>> import ember
    >>> ember.atan2(ember.tensor([1.0]), ember.tensor([-1.0]))
    tensor([2.3562])
    """
    a, b = binary(input, other, "atan2")
    if not a.dtype.is_floating_point:
        dt = _dt.get_default_dtype()
        a, b = E.cast(a, dt), E.cast(b, dt)
    return apply(_ATAN2, a, b)


def tanh(input) -> Tensor:
    """Hyperbolic tangent.

    >>> import ember
    >>> ember.tanh(ember.tensor([0.0]))
    tensor([0.])
    """
    return apply(_TANH, _f(input, "tanh"))


def sigmoid(input) -> Tensor:
    """The logistic function ``1 / (1 + exp(-x))``, without overflow for large ``|x|``.

    >>> import ember
    >>> ember.sigmoid(ember.tensor([0.0]))
    tensor([0.5000])
    """
    return apply(_SIGMOID, _f(input, "sigmoid"))


def relu(input) -> Tensor:
    """max(x, 0) (integers stay integers); the gradient at 0 is 0, as in PyTorch.

    >>> import ember
    >>> ember.relu(ember.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    x = as_tensor_arg(input, "relu")
    if x._data.dtype.kind == "b":
        raise DTypeError("relu: Boolean inputs not supported for relu")
    return apply(_RELU, x)


def erf(input) -> Tensor:
    """The error function, accurate to float64 precision (W. J. Cody's approximations).

    >>> import ember
    >>> ember.erf(ember.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8427])
    """
    return apply(_ERF, _f(input, "erf"))


def erfc(input) -> Tensor:
    """``1 - erf(x)``, accurate also where erf(x) is near 1.

    >>> import ember
    >>> ember.erfc(ember.tensor([0.0]))
    tensor([1.])
    """
    return apply(_ERFC, _f(input, "erfc"))


def _rounding(input, name: str) -> Tensor:
    x = as_tensor_arg(input, name)
    if x.dtype is _dt.bool_:
        raise DTypeError(f"{name}: \"{name}_vml_cpu\" not implemented for 'Bool'")
    return x


def floor(input) -> Tensor:
    """Round down (integers unchanged); zero gradient.

    >>> import ember
    >>> ember.floor(ember.tensor([-1.5, 1.5]))
    tensor([-2.,  1.])
    """
    return apply(_FLOOR, _rounding(input, "floor"))


def ceil(input) -> Tensor:
    """Round up (integers unchanged); zero gradient.

    >>> import ember
    >>> ember.ceil(ember.tensor([-1.5, 1.5]))
    tensor([-1.,  2.])
    """
    return apply(_CEIL, _rounding(input, "ceil"))


def trunc(input) -> Tensor:
    """Round toward zero (integers unchanged); zero gradient.

    >>> import ember
    >>> ember.trunc(ember.tensor([-1.5, 1.5]))
    tensor([-1.,  1.])
    """
    return apply(_TRUNC, _rounding(input, "trunc"))


def round(input, *, decimals: int = 0) -> Tensor:
    """Round half to even, optionally to ``decimals`` places; zero gradient.

    >>> import ember
    >>> ember.round(ember.tensor([0.5, 1.5, 2.5]))
    tensor([0., 2., 2.])
    >>> ember.round(ember.tensor([1.2345]), decimals=2)
    tensor([1.2300])
    """
    return apply(E.Round(int(decimals)), _rounding(input, "round"))


def frac(input) -> Tensor:
    """The fractional part ``x - trunc(x)`` (sign of x).

    >>> import ember
    >>> ember.frac(ember.tensor([-1.25, 2.5]))
    tensor([-0.2500,  0.5000])
    """
    x = as_tensor_arg(input, "frac")
    if not x.dtype.is_floating_point:
        raise DTypeError(f'frac: "frac_cpu" not implemented for {x.dtype} (it needs floats)')
    return apply(E.SUB, x, apply(_TRUNC, x))


fix = trunc
arcsin = asin
arccos = acos
arctan = atan
arctan2 = atan2

__all__ = [
    "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan",
    "sinh", "cosh", "asin", "acos", "atan", "atan2", "arcsin", "arccos", "arctan", "arctan2",
    "tanh", "sigmoid", "relu", "erf", "erfc", "floor", "ceil", "trunc", "fix", "round", "frac",
]  # fmt: skip

TENSOR_METHODS = {name: globals()[name] for name in __all__}
