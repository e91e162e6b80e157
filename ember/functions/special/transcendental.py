"""Special (non-elementary) functions: ``i0`` (the modified Bessel function of order 0),
``lgamma``, ``digamma`` and ``erfinv``. The series run in float64 (``_wide``).
"""

from __future__ import annotations

import math

from ... import dtypes as _dt
from ..._config import no_grad
from ..._tensor import Tensor
from ...ops.base import apply
from ...ops.special import I0
from .. import creation as C
from ._arguments import _float, _where

__all__ = ["i0", "lgamma", "digamma", "erfinv"]


def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 0 (its gradient is ``I1``).

    >>> import ember
    >>> ember.i0(ember.tensor([0.0, 1.0, -2.0]))
    tensor([1.0000, 1.2661, 2.2796])
    """
    return apply(I0(), _float(input))


def _wide(input: Tensor) -> Tensor:
    """The input in float64: the series below lose float32's last digits to cancellation."""
    return input.to(_dt.float64)


_SHIFT = 8  # recurrences carry x up to x + 8, where the asymptotic series are accurate


def _lgamma_positive(x: Tensor) -> Tensor:
    prod = x
    for k in range(1, _SHIFT):
        prod = prod * (x + k)
    y = x + _SHIFT
    inv, inv2 = 1.0 / y, 1.0 / (y * y)
    series = 0.0
    for c in (1 / 156, -691 / 360360, 1 / 1188, -1 / 1680, 1 / 1260, -1 / 360, 1 / 12):
        series = series * inv2 + c
    series = series * inv
    stirling = (y - 0.5) * y.log() - y + 0.5 * math.log(2 * math.pi) + series
    return stirling - prod.log()


def lgamma(input: Tensor) -> Tensor:
    """log |Gamma(x)| (reflection below 0; inf at the poles 0, -1, -2, ...).

    >>> import ember
    >>> ember.lgamma(ember.tensor([3.0, 0.5, -0.5]))
    tensor([0.6931, 0.5724, 1.2655])
    """
    x = _wide(input)
    positive = x > 0
    pos = _lgamma_positive(_where(positive, x, 1 - x))
    reflect_x = _where(positive, C.full_like(x, 0.5), x)
    reflected = math.log(math.pi) - (reflect_x * math.pi).sin().abs().log() - pos
    return _where(positive, pos, reflected).to(_float(input).dtype)


def _digamma_positive(x: Tensor) -> Tensor:
    shift = 0
    for k in range(_SHIFT):
        shift = shift + 1.0 / (x + k)
    y = x + _SHIFT
    inv2 = 1.0 / (y * y)
    series = 0.0
    for c in (1 / 12, -691 / 32760, 1 / 132, -1 / 240, 1 / 252, -1 / 120, 1 / 12):
        series = series * inv2 + c
    series = series * inv2
    return y.log() - 0.5 / y - series - shift


def digamma(input: Tensor) -> Tensor:
    """The logarithmic derivative of Gamma (``lgamma``'s derivative).

    >>> import ember
    >>> ember.digamma(ember.tensor([1.0]))
    tensor([-0.5772])
    """
    x = _wide(input)
    positive = x > 0
    pos = _digamma_positive(_where(positive, x, 1 - x))
    reflect_x = _where(positive, C.full_like(x, 0.5), x)
    reflected = pos - math.pi / (reflect_x * math.pi).tan()
    out = _where(positive, pos, reflected)
    pole = (x <= 0) & (x == x.floor())
    return _where(pole, C.full_like(x, float("nan")), out).to(_float(input).dtype)


def erfinv(input: Tensor) -> Tensor:
    """The inverse of ``erf`` on (-1, 1) (±inf at ±1, NaN outside).

    >>> import ember
    >>> ember.erfinv(ember.tensor([0.0, 0.5]))
    tensor([0.0000, 0.4769])
    """
    x = _wide(input)
    with no_grad():  # Giles' approximation as the start, refined by Newton on erf
        w = -((1 - x) * (1 + x)).clamp(min=1e-300).log()
        small = w < 5
        ws = w - 2.5
        p1 = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):  # fmt: skip
            p1 = c + p1 * ws
        wl = w.clamp(min=5).sqrt() - 3
        p2 = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                  -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):  # fmt: skip
            p2 = c + p2 * wl
        guess = _where(small, p1, p2) * x
    inside = x.abs() < 1
    y = _where(inside, guess, C.zeros_like(x))
    xi = _where(inside, x, C.zeros_like(x))
    for _ in range(2):  # Newton: y -= (erf(y) - x) / erf'(y); the last step carries the gradient
        y = y - (y.erf() - xi) / ((-(y * y)).exp() * (2 / math.sqrt(math.pi)))
    edge = _where(x > 0, C.full_like(x, float("inf")), C.full_like(x, float("-inf")))
    out = _where(x.abs() == 1, edge, y)
    return _where(x.abs() > 1, C.full_like(x, float("nan")), out).to(_float(input).dtype)
