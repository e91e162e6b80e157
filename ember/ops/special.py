"""Modified Bessel functions of the first kind as primitives: ``I0`` and ``I1`` (NumPy has only
``i0`` and CuPy only in cupyx; SciPy is not a dependency). ``I0``'s gradient is ``I1``, and
``I1``'s is ``I0 - I1 / x``, so gradients of every order follow.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(I0(), ember.tensor([0.0, 1.0], dtype=ember.float64))
tensor([1.0000, 1.2661], dtype=ember.float64)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..backend.arrays import errstate
from .base import apply
from .elementwise import EQ, Unary, const_like, div, mul, sub, where

_SWITCH = 30.0  # the power series below it, the asymptotic expansion above
_SERIES_TERMS = 50  # the last term is below 1e-20 of the sum at x = 30
_ASYMPTOTIC_TERMS = 25  # likewise for the expansion at x = 30


def bessel_i_array(xp, x, order: int):
    """I0(x) (``order`` 0) or I1(x) (``order`` 1) to float64 accuracy, in x's dtype.

    >>> import numpy as np
    >>> [f"{float(bessel_i_array(np, np.array(v), n)):.6g}" for v, n in ((1.0, 0), (40.0, 1))]
    ['1.26607', '1.47074e+16']
    """
    dtype = x.dtype
    ax = xp.abs(x.astype(np.float64))
    # I_n(x) = (x/2)^n sum_k (x^2/4)^k / (k! (k+n)!)
    s = xp.minimum(ax, _SWITCH)
    q = s * s / 4.0
    term = xp.ones_like(s) if order == 0 else s / 2.0
    series = term
    for k in range(1, _SERIES_TERMS):
        term = term * q / (k * (k + order))
        series = series + term
    # I_n(x) ~ e^x / sqrt(2 pi x) sum_k prod_{j<=k} ((2j-1)^2 - 4n^2) / (8 j x)
    y = xp.maximum(ax, _SWITCH)
    term = xp.ones_like(y)
    expansion = term
    for j in range(1, _ASYMPTOTIC_TERMS):
        term = term * (((2 * j - 1) ** 2 - 4 * order * order) / (8.0 * j)) / y
        expansion = expansion + term
    with errstate(xp, over="ignore", invalid="ignore"):
        half = xp.exp(y / 2.0)  # e^y as two factors: the result overflows only when I_n does
        asymptotic = half * (half * expansion / xp.sqrt(2.0 * math.pi * y))
        out = xp.where(ax <= _SWITCH, series, asymptotic)
        if order == 1:
            out = xp.where(x < 0, -out, out)
        return out.astype(dtype, copy=False)


@dataclass(frozen=True)
class I0(Unary):
    """The modified Bessel function of the first kind of order 0."""

    saves_inputs = True

    def forward(self, xp, x):
        return bessel_i_array(xp, x, 0)

    def vjp(self, g, out, x):
        return (mul(g, apply(I1(), x)),)


@dataclass(frozen=True)
class I1(Unary):
    """The modified Bessel function of the first kind of order 1."""

    saves_inputs = True

    def forward(self, xp, x):
        return bessel_i_array(xp, x, 1)

    def vjp(self, g, out, x):
        zero = apply(EQ, x, const_like(x, 0.0))
        safe = where(zero, const_like(x, 1.0), x)
        slope = sub(apply(I0(), x), div(apply(I1(), safe), safe))
        return (mul(g, where(zero, const_like(x, 0.5), slope)),)
