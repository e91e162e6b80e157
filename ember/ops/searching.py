"""Searching sorted data and counting into bins: ``SearchSorted`` (``searchsorted``,
``bucketize``) and ``Histc`` (``histc``).

Both have static output shapes (the values' shape; ``(bins,)``), so eager mode,
``ember.compile`` and static graphs run them as one op. Neither is differentiable (integer
indices; counts, as in PyTorch). ``SearchSorted`` is PyTorch's binary search, vectorized over
all values at once (one step per halving of the sorted dim): its comparisons
(``!(b >= v)`` / ``!(b > v)``) decide where NaN goes, which NumPy's ``searchsorted`` orders
differently.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(SearchSorted(), ember.tensor([1, 3, 5]), ember.tensor([0, 3, 6]))
tensor([0, 1, 3])
>>> apply(Histc(4, 0.0, 3.0), ember.tensor([1.0, 2.0, 1.0]))
tensor([0., 2., 1., 0.])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import dtypes as _dt
from .._errors import EmberError, ShapeError
from ..backend.arrays import scatter_add
from .base import Op, Spec


def check_searchsorted(name: str, seq_shape: tuple, values_shape: tuple) -> None:
    """PyTorch's shape rules: the sorted sequence has at least one dim, and either one dim or
    the leading dims of the values (the values' last dim is free)."""
    if len(seq_shape) == 0:
        raise ShapeError(
            f"{name}: boundaries tensor should have positive dimension, but got 0 dimension"
        )
    if len(seq_shape) > 1 and tuple(seq_shape[:-1]) != tuple(values_shape[:-1]):
        raise ShapeError(
            f"{name}: boundaries tensor should be 1 dimension or the first N-1 dimensions of "
            f"boundaries tensor and input value tensor must match, but got boundaries tensor "
            f"{tuple(seq_shape)} and input value tensor {tuple(values_shape)}"
        )


@dataclass(frozen=True)
class SearchSorted(Op):
    """For each value, the index in the sorted last dim of ``seq`` where it would be inserted
    (the first position whose element is >= it; > it when ``right``); int64, or int32 with
    ``out_int32``. ``seq`` is 1-D (for values of any shape) or shares the values' leading dims.
    Both inputs have one dtype (the public functions promote them)."""

    right: bool = False
    out_int32: bool = False
    differentiable = False

    def forward(self, xp, seq, values):
        n = seq.shape[-1]
        if seq.ndim == 1:
            rows, vals = seq, values.reshape(-1)
        else:
            rows = seq.reshape(-1, n)
            vals = values.reshape(rows.shape[0], -1)
        lo = xp.zeros(vals.shape, np.int64)
        hi = xp.full(vals.shape, n, np.int64)
        for _ in range(int(n).bit_length()):  # each step halves every open interval
            mid = (lo + hi) >> 1
            at = xp.minimum(mid, n - 1)  # closed intervals (lo == hi) read a valid element
            b = rows[at] if seq.ndim == 1 else xp.take_along_axis(rows, at, axis=1)
            # PyTorch's lower / upper bound: go right unless b >= v (b > v)
            go_right = ~(b > vals) if self.right else ~(b >= vals)
            open_ = lo < hi
            lo = xp.where(open_ & go_right, mid + 1, lo)
            hi = xp.where(open_ & ~go_right, mid, hi)
        return lo.reshape(values.shape).astype(np.int32 if self.out_int32 else np.int64)

    def infer(self, seq, values):
        check_searchsorted("searchsorted", tuple(seq.shape), tuple(values.shape))
        if seq.dtype != values.dtype:
            raise EmberError(
                f"SearchSorted: boundaries and values must have one dtype, got {seq.dtype} and "
                f"{values.dtype}"
            )
        return Spec(tuple(values.shape), _dt.int32 if self.out_int32 else _dt.int64)


@dataclass(frozen=True)
class Histc(Op):
    """A histogram of ``bins`` equal bins over [min, max] in ``x``'s dtype; when
    ``min == max`` the range is the data's (read when the op runs), widened by 1 on each side
    if that is a single point (the one case that reads values back from a GPU, as PyTorch's
    does). Elements outside the range (and NaN) are not counted; the last
    bin includes its right edge. Bins are found as PyTorch's kernel does, in ``x``'s dtype:
    ``int((x - min) * bins / (max - min))``."""

    bins: int
    min: float = 0.0
    max: float = 0.0
    differentiable = False

    def forward(self, xp, x):
        flat = x.reshape(-1)
        lo, hi = float(self.min), float(self.max)
        if lo == hi and flat.size:
            lo, hi = float(flat.min()), float(flat.max())  # the data's range (a host read)
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise EmberError(
                f"histc: range of [{lo:g}, {hi:g}] is not finite (input of shape "
                f"{tuple(x.shape)} and dtype {_dt.from_numpy_dtype(x.dtype)})"
            )
        t = x.dtype.type
        left, right, bins = t(lo), t(hi), self.bins
        inside = (flat >= left) & (flat <= right)
        pos = (flat - left) * t(bins) / (right - left)
        pos = xp.clip(xp.where(inside, pos, t(0)), 0, bins - 1)  # the last bin keeps its edge
        counts = xp.zeros(bins, np.int64)  # scatter-add: no size read back from a GPU
        scatter_add(counts, (pos.astype(np.int64),), inside.astype(np.int64))
        return counts.astype(x.dtype)

    def infer(self, x):
        if not x.dtype.is_floating_point:
            raise EmberError(f"histc: expected a floating input, got {x.dtype}")
        return Spec((int(self.bins),), x.dtype)


__all__ = ["Histc", "SearchSorted", "check_searchsorted"]
