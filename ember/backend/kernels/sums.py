"""Sums over leading axes on the GPU as one matrix product with a row of ones.

A bias or LayerNorm-weight gradient sums a (rows, cols) array over its rows. CuPy reduces a
leading axis with a generic kernel (measured on an H100: about 130 us for 8192 x 3072 bfloat16,
four times what memory bandwidth allows) and, for float16 / bfloat16, ember first widened the
array to float32 for the accumulation. ``ones(1, rows) @ x`` is a cuBLAS GEMM that reads ``x``
once at full bandwidth and accumulates 16-bit inputs in float32 (``CUBLAS_COMPUTE_32F``),
rounding once, as ``Sum.forward`` does. float32 takes this path only while TF32 is off for
matrix products (PyTorch's default), so a sum never loses precision to TF32. It goes through
``xp.matmul``, which a captured step (CUDA graph) replaces with a direct cuBLAS call.

This is the CUDA override of ``ember.ops.reduce.Sum`` and of ``ember.ops.broadcast.SumTo``
(registered there); it returns ``NotImplemented`` for anything else (other axes, non-contiguous
or integer arrays), and the op's ``forward`` runs.

``affine_sums`` is the CUDA override of ``ember.ops.norm.AffineSums`` where the parameters span
the last axes (layer norm's weight and bias gradients): the two column sums ``sum g * y`` and
``sum g`` of (rows, cols) arrays in one pass, in float32 (float64 for float64) without widening
copies. A 256-thread block covers 32 adjacent columns (coalesced reads) and a slice of the rows
in 8 groups; the last block of a column tile to finish adds the slices' partial sums in a fixed
order (``counters.py``), so results are deterministic, in one launch.

>>> leading_sum(np, np.ones((4, 3), np.float32), (0,), False)
NotImplemented
"""

from __future__ import annotations

import numpy as np

from .. import cuda as _flags
from . import acc_dtype, cached, fused, raw_view, served, storage_kind
from . import conv as _conv
from .counters import LAST_BLOCK, counters
from .matmul import apply_precision, state_applied
from .rows import _IO


def _ones(xp, rows: int, dtype, device: int):
    """A cached (1, rows) row of ones on ``device`` (never written)."""
    return cached(("ones", device, rows, np.dtype(dtype).str), lambda: xp.ones((1, rows), dtype))


def leading_sum(xp, x, axis, keepdim: bool):
    """``x.sum(axis, keepdims=keepdim)`` for ``axis == (0, ..., k-1)``, ``k < x.ndim``."""
    if not fused(xp) or not axis or not served(x.dtype) or x.size == 0:
        return NotImplemented
    k = len(axis)
    if axis != tuple(range(k)) or k >= x.ndim or not x.flags.c_contiguous:
        return NotImplemented
    if x.dtype == np.float32:
        if _flags.matmul_allows_tf32():
            return NotImplemented
        if state_applied() != _flags.state["version"]:
            apply_precision(xp)
    rows = 1
    for s in x.shape[:k]:
        rows *= s
    ones = _ones(xp, rows, x.dtype, _conv.device_id(x))
    out = xp.matmul(ones, x.reshape(rows, x.size // rows))
    shape = (1,) * k + x.shape[k:] if keepdim else x.shape[k:]
    return out.reshape(shape).astype(x.dtype, copy=False)


_AFFINE_SUMS = """
__device__ __forceinline__ void column_sums(A* s0, A* s1, A a, A b) {  // over the 8 groups
  int t = threadIdx.x;
  s0[t] = a; s1[t] = b;
  __syncthreads();
  for (int s = 128; s >= 32; s >>= 1) {
    if (t < s) { s0[t] += s0[t + s]; s1[t] += s1[t + s]; }
    __syncthreads();
  }
}

extern "C" __global__ void ember_affine_sums(const ST* g, const ST* y, A* part, ST* out,
                                             unsigned int* count, long long rows_,
                                             long long cols_, long long per_) {
  __shared__ A s0[256];
  __shared__ A s1[256];
  long long rows = rows_, cols = cols_, per = per_;
  long long tiles = (cols + 31) / 32, slices = gridDim.x / tiles;
  long long tile = blockIdx.x % tiles, slice = blockIdx.x / tiles;
  int t = threadIdx.x, lane = t % 32, group = t / 32;
  long long c = tile * 32 + lane;
  long long end = (slice + 1) * per < rows ? (slice + 1) * per : rows;
  A a = 0, b = 0;
  if (c < cols) {
    for (long long r = slice * per + group; r < end; r += 8) {
      A gv = ld(g[r * cols + c]);
      a += gv * ld(y[r * cols + c]);
      b += gv;
    }
  }
  column_sums(s0, s1, a, b);
  if (group == 0 && c < cols) {
    part[(slice * cols + c) * 2] = s0[t];
    part[(slice * cols + c) * 2 + 1] = s1[t];
  }
  if (!last_block(count + tile, (unsigned int)slices)) return;
  // the tile's last block: its columns' partials, slices p = group, group + 8, ... then a tree
  volatile const A* ps = part;
  a = 0; b = 0;
  if (c < cols) {
    for (long long p = group; p < slices; p += 8) {
      a += ps[(p * cols + c) * 2];
      b += ps[(p * cols + c) * 2 + 1];
    }
  }
  column_sums(s0, s1, a, b);
  if (group == 0 && c < cols) {
    out[c] = st(s0[t]);
    out[cols + c] = st(s1[t]);
  }
}
"""


def _affine_kernel(xp, dtype):
    storage = storage_kind(dtype)
    acc, io = _IO[storage]
    code = f"typedef {acc} A;\n" + io + LAST_BLOCK + _AFFINE_SUMS
    return cached(("affine_sums", storage), lambda: xp.RawKernel(code, "ember_affine_sums"))


def affine_sums(xp, g, y, rows: int, cols: int):
    """``AffineSums`` over the rows of (rows, cols) views of ``g`` and ``y``: the (2, cols)
    [sum g * y, sum g] in ``y``'s dtype, accumulated in float32 (float64 for float64)."""
    if not fused(xp) or not served(y.dtype) or g.dtype != y.dtype or y.size == 0:
        return NotImplemented
    g2 = xp.ascontiguousarray(g).reshape(rows, cols)
    y2 = xp.ascontiguousarray(y).reshape(rows, cols)
    tiles = -(-cols // 32)
    slices = max(1, min(-(-1024 // tiles), -(-rows // 64)))
    per = -(-rows // slices)
    part = xp.empty((slices * cols, 2), acc_dtype(y.dtype))
    out = xp.empty((2, cols), y.dtype)
    i64 = np.int64
    args = (raw_view(xp, g2), raw_view(xp, y2), part, raw_view(xp, out), counters(xp, y, tiles))
    _affine_kernel(xp, y.dtype)((tiles * slices,), (256,), args + (i64(rows), i64(cols), i64(per)))
    return out
