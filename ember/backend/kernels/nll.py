"""``NllLoss`` and ``NllLossGrad`` on a GPU: one launch each (two for a 'mean' gradient with an
ignored class: the count of targets first).

The ops' bodies (``ember.ops.loss``) make about ten CuPy calls each way (the ignore mask,
``where``, ``clip``, ``take_along_axis``, a negation, the sums and the count; ``arange``, a
comparison and two ``where`` s back), and ``cross_entropy`` runs both every step.

- ``nll_loss``: each thread takes targets ``i`` (grid-stride), reads ``-logp[n, t, r]`` for
  target ``t`` clamped to ``[0, C)`` (out-of-range targets are ``CheckRange``'s to report) and
  either writes it ('none') or adds it up; the blocks' partial sums and counts are merged by
  the last block to finish (``counters.py``), in a fixed order. 'mean' divides by the count of
  targets not ignored, with the body's roundings (the sum and the count in ``logp``'s dtype).
- ``nll_loss_grad``: one thread per element of the (N, C, *) gradient: ``-g`` (over the count
  for 'mean') where the class is the element's target, else 0.

Indices are 64-bit throughout (the work is a small part of a step). Targets must be int64 and
``logp`` C-contiguous in one of the four floating-point dtypes; otherwise NotImplemented (the
body runs).

>>> nll_loss(np, np.zeros((2, 3), np.float32), np.zeros(2, np.int64), "mean", None)
NotImplemented
"""

from __future__ import annotations

import numpy as np

from . import acc_dtype, cached, fused, grid, raw_view, served, storage_kind
from .counters import LAST_BLOCK, counters
from .rows import _IO

BLOCK = 256
MAX_BLOCKS = 256  # a reduction's blocks (each merged once by the last)

_LOSS = """
__device__ __forceinline__ long long clamp_class(long long t, long long c) {
  return t < 0 ? 0 : (t >= c ? c - 1 : t);
}

// every thread's (sum, n) added up into (red[0], red_n[0]) by a tree over the block
__device__ __forceinline__ void block_sums(A* red, long long* red_n, A sum, long long n) {
  int t = threadIdx.x;
  red[t] = sum; red_n[t] = n;
  __syncthreads();
  for (int h = BLOCK / 2; h > 0; h >>= 1) {
    if (t < h) { red[t] += red[t + h]; red_n[t] += red_n[t + h]; }
    __syncthreads();
  }
}

// flags: 1 a class is ignored, 2 reduce (else 'none': one loss a target), 4 'mean',
// 8 the count (in the accumulation type) to count_out[0] too
extern "C" __global__ void ember_nll(const ST* logp, const long long* target, ST* out,
                                     A* part, long long* part_n, A* count_out,
                                     unsigned int* counter, long long m, long long c,
                                     long long s, long long ignore, long long flags) {
  __shared__ A red[BLOCK];
  __shared__ long long red_n[BLOCK];
  int t = threadIdx.x;
  A sum = 0;
  long long n = 0;
  for (long long i = (long long)blockIdx.x * BLOCK + t; i < m; i += (long long)BLOCK * gridDim.x) {
    long long k = target[i];
    A v = 0;
    if (!(flags & 1) || k != ignore) {
      long long row = i / s;
      v = -ld(logp[(row * c + clamp_class(k, c)) * s + (i - row * s)]);
      n += 1;
    }
    if (flags & 2) sum += v; else out[i] = st(v);
  }
  if (!(flags & 2)) return;
  block_sums(red, red_n, sum, n);
  if (t == 0) {
    part[blockIdx.x] = red[0]; part_n[blockIdx.x] = red_n[0];
  }
  if (!last_block(counter, gridDim.x)) return;
  volatile const A* ps = part;
  volatile const long long* pn = part_n;
  sum = 0; n = 0;
  for (int b = t; b < (int)gridDim.x; b += BLOCK) { sum += ps[b]; n += pn[b]; }
  block_sums(red, red_n, sum, n);
  if (t == 0) {
    A total = ld(st(red[0]));  // the body's sum, rounded to logp's dtype
    A count = ld(st((A)red_n[0]));
    out[0] = st((flags & 4) ? total / count : total);
    if (flags & 8) count_out[0] = count;
  }
}
"""

