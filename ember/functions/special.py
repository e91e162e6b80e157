"""More math: pointwise helpers (addcmul, lerp, xlogy, logaddexp, nan_to_num, ...), special
functions (lgamma, digamma, erfinv), NaN-aware and order statistics (nansum, median, quantile,
mode, kthvalue), scans (cummax, cummin, logcumsumexp) and finite differences (diff,
trapezoid).

Everything differentiable is composed from ember ops, so gradients of every order come with
it; order statistics send their gradient to the selected element, as PyTorch does.

>>> import ember
>>> ember.lerp(ember.tensor([0.0]), ember.tensor([10.0]), 0.25)
tensor([2.5000])
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .. import backend as _backend
from .. import dtypes as _dt
from .._config import no_grad
from .._errors import DTypeError, ShapeError
from .._shape import wrap_dim
from .._tensor import Tensor
from ..ops.base import apply
from ..ops.special import I0
from . import creation as C
from .dropout import dropout as _dropout
from .inplace import apply_inplace, inplace_method

values_indices = namedtuple("values_indices", ["values", "indices"])
median_result = namedtuple("median", ["values", "indices"])
mode_result = namedtuple("mode", ["values", "indices"])
kthvalue_result = namedtuple("kthvalue", ["values", "indices"])
cummax_result = namedtuple("cummax", ["values", "indices"])
cummin_result = namedtuple("cummin", ["values", "indices"])
aminmax_result = namedtuple("aminmax", ["min", "max"])


def _t(x, like: Tensor | None = None) -> Tensor:
    if isinstance(x, Tensor):
        return x
    device = like.device if like is not None else None
    dtype = like.dtype if like is not None and like.dtype.is_floating_point else None
    return C.tensor(x, dtype=dtype, device=device)


def _float(x: Tensor) -> Tensor:
    return x if x.dtype.is_floating_point else x.to(_dt.get_default_dtype())


def _where(cond, a, b):
    from .elementwise import where

    return where(cond, a, b)


# -- pointwise ---------------------------------------------------------------------------------


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


# -- special functions ----------------------------------------------------------------------


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


# -- NaN-aware reductions and order statistics ----------------------------------------------


def nansum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The sum treating NaN as 0.

    >>> import ember
    >>> ember.nansum(ember.tensor([1.0, float("nan"), 2.0]))
    tensor(3.)
    """
    x = input if dtype is None else input.to(dtype)
    if x.dtype.is_floating_point:
        x = _where(x.isnan(), C.zeros_like(x), x)
    return x.sum() if dim is None and not keepdim else x.sum(dim, keepdim=keepdim)


