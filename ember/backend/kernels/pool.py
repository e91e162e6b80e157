"""``MaxPool2d`` and its gradient ``MaxPoolScatter`` on a GPU: one kernel each.

The ops' bodies gather every window (a padded copy, a strided view, ``max``) and, backward,
find each window's chosen element (``argmax``, the NaN rule), turn it into flat positions and
scatter-add ``g`` there: about 25 CuPy launches for ResNet's 3x3 / stride 2 / padding 1 pool.

- ``max_pool``: one thread per output element scans its window in order (positions outside
  the input count as -inf, as the body's padding), keeping the maximum; a NaN stays.
- ``max_pool_scatter``: one thread per input element, no atomics: for each window that covers
  the element it finds the window's chosen element by the body's rule (the first maximum;
  the last NaN where there is one) and, if that is this element, adds the window's ``g``
  (accumulated in float32, float64 for float64, rounded once).

(N, C, H, W) C-contiguous float inputs only; anything else (channels-last memory, integers)
gets NotImplemented and the op's body runs.

>>> max_pool(np, np.zeros((1, 1, 2, 2), np.float32), (2, 2), (2, 2), (0, 0), (1, 1), (1, 1))
NotImplemented
"""

from __future__ import annotations

import numpy as np

from . import cached, fused, grid, raw_view, served, storage_kind
from .rows import _IO

BLOCK = 256

_WINDOW = """
#define NEG_INF ((A)__uint_as_float(0xff800000u))
struct Pool { long long h, w, ho, wo, kh, kw, sh, sw, ph, pw, dh, dw; };

// value k (row-major in the window) of window (oy, ox) in plane p, -inf outside the input
__device__ __forceinline__ A tap(const ST* p, const Pool& q, long long oy, long long ox, int k) {
  long long y = oy * q.sh - q.ph + (k / q.kw) * q.dh, x = ox * q.sw - q.pw + (k % q.kw) * q.dw;
  return (y >= 0 && y < q.h && x >= 0 && x < q.w) ? ld(p[y * q.w + x]) : NEG_INF;
}

// the window's chosen element: the first maximum, or the last NaN where there is one
__device__ __forceinline__ int chosen(const ST* p, const Pool& q, long long oy, long long ox) {
  int best = 0, nan = -1;
  A m = tap(p, q, oy, ox, 0);
  if (m != m) nan = 0;
  for (int k = 1; k < q.kh * q.kw; ++k) {
    A v = tap(p, q, oy, ox, k);
    if (v != v) nan = k;
    else if (v > m) { m = v; best = k; }
  }
  return nan >= 0 ? nan : best;
}

// the geometry, passed as 12 scalars s0..s11 (h, w, ho, wo, kh, kw, sh, sw, ph, pw, dh, dw;
// spelt out in each signature, which CuPy's stand-ins read)
#define POOL_GEOMETRY Pool q = {s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11}
#define EACH(i, n) \
  for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; \
       i += (long long)BLOCK * gridDim.x)

// element i of (planes, rows, cols): its plane, row and column
__device__ __forceinline__ void place(long long i, long long rows, long long cols,
                                      long long& plane, long long& r, long long& c) {
  plane = i / (rows * cols);
  long long rest = i - plane * rows * cols;
  r = rest / cols;
  c = rest - r * cols;
}
"""

_FORWARD = """
extern "C" __global__ void ember_max_pool(const ST* x, ST* y, long long n, long long s0,
    long long s1, long long s2, long long s3, long long s4, long long s5, long long s6,
    long long s7, long long s8, long long s9, long long s10, long long s11) {
  POOL_GEOMETRY;
  EACH(i, n) {
    long long plane, oy, ox;
    place(i, q.ho, q.wo, plane, oy, ox);
    const ST* p = x + plane * q.h * q.w;
    A m = NEG_INF;
    for (int k = 0; k < q.kh * q.kw; ++k) {
      A v = tap(p, q, oy, ox, k);
      if (v != v || v > m) m = v;
      if (m != m) break;
    }
    y[i] = st(m);
  }
}
"""

_SCATTER = """
extern "C" __global__ void ember_max_pool_scatter(const ST* g, const ST* x, ST* dx, long long n,
    long long s0, long long s1, long long s2, long long s3, long long s4, long long s5,
    long long s6, long long s7, long long s8, long long s9, long long s10, long long s11) {
  POOL_GEOMETRY;
  EACH(i, n) {
    long long plane, y, x0;
    place(i, q.h, q.w, plane, y, x0);
    const ST* p = x + plane * q.h * q.w;
    const ST* gp = g + plane * q.ho * q.wo;
    A acc = 0;
    for (int k = 0; k < q.kh * q.kw; ++k) {  // the windows whose tap k is this element
      long long ty = y + q.ph - (k / q.kw) * q.dh, tx = x0 + q.pw - (k % q.kw) * q.dw;
      if (ty < 0 || tx < 0 || ty % q.sh || tx % q.sw) continue;
      long long oy = ty / q.sh, ox = tx / q.sw;
      if (oy >= q.ho || ox >= q.wo) continue;
      if (chosen(p, q, oy, ox) == k) acc += ld(gp[oy * q.wo + ox]);
    }
    dx[i] = st(acc);
  }
}
"""


def _kernel(xp, kind: str, dtype):
    storage = storage_kind(dtype)

    def build():
        acc, io = _IO[storage]
        head = f"#define BLOCK {BLOCK}\ntypedef {acc} A;\n" + io + _WINDOW
        if kind == "max":
            return xp.RawKernel(head + _FORWARD, "ember_max_pool")
        return xp.RawKernel(head + _SCATTER, "ember_max_pool_scatter")

    return cached(("max_pool", kind, storage), build)


def _serves(xp, x) -> bool:
    return fused(xp) and x.ndim == 4 and x.size > 0 and served(x.dtype) and x.flags.c_contiguous


def _geometry(x, out_hw, kernel, stride, padding, dilation) -> tuple:
    h, w = x.shape[2:]
    return tuple(np.int64(v) for v in (h, w, *out_hw, *kernel, *stride, *padding, *dilation))


def max_pool(xp, x, kernel, stride, padding, dilation, out_hw):
    """``MaxPool2d``: each window's maximum (NaN propagating), (N, C, Ho, Wo)."""
    if not _serves(xp, x):
        return NotImplemented
    y = xp.empty(x.shape[:2] + tuple(out_hw), x.dtype)
    if y.size == 0:
        return NotImplemented
    geometry = _geometry(x, out_hw, kernel, stride, padding, dilation)
    args = (raw_view(xp, x), raw_view(xp, y), np.int64(y.size)) + geometry
    _kernel(xp, "max", x.dtype)((grid(y.size, BLOCK),), (BLOCK,), args)
    return y


def max_pool_scatter(xp, g, x, kernel, stride, padding, dilation):
    """``MaxPoolScatter``: ``g`` added at each window's chosen element of ``x``, in ``x``'s
    shape and ``g``'s dtype."""
    if not _serves(xp, x) or g.dtype != x.dtype or g.shape[:2] != x.shape[:2]:
        return NotImplemented
    g = xp.ascontiguousarray(g)
    dx = xp.empty(x.shape, x.dtype)
    geometry = _geometry(x, g.shape[2:], kernel, stride, padding, dilation)
    args = (raw_view(xp, g), raw_view(xp, x), raw_view(xp, dx), np.int64(x.size)) + geometry
    _kernel(xp, "scatter", x.dtype)((grid(x.size, BLOCK),), (BLOCK,), args)
    return dx


__all__ = ["max_pool", "max_pool_scatter"]
