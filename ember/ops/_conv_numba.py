"""numba kernels for the convolutions' channels-last patches on the CPU: their gather (the
override of ``Conv2d`` in ``ember.ops.conv`` hands it to the op's body) and its adjoint, the
scatter-add of the input gradient's patch rows (``Conv2dGradInput``'s override).

``gather(x, cols, sh, sw, ph, pw, dh, dw)``: the (N, Ho, Wo, kh, kw, C) patches of a
channels-last (N, H, W, C) input straight from it, zeros where a window reaches into the padding:
one pass that writes each patch row once, instead of NumPy's zero-padded copy of the input and
then a strided copy of the patches (measured on the digits model's shapes, 64 images, 3x3, pad
1: 186 us against 517 us at 32x8x8, 44 against 77 at 32x4x4, 87 against 115 at 64x4x4; with
unsigned indices, medians of 200 calls at 2 threads: 163 -> 116 us at 32x8x8, 538 -> 275 at
LeNet-5's second layer, 6x14x14 with 5x5).

``gather_planar(x, cols, ...)``: the channel-first (C, kh, kw, N, Ho, Wo) patches of a
C-contiguous (N, C, H, W) input (``im2col``'s ``"planar"`` layout, for few channels): rows are
runs of input rows (LeNet-5's first layer, 1x28x28 with 5x5, pad 2: 248 us against 518 for
NumPy's copy of the padded input's strided view).

``scatter(cols, out, sh, sw, dh, dw)``: adds the (N, Ho, Wo, kh, kw, C) patch rows of an input
gradient into the zero-padded channels-last (N, H + 2ph, W + 2pw, C) gradient, in one pass
(NumPy's body adds kh * kw strided windows, one GEMM each).

``channels_last(x, out)``: an NCHW array's channels-last copy (``to_channels_last``), for
the gather of a C-contiguous input and Winograd's input transform. Inputs in other layouts
(neither C-contiguous nor channels-last) are left to NumPy: ``filler(mod)`` returns a function
that answers False for them.

numba is optional: ``kernels(dtype)`` is None without it, with ``EMBER_JIT=0``, for dtypes
other than float32 and float64, and while the module compiles in the background
(``ember.backend.jit``); the op's NumPy body runs then.
"""

from __future__ import annotations

import numpy as np

from ..backend import jit as _jit

