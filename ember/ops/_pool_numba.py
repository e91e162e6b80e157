"""numba kernels for max pooling on the CPU (the overrides in ``ember.ops.pool`` call them).

One pass each, for any kernel, stride, padding, dilation and ceil mode, float32 and float64,
any strides of the arrays (numba ``A`` layout):

- ``kernel(x, out, arg, ...)``: each window's maximum into ``out`` and its position in the
  (H, W) plane into ``arg`` (int32), by PyTorch's rule: the first in-bounds element, replaced
  by each later one that is greater or NaN (so the first maximum, or the last NaN);
- ``scatter(g, arg, out)``: ``out`` (zeroed, the input's shape) += ``g`` at ``arg``;
- ``gather(h, arg, out)``: ``out`` = ``h`` at ``arg``.

numba is optional: ``kernels(dtype)`` is None without it, with ``EMBER_JIT=0``, for other
dtypes, and while the module compiles in the background (``ember.static.passes._jit``: compiled
once, cached on disk); callers then run the op's NumPy body.
"""

from __future__ import annotations

import numpy as np

SOURCE = """
import numpy as np
from numba import njit, types


def ra(t):
    return types.Array(t, 4, "A", readonly=True)


def wa(t):
    return types.Array(t, 4, "A")


I = types.int64
SIGS = [types.void(ra(t), wa(t), wa(types.int32), I, I, I, I, I, I, I, I) for t in
        (types.float32, types.float64)]


@njit(SIGS, cache=True, nogil=True)
def kernel(x, out, arg, kh, kw, sh, sw, ph, pw, dh, dw):
    n, c, h, w = x.shape
    ho, wo = out.shape[2], out.shape[3]
    for b in range(n):
        for ch in range(c):
            for i in range(ho):
                r0 = i * sh - ph
                for j in range(wo):
                    q0 = j * sw - pw
                    best = x[b, ch, 0, 0]
                    pos = -1
                    for ki in range(kh):
                        r = r0 + ki * dh
                        if r < 0 or r >= h:
                            continue
                        for kj in range(kw):
                            q = q0 + kj * dw
                            if q < 0 or q >= w:
                                continue
                            v = x[b, ch, r, q]
                            if pos < 0 or v > best or v != v:
                                best = v
                                pos = r * w + q
                    out[b, ch, i, j] = best
                    arg[b, ch, i, j] = pos


SIGS_MOVE = [types.void(ra(t), ra(types.int32), wa(t)) for t in (types.float32, types.float64)]


@njit(SIGS_MOVE, cache=True, nogil=True)
def scatter(g, arg, out):
    n, c, ho, wo = g.shape
    w = out.shape[3]
    for b in range(n):
        for ch in range(c):
            for i in range(ho):
                for j in range(wo):
                    p = arg[b, ch, i, j]
                    out[b, ch, p // w, p % w] += g[b, ch, i, j]


@njit(SIGS_MOVE, cache=True, nogil=True)
def gather(h, arg, out):
    n, c, ho, wo = out.shape
    w = h.shape[3]
    for b in range(n):
        for ch in range(c):
            for i in range(ho):
                for j in range(wo):
                    p = arg[b, ch, i, j]
                    out[b, ch, i, j] = h[b, ch, p // w, p % w]
"""

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def kernels(*dtypes):
    """The compiled module (``kernel``, ``scatter``, ``gather``) when numba serves ``dtypes``
    (all float32 or all float64) and the module is ready; else None (the caller runs NumPy)."""
    d = dtypes[0]
    if d not in _DTYPES or any(e != d for e in dtypes):
        return None
    from ..static.passes import _jit  # lazily: ops sit below ember.static

    k = _jit.kernel("maxpool", SOURCE)
    return None if k is None or k.fn is None else k.module


def empty_like_layout(xp, x, shape, dtype):
    """An empty (N, C, Ho, Wo) array laid out as ``x`` is: channels-last when ``x`` is."""
    n, c, ho, wo = shape
    if not x.flags.c_contiguous and x.strides[1] == x.itemsize and c > 1:
        return xp.empty((n, ho, wo, c), dtype=dtype).transpose(0, 3, 1, 2)
    return xp.empty(shape, dtype=dtype)


def argmax(mod, op, xp, x, shape):
    """(window maxima, their int32 positions in the (H, W) plane) of ``x`` under ``op``."""
    out = empty_like_layout(xp, x, shape, x.dtype)
    arg = xp.empty(shape, dtype=np.int32)
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = op.kernel, op.stride, op.padding, op.dilation
    mod.kernel(x, out, arg, kh, kw, sh, sw, ph, pw, dh, dw)
    return out, arg
