"""Pointwise helpers: addcmul / addcdiv, lerp, xlogy, logit, logaddexp, hypot, copysign,
nan_to_num, sinc, heaviside, float_power, fmax / fmin, isin, and ``ember.dropout``
(``torch.dropout``'s name for ``nn.functional.dropout``).

>>> import ember
>>> ember.lerp(ember.tensor([0.0]), ember.tensor([10.0]), 0.25)
tensor([2.5000])
"""

from __future__ import annotations

import math

from ... import dtypes as _dt
from ..._config import no_grad
from ..._errors import DTypeError
from ..._tensor import Tensor
from .. import creation as C
from ..dropout import dropout as _dropout
from ..inplace import apply_inplace
from ._arguments import _float, _t, _where

__all__ = [
    "addcmul",
    "addcdiv",
    "lerp",
    "xlogy",
    "logit",
    "deg2rad",
    "rad2deg",
    "logaddexp",
    "logaddexp2",
    "hypot",
    "signbit",
    "copysign",
    "nan_to_num",
    "sinc",
    "heaviside",
    "float_power",
    "fmax",
    "fmin",
    "isin",
    "dropout",
]


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """``input + value * tensor1 * tensor2``.

    >>> import ember
    >>> ember.addcmul(ember.ones(2), ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]), value=0.5)
    tensor([2.5000, 5.0000])
    """
    return input + value * (tensor1 * tensor2)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """``input + value * tensor1 / tensor2``.

    >>> import ember
    >>> ember.addcdiv(ember.zeros(1), ember.tensor([3.0]), ember.tensor([2.0]), value=2)
    tensor([3.])
    """
    if not (tensor1.dtype.is_floating_point or tensor2.dtype.is_floating_point):
        raise DTypeError(
            "addcdiv: integer division of tensors is not supported; use floating tensor1 or "
            f"tensor2 (got {tensor1.dtype} and {tensor2.dtype})"
        )
    return input + value * (tensor1 / tensor2)


def lerp(input: Tensor, end: Tensor, weight) -> Tensor:
    """``input + weight * (end - input)``.

    >>> import ember
    >>> ember.tensor([1.0]).lerp(ember.tensor([3.0]), 0.5)
    tensor([2.])
    """
    return input + weight * (end - input)


def xlogy(input, other) -> Tensor:
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN).

    >>> import ember
    >>> ember.xlogy(ember.tensor([0.0, 2.0]), ember.tensor([0.0, 1.0]))
    tensor([0., 0.])
    """
    x = _float(_t(input, other if isinstance(other, Tensor) else None))
    y = _float(_t(other, x))
    zero = (x == 0) & ~y.isnan()
    safe_y = _where(zero, C.ones_like(y), y)
    return _where(zero, C.zeros_like(x * safe_y), x * safe_y.log())


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(p / (1 - p))``, with ``p`` clamped to [eps, 1 - eps] when ``eps`` is given.

    >>> import ember
    >>> ember.logit(ember.tensor([0.5]))
    tensor([0.])
    """
    p = _float(input)
    if eps is not None:
        p = p.clamp(eps, 1 - eps)
    return (p / (1 - p)).log()


def deg2rad(input: Tensor) -> Tensor:
    """Degrees to radians.

    >>> import ember
    >>> ember.deg2rad(ember.tensor([180.0]))
    tensor([3.1416])
    """
    return _float(input) * (math.pi / 180.0)


def rad2deg(input: Tensor) -> Tensor:
    """Radians to degrees.

    >>> import ember
    >>> ember.rad2deg(ember.tensor([3.0]))
    tensor([171.8873])
    """
    return _float(input) * (180.0 / math.pi)


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """``log(exp(input) + exp(other))`` without overflow.

    >>> import ember
    >>> ember.logaddexp(ember.tensor([0.0]), ember.tensor([0.0]))
    tensor([0.6931])
    """
    a, b = _float(input), _float(_t(other, input))
    m = a.maximum(b)
    same = a == b  # both -inf (or +inf): exp(a - b) would be nan
    gap = _where(same, C.zeros_like(m), (a - b).abs())
    return _where(same, a + math.log(2.0), m + (-gap).exp().log1p())


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    """``log2(2**input + 2**other)`` without overflow.

    >>> import ember
    >>> ember.logaddexp2(ember.tensor([1.0]), ember.tensor([1.0]))
    tensor([2.])
    """
    ln2 = math.log(2.0)
    return logaddexp(_float(input) * ln2, _float(_t(other, input)) * ln2) / ln2


def hypot(input: Tensor, other: Tensor) -> Tensor:
    """``sqrt(input**2 + other**2)``.

    >>> import ember
    >>> ember.hypot(ember.tensor([3.0]), ember.tensor([4.0]))
    tensor([5.])
    """
    return (input * input + other * other).sqrt()