SOURCE = """
import numpy as np
from numba import njit, prange, types, uint64


def rc(t, nd):
    return types.Array(t, nd, "C", readonly=True)


def wc(t, nd):
    return types.Array(t, nd, "C")


I = types.int64
SIGS = [types.void(rc(t, 4), wc(t, 6), I, I, I, I, I, I) for t in (types.float32, types.float64)]


# Indices are unsigned (``U``): numba then skips its negative-index wraparound, so the copy
# loops compile to vector code (the gathers ran 1.4-3x faster than with signed indices).
U = uint64


@njit(SIGS, cache=True, nogil=True, error_model="numpy", parallel=True)
def gather(x, cols, sh, sw, ph, pw, dh, dw):
    n, h, w, c = x.shape
    ho, wo, kh, kw = cols.shape[1], cols.shape[2], cols.shape[3], cols.shape[4]
    xf = x.reshape(-1)
    cf = cols.reshape(-1)
    run = kw * c  # a window row: kw * c values, contiguous in x where it is inside and dw == 1
    for b in prange(n):  # images over numba's threads
        for oh in range(ho):
            for ow in range(wo):
                d = U(((b * ho + oh) * wo + ow) * kh * run)
                iw0 = ow * sw - pw
                inside = dw == 1 and iw0 >= 0 and iw0 + kw <= w
                for i in range(kh):
                    ih = oh * sh - ph + i * dh
                    if ih < 0 or ih >= h:
                        for k in range(U(run)):
                            cf[d + k] = 0
                    elif inside:
                        src = U(((b * h + ih) * w + iw0) * c)
                        for k in range(U(run)):
                            cf[d + k] = xf[src + k]
                    else:
                        for j in range(kw):
                            iw = iw0 + j * dw
                            dj = d + U(j * c)
                            if 0 <= iw < w:
                                src = U(((b * h + ih) * w + iw) * c)
                                for ch in range(U(c)):
                                    cf[dj + ch] = xf[src + ch]
                            else:
                                for ch in range(U(c)):
                                    cf[dj + ch] = 0
                    d += U(run)


@njit(
    [types.void(rc(t, 4), wc(t, 6), I, I, I, I, I, I) for t in (types.float32, types.float64)],
    cache=True,
    nogil=True,
    error_model="numpy",
    parallel=True,
)
def gather_planar(x, cols, sh, sw, ph, pw, dh, dw):
    # x (N, C, H, W); cols (C, kh, kw, N, Ho, Wo): a row of each is a run of an input row.
    # Images over numba's threads, as the product that reads cols splits its columns.
    c, kh, kw, n, ho, wo = cols.shape
    h, w = x.shape[2], x.shape[3]
    xf = x.reshape(-1)
    cf = cols.reshape(-1)
    for b in prange(n):
        for r in range(c * kh * kw):  # (channel, kernel offset)
            j = r % kw
            i = (r // kw) % kh
            ch = r // (kw * kh)
            off = j * dw - pw
            lo = 0 if off >= 0 else min(wo, (-off + sw - 1) // sw)  # columns inside the input
            hi = max(lo, min(wo, (w - 1 - off) // sw + 1))
            d = U((r * n + b) * ho * wo)
            for oh in range(ho):
                ih = oh * sh - ph + i * dh
                if ih < 0 or ih >= h:
                    for q in range(U(wo)):
                        cf[d + q] = 0
                else:
                    for q in range(U(lo)):
                        cf[d + q] = 0
                    src = U(((b * c + ch) * h + ih) * w + lo * sw + off)
                    at = d + U(lo)
                    if sw == 1:
                        for q in range(U(hi - lo)):
                            cf[at + q] = xf[src + q]
                    else:
                        for q in range(U(hi - lo)):
                            cf[at + q] = xf[src + q * U(sw)]
                    for q in range(U(hi), U(wo)):
                        cf[d + q] = 0
                d += U(wo)


@njit(
    [types.void(rc(t, 6), wc(t, 4), I, I, I, I) for t in (types.float32, types.float64)],
    cache=True,
    nogil=True,
    error_model="numpy",
    parallel=True,
)
def scatter(cols, out, sh, sw, dh, dw):
    n, ho, wo, kh, kw, c = cols.shape
    hp, wp = out.shape[1], out.shape[2]
    cf = cols.reshape(-1)
    of = out.reshape(-1)
    run = kw * c
    for b in prange(n):
        for oh in range(ho):
            for ow in range(wo):
                s = U(((b * ho + oh) * wo + ow) * kh * run)
                for i in range(kh):
                    ih = oh * sh + i * dh
                    if dw == 1:  # a window's row is kw * c contiguous values in both
                        dst = U(((b * hp + ih) * wp + ow * sw) * c)
                        for k in range(U(run)):
                            of[dst + k] += cf[s + k]
                    else:
                        for j in range(kw):
                            dst = U(((b * hp + ih) * wp + ow * sw + j * dw) * c)
                            sj = s + U(j * c)
                            for ch in range(U(c)):
                                of[dst + ch] += cf[sj + ch]
                    s += U(run)


@njit(
    [types.void(rc(t, 4), wc(t, 4)) for t in (types.float32, types.float64)],
    cache=True,
    nogil=True,
    error_model="numpy",
    parallel=True,
)
def channels_last(x, out):
    # x (N, C, H, W) -> out (N, H, W, C), both C-contiguous: blocks of 16 pixels of an image
    n, c, h, w = x.shape
    hw = h * w
    xf = x.reshape(-1)
    of = out.reshape(-1)
    blocks = (hw + 15) // 16
    for t in prange(n * blocks):
        b = t // blocks
        p0 = (t % blocks) * 16
        base = U(b * c * hw)
        for p in range(U(p0), U(min(hw, p0 + 16))):
            at = base + p * U(c)
            for ch in range(U(c)):
                of[at + ch] = xf[base + p + ch * U(hw)]


kernel = gather
"""


def kernels(dtype):
    """The compiled module (``gather``) when numba serves ``dtype`` and the module is ready;
    else None (the caller runs NumPy)."""
    return _jit.float_module("conv_gather", SOURCE, dtype)


def to_channels_last(x):
    """(N, C, H, W) ``x`` -> its (N, H, W, C) C-contiguous array: a view where ``x`` is that
    memory, else a copy (numba's parallel loop for a C-contiguous float32/float64 host array:
    64x64x32x32 float32 in 12.7 ms against NumPy's 17.8, 64x3x32x32 151 us against 610).

    >>> to_channels_last(np.arange(6.0).reshape(1, 3, 1, 2))[0, 0, 1].tolist()
    [1.0, 3.0, 5.0]
    """
    t = x.transpose(0, 2, 3, 1)
    if t.flags.c_contiguous:
        return t
    mod = kernels(x.dtype) if type(x) is np.ndarray and x.flags.c_contiguous else None
    if mod is None:
        return np.ascontiguousarray(t)
    out = np.empty(t.shape, x.dtype)
    mod.channels_last(x, out)
    return out


def filler(mod):
    """``fill(x, cols, stride, padding, dilation, layout) -> bool``: writes the patches of ``x``
    (N, C, H, W) into ``cols``, (N, Ho, Wo, kh, kw, C) for ``layout="nhwc"`` where ``x`` is
    channels-last or C-contiguous memory (the latter made channels-last first),
    (C, kh, kw, N, Ho, Wo) for ``"planar"`` where it is C-contiguous (True); else leaves them
    to the caller (False)."""

    def fill(x, cols, stride, padding, dilation, layout="nhwc") -> bool:
        if x.dtype != cols.dtype:
            return False
        if layout == "planar":
            if not x.flags.c_contiguous:
                return False
            mod.gather_planar(x, cols, *stride, *padding, *dilation)
            return True
        t = to_channels_last(x) if x.flags.c_contiguous else x.transpose(0, 2, 3, 1)
        if not t.flags.c_contiguous:
            return False
        mod.gather(t, cols, *stride, *padding, *dilation)
        return True

    return fill