def nanmean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The mean of the non-NaN elements.

    >>> import ember
    >>> ember.nanmean(ember.tensor([1.0, float("nan"), 2.0]))
    tensor(1.5000)
    """
    x = input if dtype is None else input.to(dtype)
    if not x.dtype.is_floating_point:
        raise DTypeError(f"nanmean: expected a floating input, got {x.dtype}")
    count = (~x.isnan()).to(x.dtype)
    total = nansum(x, dim, keepdim)
    n = count.sum() if dim is None and not keepdim else count.sum(dim, keepdim=keepdim)
    return total / n


def _select(sorted_: Tensor, index: Tensor, dim: int, keepdim: bool) -> Tensor:
    out = sorted_.gather(dim, index)
    return out if keepdim else out.squeeze(dim)


def _order(input: Tensor, dim, name: str):
    """(values sorted along dim, their indices, dim) with NaN sorted last."""
    if dim is None:
        x, d = input.reshape(-1), 0
    else:
        x, d = input, wrap_dim(dim, max(input.ndim, 1), name)
        if input.ndim == 0:
            x = input.reshape(1)
    if x.shape[d] == 0:
        raise ShapeError(
            f"{name}: cannot compute on an empty dimension (shape {tuple(input.shape)})"
        )
    s = x.sort(d)
    return x, s.values, s.indices, d


def _position(x: Tensor, d: int, k) -> Tensor:
    shape = list(x.shape)
    shape[d] = 1
    if isinstance(k, Tensor):
        return k.reshape(*shape).long()
    return C.full(tuple(shape), int(k), dtype=_dt.int64, device=x.device)


def median(input: Tensor, dim: int | None = None, keepdim: bool = False):
    """The lower median: of all elements (a 0-d tensor), or along ``dim`` as (values, indices).
    NaN if the elements include NaN.

    >>> import ember
    >>> ember.median(ember.tensor([3.0, 1.0, 2.0, 4.0]))
    tensor(2.)
    """
    x, s, idx, d = _order(input, dim, "median")
    n = x.shape[d]
    if input.dtype.is_floating_point:
        has_nan = x.isnan().any(d, keepdim=True)
        k = _where(
            has_nan, C.full_like(has_nan, n - 1, dtype=_dt.int64), _position(x, d, (n - 1) // 2)
        )
    else:
        k = _position(x, d, (n - 1) // 2)
    values = _select(s, k, d, keepdim or False)
    if dim is None:
        return values.reshape(())
    return median_result(values, _select(idx, k, d, keepdim))


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False):
    """``median`` ignoring NaN (NaN only where a slice is all NaN).

    >>> import ember
    >>> ember.nanmedian(ember.tensor([float("nan"), 1.0, 5.0, 3.0]))
    tensor(3.)
    """
    x, s, idx, d = _order(input, dim, "nanmedian")
    if input.dtype.is_floating_point:
        count = (~x.isnan()).long().sum(d, keepdim=True)
        k = ((count - 1).clamp(min=0)) // 2
        k = _where(count == 0, C.full_like(k, x.shape[d] - 1), k)
    else:
        k = _position(x, d, (x.shape[d] - 1) // 2)
    values = _select(s, k, d, keepdim)
    if dim is None:
        return values.reshape(())
    return median_result(values, _select(idx, k, d, keepdim))


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False):
    """The ``k``-th smallest element along ``dim`` (1-based) and its index.

    >>> import ember
    >>> ember.kthvalue(ember.tensor([3.0, 1.0, 2.0]), 2)
    kthvalue(values=tensor(2.), indices=tensor(2))
    """
    x, s, idx, d = _order(input, dim, "kthvalue")
    if not 1 <= k <= x.shape[d]:
        raise ShapeError(
            f"kthvalue: k ({k}) must be in [1, {x.shape[d]}] for dimension {d} of shape "
            f"{tuple(input.shape)}"
        )
    pos = _position(x, d, k - 1)
    return kthvalue_result(_select(s, pos, d, keepdim), _select(idx, pos, d, keepdim))


def mode(input: Tensor, dim: int = -1, keepdim: bool = False):
    """The most frequent value along ``dim`` (the smallest on ties) and its last index.

    >>> import ember
    >>> ember.mode(ember.tensor([1, 2, 2, 3, 3]))
    mode(values=tensor(2), indices=tensor(2))
    """
    d = wrap_dim(dim, max(input.ndim, 1), "mode")
    arr = _backend.to_device(input.detach()._data, _backend.CPU)
    arr = arr.reshape(1) if arr.ndim == 0 else arr
    moved = np.moveaxis(arr, d, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    best = np.empty(flat.shape[0], dtype=np.int64)
    for r, row in enumerate(flat):
        values, counts = np.unique(row, return_counts=True)
        winner = values[np.argmax(counts)]
        best[r] = np.flatnonzero(row == winner)[-1]
    index = C.tensor(best.reshape(moved.shape[:-1]), device=input.device)
    pos = index.unsqueeze(d) if input.ndim else index.reshape(1)
    src = input if input.ndim else input.reshape(1)
    values = src.gather(d, pos)
    if not keepdim or input.ndim == 0:
        values, pos = values.squeeze(d), pos.squeeze(d)
    return mode_result(values, pos)


def quantile(input: Tensor, q, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:  # fmt: skip
    """The ``q``-th quantiles (a number or a 1-D tensor, in [0, 1]) of all elements or along
    ``dim``, interpolating as ``interpolation`` says; NaN where a slice holds NaN.

    >>> import ember
    >>> ember.quantile(ember.tensor([1.0, 2.0, 3.0, 4.0]), 0.5)
    tensor(2.5000)
    """
    return _quantile(input, q, dim, keepdim, interpolation, "quantile", ignore_nan=False)


def nanquantile(input: Tensor, q, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:  # fmt: skip
    """``quantile`` ignoring NaN.

    >>> import ember
    >>> ember.nanquantile(ember.tensor([1.0, float("nan"), 3.0]), 0.5)
    tensor(2.)
    """
    return _quantile(input, q, dim, keepdim, interpolation, "nanquantile", ignore_nan=True)


def _quantile(input, q, dim, keepdim, interpolation, name, ignore_nan):
    if not input.dtype.is_floating_point:
        raise DTypeError(f"{name}: input tensor must be either float or double, got {input.dtype}")
    if interpolation not in ("linear", "lower", "higher", "nearest", "midpoint"):
        raise ShapeError(
            f"{name}: interpolation must be one of linear, lower, higher, midpoint or nearest, "
            f"got {interpolation!r}"
        )
    qs = q.tolist() if isinstance(q, Tensor) else q
    scalar_q = not isinstance(qs, list)
    qs = [qs] if scalar_q else qs
    if isinstance(q, Tensor) and q.ndim > 1:
        raise ShapeError(f"{name}: q must be a scalar or 1D tensor, got shape {tuple(q.shape)}")
    for v in qs:
        if not 0 <= v <= 1:
            raise ShapeError(f"{name}: q must be in the range [0, 1] but got {v}")
    x, s, _, d = _order(input, dim, name)
    n = x.shape[d]
    nan_in = x.isnan()
    count = (~nan_in).to(x.dtype).sum(d, keepdim=True) if ignore_nan else None
    results = []
    for v in qs:
        last = (count - 1).clamp(min=0) if ignore_nan else C.full(
            tuple(1 if i == d else sz for i, sz in enumerate(x.shape)), n - 1.0, dtype=x.dtype,
            device=x.device,
        )  # fmt: skip
        pos = last * v
        lo, hi = pos.floor(), pos.ceil()
        if interpolation == "lower":
            hi = lo
        elif interpolation == "higher":
            lo = hi
        elif interpolation == "nearest":
            lo = hi = pos.round()
        a = s.gather(d, lo.long())
        b = s.gather(d, hi.long())
        if interpolation == "midpoint":
            out = a + (b - a) * 0.5
        elif interpolation == "linear":
            out = a + (b - a) * (pos - lo)
        else:
            out = a
        bad = (count == 0) if ignore_nan else nan_in.any(d, keepdim=True)
        out = _where(bad, C.full_like(out, float("nan")), out)
        if not keepdim:
            out = out.squeeze(d)
        elif dim is None:
            out = out.reshape(*([1] * input.ndim))
        results.append(out)
    if scalar_q:
        return results[0] if dim is not None or keepdim else results[0].reshape(())
    from .shape import stack

    return stack(results, 0)


# -- scans -----------------------------------------------------------------------------------


def _cum_extreme(input: Tensor, dim: int, take_max: bool, name: str):
    d = wrap_dim(dim, max(input.ndim, 1), name)
    x = input.reshape(1) if input.ndim == 0 else input
    arr = _backend.to_device(x.detach()._data, _backend.CPU)
    acc = np.maximum if take_max else np.minimum
    running = acc.accumulate(arr, axis=d) if arr.size else arr
    shape = [1] * arr.ndim
    shape[d] = arr.shape[d]
    positions = np.broadcast_to(np.arange(arr.shape[d]).reshape(shape), arr.shape)
    hit = (arr == running) | np.isnan(arr)
    index = (
        np.maximum.accumulate(np.where(hit, positions, 0), axis=d)
        if arr.size
        else arr.astype(np.int64)
    )
    idx = C.tensor(index.astype(np.int64), device=input.device)
    values = x.gather(d, idx)
    if input.ndim == 0:
        values, idx = values.reshape(()), idx.reshape(())
    return values, idx


def cummax(input: Tensor, dim: int):
    """Running maximum along ``dim`` and where it was (the latest index on ties).

    >>> import ember
    >>> ember.cummax(ember.tensor([1.0, 3.0, 2.0]), 0).values
    tensor([1., 3., 3.])
    """
    return cummax_result(*_cum_extreme(input, dim, True, "cummax"))


def cummin(input: Tensor, dim: int):
    """Running minimum along ``dim`` and where it was (the latest index on ties).

    >>> import ember
    >>> ember.cummin(ember.tensor([3.0, 1.0, 2.0]), 0).indices
    tensor([0, 1, 1])
    """
    return cummin_result(*_cum_extreme(input, dim, False, "cummin"))


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input)))`` along ``dim``, computed stably.

    >>> import ember
    >>> ember.logcumsumexp(ember.tensor([0.0, 0.0]), 0)
    tensor([0.0000, 0.6931])
    """
    x = _float(input)
    d = wrap_dim(dim, max(x.ndim, 1), "logcumsumexp")
    with no_grad():
        m = x.amax(d, keepdim=True) if x.numel() else x
        m = _where(m.isfinite(), m, C.zeros_like(m))
    return (x - m).exp().cumsum(d).log() + m


