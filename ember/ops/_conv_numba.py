"""numba kernels for the convolutions' channels-last patches on the CPU: their gather (the
override of ``Conv2d`` in ``ember.ops.conv`` hands it to the op's body) and its adjoint, the
scatter-add of the input gradient's patch rows (``Conv2dGradInput``'s override).

``gather(x, cols, sh, sw, ph, pw, dh, dw)``: the (N, Ho, Wo, kh, kw, C) patches of a
channels-last (N, H, W, C) input straight from it, zeros where a window reaches into the padding:
one pass that writes each patch row once, instead of NumPy's zero-padded copy of the input and
then a strided copy of the patches (measured on the digits model's shapes, 64 images, 3x3, pad
1: 186 us against 517 us at 32x8x8, 44 against 77 at 32x4x4, 87 against 115 at 64x4x4).

``scatter(cols, out, sh, sw, dh, dw)``: adds the (N, Ho, Wo, kh, kw, C) patch rows of an input
gradient into the zero-padded channels-last (N, H + 2ph, W + 2pw, C) gradient, in one pass
(NumPy's body adds kh * kw strided windows, one GEMM each).

Inputs in other layouts (NCHW memory: a strided gather per channel) are left to NumPy:
``filler(dtype)`` returns a function that answers False for them.

numba is optional: ``kernels(dtype)`` is None without it, with ``EMBER_JIT=0``, for dtypes
other than float32 and float64, and while the module compiles in the background
(``ember.backend.jit``); the op's NumPy body runs then.
"""

from __future__ import annotations

from ..backend import jit as _jit

SOURCE = """
import numpy as np
from numba import njit, prange, types


def rc(t, nd):
    return types.Array(t, nd, "C", readonly=True)


def wc(t, nd):
    return types.Array(t, nd, "C")


I = types.int64
SIGS = [types.void(rc(t, 4), wc(t, 6), I, I, I, I, I, I) for t in (types.float32, types.float64)]


@njit(SIGS, cache=True, nogil=True, error_model="numpy", parallel=True)
def gather(x, cols, sh, sw, ph, pw, dh, dw):
    n, h, w, c = x.shape
    ho, wo, kh, kw = cols.shape[1], cols.shape[2], cols.shape[3], cols.shape[4]
    for b in prange(n):  # images over numba's threads
        for oh in range(ho):
            for ow in range(wo):
                for i in range(kh):
                    ih = oh * sh - ph + i * dh
                    for j in range(kw):
                        iw = ow * sw - pw + j * dw
                        if 0 <= ih < h and 0 <= iw < w:
                            for ch in range(c):
                                cols[b, oh, ow, i, j, ch] = x[b, ih, iw, ch]
                        else:
                            for ch in range(c):
                                cols[b, oh, ow, i, j, ch] = 0


@njit(
    [types.void(rc(t, 6), wc(t, 4), I, I, I, I) for t in (types.float32, types.float64)],
    cache=True,
    nogil=True,
    error_model="numpy",
    parallel=True,
)
def scatter(cols, out, sh, sw, dh, dw):
    n, ho, wo, kh, kw, c = cols.shape
    if dw == 1:  # a window's row is kw * c contiguous values in both: one vector loop
        rows = cols.reshape((n, ho, wo, kh, kw * c))
        flat = out.reshape((n, out.shape[1], out.shape[2] * c))
        for b in prange(n):
            for oh in range(ho):
                for ow in range(wo):
                    at = ow * sw * c
                    for i in range(kh):
                        dst = flat[b, oh * sh + i * dh, at : at + kw * c]
                        src = rows[b, oh, ow, i]
                        for k in range(kw * c):
                            dst[k] += src[k]
        return
    for b in prange(n):
        for oh in range(ho):
            for ow in range(wo):
                for i in range(kh):
                    ih = oh * sh + i * dh
                    for j in range(kw):
                        iw = ow * sw + j * dw
                        for ch in range(c):
                            out[b, ih, iw, ch] += cols[b, oh, ow, i, j, ch]


kernel = gather
"""


def kernels(dtype):
    """The compiled module (``gather``) when numba serves ``dtype`` and the module is ready;
    else None (the caller runs NumPy)."""
    return _jit.float_module("conv_gather", SOURCE, dtype)


def filler(mod):
    """``fill(x, cols, stride, padding, dilation) -> bool``: writes the (N, Ho, Wo, kh, kw, C)
    patches of ``x`` (N, C, H, W) into ``cols`` where ``x`` is channels-last memory (True),
    else leaves them to the caller (False)."""

    def fill(x, cols, stride, padding, dilation) -> bool:
        t = x.transpose(0, 2, 3, 1)
        if not t.flags.c_contiguous or x.dtype != cols.dtype:
            return False
        mod.gather(t, cols, *stride, *padding, *dilation)
        return True

    return fill
