"""More math: pointwise helpers (addcmul, lerp, xlogy, logaddexp, nan_to_num, ...), special
functions (lgamma, digamma, erfinv), NaN-aware and order statistics (nansum, median, quantile,
mode, kthvalue), scans (cummax, cummin, logcumsumexp) and finite differences (diff,
trapezoid).

Everything differentiable is composed from ember ops, so gradients of every order come with
it; order statistics send their gradient to the selected element, as PyTorch does.

The family is a package, one module per topic: ``pointwise``, ``transcendental`` (the special
functions), ``statistics`` (NaN-aware reductions, order statistics, moments), ``scans`` and
``differences``; this module gathers their ``__all__`` and ``TENSOR_METHODS``.

>>> import ember
>>> ember.lerp(ember.tensor([0.0]), ember.tensor([10.0]), 0.25)
tensor([2.5000])
"""

from ..inplace import inplace_method
from .differences import cumulative_trapezoid, diff, trapezoid, trapz
from .pointwise import (
    _float_power_,
    addcdiv,
    addcmul,
    copysign,
    deg2rad,
    dropout,
    float_power,
    fmax,
    fmin,
    heaviside,
    hypot,
    isin,
    lerp,
    logaddexp,
    logaddexp2,
    logit,
    nan_to_num,
    rad2deg,
    signbit,
    sinc,
    xlogy,
)
from .scans import cummax, cummin, logcumsumexp
from .statistics import (
    aminmax,
    kthvalue,
    median,
    mode,
    nanmean,
    nanmedian,
    nanquantile,
    nansum,
    quantile,
    std_mean,
    var_mean,
)
from .transcendental import digamma, erfinv, i0, lgamma

__all__ = [
    "addcmul", "addcdiv", "lerp", "xlogy", "logit", "deg2rad", "rad2deg", "logaddexp",
    "logaddexp2", "hypot", "signbit", "copysign", "nan_to_num", "sinc", "heaviside",
    "float_power", "fmax", "fmin", "isin", "i0", "lgamma", "digamma", "erfinv", "nansum", "nanmean",
    "median", "nanmedian", "kthvalue", "mode", "quantile", "nanquantile", "cummax", "cummin",
    "logcumsumexp", "std_mean", "var_mean", "aminmax", "diff", "trapezoid", "trapz",
    "cumulative_trapezoid", "dropout",
]  # fmt: skip

_NOT_METHODS = {
    "isin", "std_mean", "var_mean", "trapezoid", "trapz", "cumulative_trapezoid", "dropout",
}  # fmt: skip
TENSOR_METHODS = {name: globals()[name] for name in __all__ if name not in _NOT_METHODS}
TENSOR_METHODS.update(
    addcmul_=inplace_method(addcmul, "addcmul_"),
    addcdiv_=inplace_method(addcdiv, "addcdiv_"),
    lerp_=inplace_method(lerp, "lerp_"),
    nan_to_num_=inplace_method(nan_to_num, "nan_to_num_"),
    logit_=inplace_method(logit, "logit_"),
    copysign_=inplace_method(copysign, "copysign_"),
    hypot_=inplace_method(hypot, "hypot_"),
    xlogy_=inplace_method(xlogy, "xlogy_"),
    lgamma_=inplace_method(lgamma, "lgamma_"),
    digamma_=inplace_method(digamma, "digamma_"),
    erfinv_=inplace_method(erfinv, "erfinv_"),
    i0_=inplace_method(i0, "i0_"),
    deg2rad_=inplace_method(deg2rad, "deg2rad_"),
    rad2deg_=inplace_method(rad2deg, "rad2deg_"),
    sinc_=inplace_method(sinc, "sinc_"),
    heaviside_=inplace_method(heaviside, "heaviside_"),
    float_power_=_float_power_,
)