# -- moments, differences, integrals ---------------------------------------------------------


def _with_mean(stat, input: Tensor, dim, unbiased, keepdim: bool, correction) -> tuple:
    spread = stat(dim, unbiased, keepdim, correction=correction)
    mean = input.mean() if dim is None and not keepdim else input.mean(dim, keepdim=keepdim)
    return spread, mean


def std_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    """``(std, mean)`` in one call.

    >>> import ember
    >>> ember.std_mean(ember.tensor([1.0, 3.0]))
    (tensor(1.4142), tensor(2.))
    """
    return _with_mean(input.std, input, dim, unbiased, keepdim, correction)


def var_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    """``(var, mean)`` in one call.

    >>> import ember
    >>> ember.var_mean(ember.tensor([1.0, 3.0]))
    (tensor(2.), tensor(2.))
    """
    return _with_mean(input.var, input, dim, unbiased, keepdim, correction)


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False):
    """``(min, max)`` of all elements or along ``dim``.

    >>> import ember
    >>> ember.aminmax(ember.tensor([2, 7, 1]))
    aminmax(min=tensor(1), max=tensor(7))
    """
    if dim is None:
        lo, hi = input.amin(), input.amax()
        if keepdim:
            lo, hi = lo.reshape(*([1] * input.ndim)), hi.reshape(*([1] * input.ndim))
        return aminmax_result(lo, hi)
    return aminmax_result(input.amin(dim, keepdim=keepdim), input.amax(dim, keepdim=keepdim))


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (after adding ``prepend`` / ``append``).

    >>> import ember
    >>> ember.diff(ember.tensor([1, 4, 9, 16]))
    tensor([3, 5, 7])
    """
    if input.ndim == 0:
        raise ShapeError("diff: expects input to be at least one-dimensional")
    d = wrap_dim(dim, input.ndim, "diff")
    parts = [p for p in (prepend, input, append) if p is not None]
    if len(parts) > 1:
        from .shape import cat

        parts = [p if isinstance(p, Tensor) else C.tensor(p, device=input.device) for p in parts]
        x = cat(
            [
                p.expand(*[s if i == d else input.shape[i] for i, s in enumerate(p.shape)])
                if p.ndim == input.ndim
                else p
                for p in parts
            ],
            d,
        )
    else:
        x = input
    for _ in range(n):
        length = x.shape[d]
        if length == 0:
            break
        a, b = x.narrow(d, 1, length - 1), x.narrow(d, 0, length - 1)
        x = (a != b) if x.dtype is _dt.bool_ else a - b
    return x


def _spacing(y: Tensor, x: Tensor | None, dx, d: int):
    """Half the width of each trapezoid along ``d``: ``dx / 2`` or ``diff(x) / 2`` shaped to
    broadcast against ``y``."""
    if x is None:
        return (1.0 if dx is None else dx) / 2.0
    spacing = diff(x, dim=d if x.ndim == y.ndim else -1)
    if x.ndim == 1 and y.ndim > 1:
        shape = [1] * y.ndim
        shape[d] = y.shape[d] - 1
        spacing = spacing.reshape(*shape)
    return spacing / 2.0


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """The integral of ``y`` along ``dim`` by the trapezoid rule (points ``x`` or spacing
    ``dx``, default 1).

    >>> import ember
    >>> ember.trapezoid(ember.tensor([1.0, 2.0, 3.0]))
    tensor(4.)
    """
    d = wrap_dim(dim, max(y.ndim, 1), "trapezoid")
    n = y.shape[d]
    if n == 0:
        return _float(y).sum(d)
    left, right = y.narrow(d, 0, n - 1), y.narrow(d, 1, n - 1)
    return ((left + right) * _spacing(y, x, dx, d)).sum(d)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """The running trapezoid integral along ``dim`` (one element shorter than ``y``).

    >>> import ember
    >>> ember.cumulative_trapezoid(ember.tensor([1.0, 2.0, 3.0]))
    tensor([1.5000, 4.0000])
    """
    d = wrap_dim(dim, max(y.ndim, 1), "cumulative_trapezoid")
    n = y.shape[d]
    left, right = y.narrow(d, 0, max(n - 1, 0)), y.narrow(d, min(1, n), max(n - 1, 0))
    return ((left + right) * _spacing(y, x, dx, d)).cumsum(d)


def dropout(input: Tensor, p: float = 0.5, train: bool = True) -> Tensor:
    """``nn.functional.dropout`` under its ``torch.dropout`` name.

    >>> import ember
    >>> ember.dropout(ember.ones(3), 0.5, train=False)
    tensor([1., 1., 1.])
    """
    return _dropout(input, p, train)


trapz = trapezoid


def _float_power_(self: Tensor, exponent) -> Tensor:
    if self.dtype is not _dt.float64:
        raise DTypeError(
            f"float_power_: the base has dtype {self.dtype} but the result requires "
            "ember.float64; convert it first (x = x.double())"
        )
    return apply_inplace(self, float_power, exponent, name="float_power_", saves_inputs=True)


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
