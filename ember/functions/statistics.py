"""Covariance, correlation and histograms: ``torch.cov``, ``torch.corrcoef``,
``torch.histogram``. ``cov`` and ``corrcoef`` are differentiable composites (rows are variables,
columns observations); ``histogram`` counts, and has no gradient.

>>> import ember
>>> ember.cov(ember.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
tensor([[ 1., -1.],
        [-1.,  1.]])
"""

from __future__ import annotations

import math
import warnings

from .. import dtypes as _dt
from .. import return_types as RT
from .._config import no_grad
from .._errors import DTypeError, ShapeError
from .._tensor import Tensor
from ._promote import to_float
from .creation import linspace, zeros
from .elementwise import where
from .indexing import scatter_add
from .linalg import mm
from .searching import searchsorted


def _check_weights(w: Tensor, name: str, n_obs: int, integral: bool) -> None:
    if w.ndim > 1:
        raise ShapeError(
            f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
            f"{w.ndim} dimensions"
        )
    if integral and w.dtype.is_floating_point or w.dtype is _dt.bool_:
        raise DTypeError(
            f"cov(): expected {name} to have integral dtype but got {name} with {w.dtype} dtype"
        )
    if not integral and not w.dtype.is_floating_point:
        raise DTypeError(
            f"cov(): expected {name} to have floating point dtype but got {name} with "
            f"{w.dtype} dtype"
        )
    if w.numel() != n_obs:
        raise ShapeError(
            f"cov(): expected {name} to have the same numel as there are observations in the "
            f"input but got {w.numel()} != {n_obs}"
        )
    if _has_values(w):
        with no_grad():
            if w.numel() and bool((w < 0).any().item()):
                raise ShapeError(f"cov(): {name} cannot be negative")


def _has_values(t) -> bool:
    """Whether ``t`` holds data (a symbolic tensor of a graph being built does not: the checks
    on its values are left to eager runs)."""
    return not (isinstance(t, Tensor) and getattr(t._data, "is_symbol", False))


def cov(
    input: Tensor, *, correction: int = 1, fweights: Tensor | None = None, aweights=None
) -> Tensor:
    """The covariance matrix of the variables in ``input``'s rows (a 1-D input is one
    variable), with frequency weights ``fweights`` (integers) and observation weights
    ``aweights``; ``correction`` 1 is Bessel's.

    >>> import ember
    >>> ember.cov(ember.tensor([1.0, 2.0, 4.0]))
    tensor(2.3333)
    """
    if input.ndim > 2:
        raise ShapeError(
            "cov(): expected input to have two or fewer dimensions but got an input with "
            f"{input.ndim} dimensions"
        )
    x = to_float(input if input.ndim == 2 else input.reshape(1, -1))
    n_obs = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights(fweights, "fweights", n_obs, integral=True)
        w = fweights
    if aweights is not None:
        _check_weights(aweights, "aweights", n_obs, integral=False)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum, avg = n_obs, x.mean(1)
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    if isinstance(norm, Tensor):
        if _has_values(norm):
            with no_grad():
                _warn_dof(bool((norm <= 0).item()))
        norm = where(norm <= 0, norm * 0, norm)
    else:
        _warn_dof(norm <= 0)
        norm = max(norm, 0)
    centered = x - avg.unsqueeze(1)
    c = mm(centered, (centered if w is None else centered * w).transpose(0, 1))
    return (c / norm).squeeze()


def _warn_dof(few: bool) -> None:
    if few:
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "number of observations.",
            UserWarning,
            stacklevel=3,
        )


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the variables in ``input``'s rows, clipped to
    [-1, 1].

    >>> import ember
    >>> ember.corrcoef(ember.tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    if input.ndim > 2:
        raise ShapeError(
            "corrcoef(): expected input to have two or fewer dimensions but got an input with "
            f"{input.ndim} dimensions"
        )
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    return c.clip(-1, 1)


def _outer_edges(x: Tensor, range) -> tuple[float, float]:
    """PyTorch's histogram range: ``range``, else the data's (widened by 0.5 each way when
    it is one value; 0 to 1 for no data)."""
    if range is not None:
        lo, hi = float(range[0]), float(range[1])
    elif x.numel() == 0:
        lo, hi = 0.0, 1.0
    else:
        with no_grad():
            lo, hi = x.min().item(), x.max().item()
    if lo > hi:
        raise ShapeError(
            f"histogram: min should not exceed max, but got min {lo:g} max {hi:g} for dimension 0"
        )
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ShapeError(f"histogram: the range [{lo:g}, {hi:g}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


def histogram(
    input: Tensor, bins, *, range=None, weight: Tensor | None = None, density: bool = False
):
    """Counts (or summed ``weight``) of ``input``'s elements in ``bins`` equal bins over
    ``range`` (default: the data's), or between the edges of a 1-D ``bins`` tensor; the last
    bin includes its right edge, values outside are not counted. ``density`` divides by the
    total and the bin widths. Returns ``(hist, bin_edges)``.

    >>> import ember
    >>> ember.histogram(ember.tensor([1.0, 2.0, 1.0, 4.0]), 3)
    ember.return_types.histogram(
    hist=tensor([2., 1., 1.]),
    bin_edges=tensor([1., 2., 3., 4.]))
    """
    if not input.dtype.is_floating_point:
        raise DTypeError(f"histogram: expected a floating input, got {input.dtype}")
    if isinstance(bins, Tensor):
        if bins.ndim != 1:
            raise ShapeError(
                f"histogram: bins tensor should have one dimension, but got {bins.ndim} dimensions"
            )
        if bins.dtype is not input.dtype:
            raise DTypeError(
                f"histogram: input tensor and bins tensors should have the same dtype, but got "
                f"input with dtype {input.dtype} and bins with dtype {bins.dtype}"
            )
        edges, n_bins = bins.detach(), bins.shape[0] - 1
    else:
        n_bins = int(bins)
    if n_bins <= 0:
        raise ShapeError(f"histogram(): bins must be > 0, but got {n_bins} for dimension 0")
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise ShapeError(
            f"histogram: weight should have the same shape as the input, but got input with "
            f"shape {tuple(input.shape)} and weight with shape {tuple(weight.shape)}"
        )
    with no_grad():
        x = input.detach().reshape(-1)
        if not isinstance(bins, Tensor):
            lo, hi = _outer_edges(x, range)
            edges = linspace(lo, hi, n_bins + 1, dtype=input.dtype, device=input.device)
        w = x.new_ones(x.shape) if weight is None else weight.detach().reshape(-1)
        inside = (x >= edges[0]) & (x <= edges[-1])
        pos = (searchsorted(edges, x, right=True) - 1).clamp(0, n_bins - 1)
        hist = scatter_add(
            zeros(n_bins, dtype=input.dtype, device=input.device),
            0,
            pos,
            where(inside, w, w.new_zeros(())).to(input.dtype),
        )
        if density:
            hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return RT.histogram(hist, edges)


__all__ = ["cov", "corrcoef", "histogram"]
TENSOR_METHODS = {name: globals()[name] for name in __all__}
