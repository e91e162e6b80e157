"""NaN-aware reductions (nansum, nanmean), order statistics (median, nanmedian, kthvalue,
mode, quantile, nanquantile) and moments with the mean (std_mean, var_mean), aminmax.

Order statistics send their gradient to the selected element, as PyTorch does.
"""

from __future__ import annotations

from ... import dtypes as _dt
from ... import return_types as RT
from ..._errors import DTypeError, ShapeError
from ..._shape import wrap_dim
from ..._tensor import Tensor
from ...ops.base import apply
from ...ops.reduce import ModeIndex
from .. import creation as C
from ._arguments import _where

__all__ = [
    "nansum",
    "nanmean",
    "median",
    "nanmedian",
    "kthvalue",
    "mode",
    "quantile",
    "nanquantile",
    "std_mean",
    "var_mean",
    "aminmax",
]


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
    return RT.median(values, _select(idx, k, d, keepdim))


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
    return RT.nanmedian(values, _select(idx, k, d, keepdim))


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False):
    """The ``k``-th smallest element along ``dim`` (1-based) and its index.

    >>> import ember
    >>> ember.kthvalue(ember.tensor([3.0, 1.0, 2.0]), 2)
    ember.return_types.kthvalue(
    values=tensor(2.),
    indices=tensor(2))
    """
    x, s, idx, d = _order(input, dim, "kthvalue")
    if not 1 <= k <= x.shape[d]:
        raise ShapeError(
            f"kthvalue: k ({k}) must be in [1, {x.shape[d]}] for dimension {d} of shape "
            f"{tuple(input.shape)}"
        )
    pos = _position(x, d, k - 1)
    return RT.kthvalue(_select(s, pos, d, keepdim), _select(idx, pos, d, keepdim))


def mode(input: Tensor, dim: int = -1, keepdim: bool = False):
    """The most frequent value along ``dim`` (the smallest on ties) and its last index.

    >>> import ember
    >>> ember.mode(ember.tensor([1, 2, 2, 3, 3]))
    ember.return_types.mode(
    values=tensor(2),
    indices=tensor(2))
    """
    d = wrap_dim(dim, max(input.ndim, 1), "mode")
    src = input if input.ndim else input.reshape(1)
    pos = apply(ModeIndex(d), src)
    values = src.gather(d, pos)
    if not keepdim or input.ndim == 0:
        values, pos = values.squeeze(d), pos.squeeze(d)
    return RT.mode(values, pos)


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
    from ..shape import stack

    return stack(results, 0)


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
    ember.return_types.aminmax(
    min=tensor(1),
    max=tensor(7))
    """
    if dim is None:
        lo, hi = input.amin(), input.amax()
        if keepdim:
            lo, hi = lo.reshape(*([1] * input.ndim)), hi.reshape(*([1] * input.ndim))
        return RT.aminmax(lo, hi)
    return RT.aminmax(input.amin(dim, keepdim=keepdim), input.amax(dim, keepdim=keepdim))