_GRAD = """
// flags: 1 a class is ignored, 2 g is one value (else one per target), 4 divide by the count:
// 8 count[0] (counted on the device), else n
extern "C" __global__ void ember_nll_grad(const ST* g, const long long* target, ST* out,
                                          const A* count, A n, long long total, long long c,
                                          long long s, long long ignore, long long flags) {
  long long step = (long long)BLOCK * gridDim.x;
  for (long long o = (long long)blockIdx.x * BLOCK + threadIdx.x; o < total; o += step) {
    long long row = o / (c * s), rest = o - row * c * s;
    long long cls = rest / s, i = row * s + (rest - cls * s);
    long long k = target[i];
    A v = 0;
    if (!((flags & 1) && k == ignore) && cls == (k < 0 ? 0 : (k >= c ? c - 1 : k))) {
      v = ld(st(-ld(g[(flags & 2) ? 0 : i])));  // -g in logp's dtype
      if (flags & 4) v = v / ((flags & 8) ? count[0] : n);
    }
    out[o] = st(v);
  }
}
"""


def _kernel(xp, kind: str, dtype):
    storage = storage_kind(dtype)

    def build():
        acc, io = _IO[storage]
        head = f"#define BLOCK {BLOCK}\ntypedef {acc} A;\n" + io
        src, name = (
            (LAST_BLOCK + _LOSS, "ember_nll") if kind == "loss" else (_GRAD, "ember_nll_grad")
        )
        return xp.RawKernel(head + src, name)

    return cached(("nll", kind, storage), build)


def _serves(xp, logp, target) -> bool:
    return (
        fused(xp)
        and served(logp.dtype)
        and target.dtype == np.int64
        and target.size > 0
        and logp.ndim >= 2
        and logp.shape[1] > 0
        and logp.flags.c_contiguous
        and target.flags.c_contiguous
    )


def _layout(logp, target) -> tuple:
    """``(classes, positions per row)`` of (N, C, *) ``logp``; None unless ``target`` has one
    element a row and position."""
    s = 1
    for d in logp.shape[2:]:
        s *= d
    return (logp.shape[1], s) if target.size == logp.shape[0] * s else None


def _reduce(xp, logp, target, reduction: str, ignore, count_out=None):
    """The loss kernel's launch; returns its output (0-d for a reduction)."""
    c, s = _layout(logp, target)
    m = target.size
    acc = acc_dtype(logp.dtype)
    reduce = reduction != "none"
    flags = (ignore is not None) + 2 * reduce + 4 * (reduction == "mean")
    out = xp.empty(() if reduce else target.shape, logp.dtype)
    blocks = min(grid(m, BLOCK * 4), MAX_BLOCKS) if reduce else grid(m, BLOCK)
    part = xp.empty(blocks if reduce else 1, acc)
    part_n = xp.empty(blocks if reduce else 1, np.int64)
    i64 = np.int64
    args = (raw_view(xp, logp), target, raw_view(xp, out), part, part_n)
    args += (part if count_out is None else count_out, counters(xp, logp, 1))  # flag 8
    args += (i64(m), i64(c), i64(s), i64(0 if ignore is None else ignore))
    k = _kernel(xp, "loss", logp.dtype)
    k((blocks,), (BLOCK,), args + (i64(flags | (8 if count_out is not None else 0)),))
    return out


def nll_loss(xp, logp, target, reduction: str, ignore):
    """``NllLoss``: ``-logp`` at each target's class, reduced; NotImplemented where it does
    not serve."""
    if not _serves(xp, logp, target) or _layout(logp, target) is None:
        return NotImplemented
    return _reduce(xp, logp, target, reduction, ignore)


def nll_loss_grad(xp, g, logp, target, reduction: str, ignore):
    """``NllLossGrad``: ``-g`` (over the count of targets not ignored, for 'mean') at each
    target's class, 0 elsewhere, in ``logp``'s shape and dtype; NotImplemented where it does
    not serve."""
    one = reduction != "none"
    if not _serves(xp, logp, target) or _layout(logp, target) is None:
        return NotImplemented
    if g.dtype != logp.dtype or (g.size != 1 if one else g.shape != target.shape):
        return NotImplemented
    c, s = _layout(logp, target)
    acc = acc_dtype(logp.dtype)
    counted = reduction == "mean" and ignore is not None  # the count on the device first
    count = xp.empty(1, acc)
    if counted:
        _reduce(xp, logp, target, "sum", ignore, count_out=count)
    n = acc.type(logp.dtype.type(target.size))  # the body's count, in logp's dtype
    g = xp.ascontiguousarray(g)
    out = xp.empty(logp.shape, logp.dtype)
    flags = (ignore is not None) + 2 * one + 4 * (reduction == "mean") + 8 * counted
    i64 = np.int64
    args = (raw_view(xp, g), target, raw_view(xp, out), count, n, i64(out.size), i64(c), i64(s))
    k = _kernel(xp, "grad", logp.dtype)
    k((grid(out.size, BLOCK),), (BLOCK,), args + (i64(0 if ignore is None else ignore), i64(flags)))
    return out


__all__ = ["nll_loss", "nll_loss_grad"]
