"""A numba kernel for 2x2 max pooling on the CPU (the override in ``ember.ops.pool`` calls it).

``kernel(x, out, keep)``: each 2x2 window's maximum (NaN propagating) of a C-contiguous
float32 or float64 (N, C, H, W) array into ``out`` and ``keep`` (the private copy the
gradient reads), one pass (measured 75 us against NumPy's 214 us, 64x32x8x8 float32).

Only the forward pass has a kernel: the gradients' numba loops (the chosen element found from
the kept maxima, as the NumPy body does) measured 350-950 us against NumPy's 470-710 us on
the digits and LeNet shapes, so they stay NumPy. A kernel size known when numba compiles is
what makes the loop fast (runtime window sizes measured 3x slower), hence 2x2 only.

numba is optional: ``kernels(dtype)`` is None without it, with ``EMBER_JIT=0``, for other
dtypes, and while the module compiles in the background (``ember.backend.jit``: compiled
once, cached on disk); callers then run the op's NumPy body.
"""

from __future__ import annotations

import numpy as np

SOURCE = """
import numpy as np
from numba import njit, types


def rc(t):
    return types.Array(t, 4, "C", readonly=True)


def wc(t):
    return types.Array(t, 4, "C")


@njit([types.void(rc(t), wc(t), wc(t)) for t in (types.float32, types.float64)],
      cache=True, nogil=True)
def kernel(x, out, keep):
    n, c = x.shape[0], x.shape[1]
    ho, wo = out.shape[2], out.shape[3]
    for b in range(n):
        for ch in range(c):
            for i in range(ho):
                for j in range(wo):
                    best = x[b, ch, 2 * i, 2 * j]
                    for ki in range(2):
                        for kj in range(2):
                            v = x[b, ch, 2 * i + ki, 2 * j + kj]
                            best = v if (v > best) | (v != v) else best
                    out[b, ch, i, j] = best
                    keep[b, ch, i, j] = best
"""

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def kernels(*dtypes):
    """The compiled module (``kernel``) when numba serves ``dtypes``
    (all float32 or all float64) and the module is ready; else None (the caller runs NumPy)."""
    d = dtypes[0]
    if d not in _DTYPES or any(e != d for e in dtypes):
        return None
    from ..backend import jit as _jit

    k = _jit.kernel("maxpool", SOURCE)
    return None if k is None or k.fn is None else k.module


def maxima(mod, xp, x, shape):
    """(2x2 window maxima, a private copy of them) of a C-contiguous ``x``, one pass."""
    out = xp.empty(shape, dtype=x.dtype)
    keep = xp.empty(shape, dtype=x.dtype)
    mod.kernel(x, out, keep)
    return out, keep