def signbit(input: Tensor) -> Tensor:
    """Whether the sign bit is set (True for -0.0 too).

    >>> import ember
    >>> ember.signbit(ember.tensor([-0.0, 0.0, -2.0]))
    tensor([ True, False,  True])
    """
    with no_grad():
        if not input.dtype.is_floating_point:
            return input < 0
        return (input < 0) | ((input == 0) & ((1.0 / input) < 0))


def copysign(input, other) -> Tensor:
    """``|input|`` with the sign of ``other``.

    >>> import ember
    >>> ember.copysign(ember.tensor([1.0, 2.0]), ember.tensor([-1.0, 0.0]))
    tensor([-1.,  2.])
    """
    x = _float(_t(input, other if isinstance(other, Tensor) else None))
    negative = signbit(_t(other, x))
    return _where(negative, -x.abs(), x.abs())


def nan_to_num(input: Tensor, nan: float = 0.0, posinf=None, neginf=None) -> Tensor:
    """NaN, +inf and -inf replaced (by 0 and the dtype's largest and lowest finite values).

    >>> import ember
    >>> ember.nan_to_num(ember.tensor([float("nan"), float("inf")]), posinf=9.0)
    tensor([0., 9.])
    """
    if not input.dtype.is_floating_point:
        return input.clone()
    info = _dt.finfo(input.dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    out = _where(input.isnan(), C.full_like(input, nan), input)
    out = _where(input == float("inf"), C.full_like(input, hi), out)
    return _where(input == float("-inf"), C.full_like(input, lo), out)


def sinc(input: Tensor) -> Tensor:
    """``sin(pi x) / (pi x)``, 1 at 0.

    >>> import ember
    >>> ember.sinc(ember.tensor([0.0, 0.5]))
    tensor([1.0000, 0.6366])
    """
    x = _float(input)
    zero = x == 0
    safe = _where(zero, C.ones_like(x), x) * math.pi
    return _where(zero, C.ones_like(x), safe.sin() / safe)


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """0 where ``input`` < 0, ``values`` where it is 0, 1 where it is > 0.

    >>> import ember
    >>> ember.heaviside(ember.tensor([-1.0, 0.0, 2.0]), ember.tensor([0.5]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    step = (input > 0).to(_dt.promote_types(input.dtype, values.dtype))
    return _where(input == 0, values.to(step.dtype).expand_as(step), step)


def float_power(input, exponent) -> Tensor:
    """``input ** exponent`` in float64.

    >>> import ember
    >>> ember.float_power(ember.tensor([2]), 3).dtype
    ember.float64
    """
    base = _t(input).to(_dt.float64)
    return base ** (exponent.to(_dt.float64) if isinstance(exponent, Tensor) else exponent)


def fmax(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum that ignores NaN (NaN only where both are NaN).

    >>> import ember
    >>> ember.fmax(ember.tensor([1.0, float("nan")]), ember.tensor([float("nan"), 2.0]))
    tensor([1., 2.])
    """
    return _where(input.isnan(), other, _where(other.isnan(), input, input.maximum(other)))


def fmin(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum that ignores NaN (NaN only where both are NaN).

    >>> import ember
    >>> ember.fmin(ember.tensor([1.0, float("nan")]), ember.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """
    return _where(input.isnan(), other, _where(other.isnan(), input, input.minimum(other)))


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each element occurs in ``test_elements``.

    >>> import ember
    >>> ember.isin(ember.tensor([1, 2, 3]), ember.tensor([2, 5]))
    tensor([False,  True, False])
    """
    e = _t(elements, test_elements if isinstance(test_elements, Tensor) else None)
    t = _t(test_elements, e).reshape(-1)
    with no_grad():
        found = (e.unsqueeze(-1) == t).any(-1) if t.numel() else C.zeros_like(e, dtype=_dt.bool_)
    return ~found if invert else found


def dropout(input: Tensor, p: float = 0.5, train: bool = True) -> Tensor:
    """``nn.functional.dropout`` under its ``torch.dropout`` name.

    >>> import ember
    >>> ember.dropout(ember.ones(3), 0.5, train=False)
    tensor([1., 1., 1.])
    """
    return _dropout(input, p, train)


def _float_power_(self: Tensor, exponent) -> Tensor:
    if self.dtype is not _dt.float64:
        raise DTypeError(
            f"float_power_: the base has dtype {self.dtype} but the result requires "
            "ember.float64; convert it first (x = x.double())"
        )
    return apply_inplace(self, float_power, exponent, name="float_power_", saves_inputs=True)
