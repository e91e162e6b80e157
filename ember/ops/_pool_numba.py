"""numba kernels for max pooling on the CPU (the overrides in ``ember.ops.pool`` call them):
2x2 tiles by kernels of their own, any other window by ``pool`` / ``scatter`` (below).

``kernel(x, out, code)``: each 2x2 window's maximum (NaN propagating) of a float32 or float64
array into ``out`` and its offset in the window into ``code`` (uint8, for the gradient: a
quarter of a float32 copy of the maxima, and the scatter need not read ``x``), one pass, images
over numba's threads (measured 75 us against NumPy's 214 us, 64x32x8x8 float32, one thread;
LeNet-5's 64x6x28x28 channels-last 249 -> 105 us with two). ``scatter(g, x, out)``:
MaxPoolScatter, the window's chosen element found again from ``x`` in the same loop (PyTorch's
rule: first maximum, last NaN) and ``g`` written there, zeros elsewhere. Both work on
C-contiguous (B, H, W, C') arrays: channels-last memory as it is, NCHW memory as (N * C, H, W,
1) (``memory``), so a channels-last network stays channels-last. A kernel size known when numba
compiles is what makes the loop fast (runtime window sizes measured 3x slower), hence kernels
of their own for 2x2.
``scatter_wide(g, x, out)`` is ``scatter`` for channels-last memory of ``WIDE`` channels or
more, written so that its channel loop vectorizes (64x16x10x10 float32: 84 -> 42 us, against
PyTorch's 55-70 us from saved indices; LeNet-5's 6 channels stay on ``scatter``, 210-300 us
against PyTorch's 110-125). ``placed_scatter(g, x, code, out)`` writes ``g`` at the offsets of
the forward pass's ``code`` (LeNet-5's 6 channels: 120 -> 76 us, 190 -> 123 us with the arrays
out of cache), or, with an empty ``code``, at those PyTorch's scan finds in ``x`` (exact for any
``g``: a NaN in a window, an infinite ``g``). MaxPoolGather (double backward) stays NumPy.

Any other window (``WINDOWS_SOURCE``: kernel, stride, padding and dilation at run time, up to
255 taps): ``pool`` scans each window's taps inside the input as PyTorch does and keeps the
chosen tap (uint8), ``scatter`` adds ``g`` there (windows may overlap; images over the threads).
ResNet's stem pool (3x3, stride 2, padding 1) on 32 x 64 x 16x16 channels-last, forward and
backward: 20 ms in NumPy (a padded copy, every window gathered, an argmax and a scatter-add),
1.4 ms here, PyTorch's 2.4.

numba is optional: ``kernels(dtype)`` is None without it, with ``EMBER_JIT=0``, for other
dtypes, and while the module compiles in the background (``ember.backend.jit``: compiled
once, cached on disk); callers then run the op's NumPy body.
"""

from __future__ import annotations

import numpy as np

from ..backend import jit as _jit

HEADER = """
import numpy as np
from numba import njit, prange, types, uint8, uint64


def rc(t):
    return types.Array(t, 4, "C", readonly=True)


def wc(t):
    return types.Array(t, 4, "C")


OPTS = dict(cache=True, nogil=True, error_model="numpy")
FLOATS = (types.float32, types.float64)
"""

SOURCE = (
    HEADER
    + """
U = uint64  # unsigned indices: no negative-index check in the loops (see _conv_numba)


def window(v0, v1, v2, v3):
    # PyTorch's scan (v replaces the best where v > best or v is NaN) as selects, no branches:
    # the window's chosen value and its offset (row-major in the 2x2 window)
    c = (v1 > v0) | (v1 != v1)
    best = v1 if c else v0
    p = 1 if c else 0
    c = (v2 > best) | (v2 != v2)
    best = v2 if c else best
    p = 2 if c else p
    c = (v3 > best) | (v3 != v3)
    best = v3 if c else best
    p = 3 if c else p
    return best, p


window = njit(inline="always")(window)
SIGS = [types.void(rc(t), types.boolean, wc(t), wc(uint8)) for t in FLOATS]
SIGS_SCATTER = [t(rc(t), rc(t), types.boolean, wc(t)) for t in FLOATS]
SIGS_PLACED = [types.void(rc(t), rc(t), rc(uint8), types.boolean, wc(t)) for t in FLOATS]


@njit(SIGS, parallel=True, **OPTS)  # images over numba's threads
def kernel(x, last, out, code):
    # x, out and code in memory order: (N, H, W, C) where last, else (N, C, H, W); code: each
    # window's chosen offset (row-major in the 2x2 window), for the gradient
    if last:
        n, ho, wo, c = out.shape
        for b in prange(n):
            for i in range(ho):
                for j in range(wo):
                    for ch in range(c):
                        best, p = window(
                            x[b, 2 * i, 2 * j, ch], x[b, 2 * i, 2 * j + 1, ch],
                            x[b, 2 * i + 1, 2 * j, ch], x[b, 2 * i + 1, 2 * j + 1, ch],
                        )
                        out[b, i, j, ch] = best
                        code[b, i, j, ch] = p
    else:
        n, c, ho, wo = out.shape
        for b in prange(n):
            for ch in range(c):
                for i in range(ho):
                    for j in range(wo):
                        best, p = window(
                            x[b, ch, 2 * i, 2 * j], x[b, ch, 2 * i, 2 * j + 1],
                            x[b, ch, 2 * i + 1, 2 * j], x[b, ch, 2 * i + 1, 2 * j + 1],
                        )
                        out[b, ch, i, j] = best
                        code[b, ch, i, j] = p


def share(one, zero, gv, v0, v1, v2, v3):
    # g's share of each element of a window (g at the first maximum, zero elsewhere) as masks
    # from the window's maximum in the array's dtype (branch-free: measured 3-4x faster than
    # selects or a branch per window), and the window's sum with (g - g): NaN where a window
    # holds a NaN or g is not finite, where the caller runs placed_scatter instead (g * 0 would
    # not be 0; NaN's rule differs)
    m = max(max(v0, v1), max(v2, v3))
    f0 = one * (v0 == m)
    f1 = one * (v1 == m) * (one - f0)
    f2 = one * (v2 == m) * (one - f0 - f1)
    o3 = gv * (one - f0 - f1 - f2) + zero
    return gv * f0 + zero, gv * f1 + zero, gv * f2 + zero, o3, v0 + v1 + v2 + v3 + (gv - gv)


share = njit(inline="always")(share)


@njit(SIGS_SCATTER, parallel=True, **OPTS)  # images over numba's threads
def scatter(g, x, last, out):
    # g, x and out in memory order, as kernel's: g's share of each window element (``share``);
    # returns the sum of the windows' checks (NaN: run exact_scatter)
    one = g.dtype.type(1)
    zero = g.dtype.type(0)
    bad = zero
    if last:
        n, ho, wo, c = g.shape
        for b in prange(n):
            for i in range(ho):
                for j in range(wo):
                    for ch in range(c):
                        o0, o1, o2, o3, t = share(
                            one, zero, g[b, i, j, ch],
                            x[b, 2 * i, 2 * j, ch], x[b, 2 * i, 2 * j + 1, ch],
                            x[b, 2 * i + 1, 2 * j, ch], x[b, 2 * i + 1, 2 * j + 1, ch],
                        )
                        bad += t
                        out[b, 2 * i, 2 * j, ch] = o0
                        out[b, 2 * i, 2 * j + 1, ch] = o1
                        out[b, 2 * i + 1, 2 * j, ch] = o2
                        out[b, 2 * i + 1, 2 * j + 1, ch] = o3
    else:
        n, c, ho, wo = g.shape
        for b in prange(n):
            for ch in range(c):
                for i in range(ho):
                    for j in range(wo):
                        o0, o1, o2, o3, t = share(
                            one, zero, g[b, ch, i, j],
                            x[b, ch, 2 * i, 2 * j], x[b, ch, 2 * i, 2 * j + 1],
                            x[b, ch, 2 * i + 1, 2 * j], x[b, ch, 2 * i + 1, 2 * j + 1],
                        )
                        bad += t
                        out[b, ch, 2 * i, 2 * j] = o0
                        out[b, ch, 2 * i, 2 * j + 1] = o1
                        out[b, ch, 2 * i + 1, 2 * j] = o2
                        out[b, ch, 2 * i + 1, 2 * j + 1] = o3
    return bad


@njit(
    [t(rc(t), rc(t), wc(t)) for t in FLOATS], parallel=True, fastmath={"reassoc"}, **OPTS
)
def scatter_wide(g, x, out):
    # scatter for channels-last memory of 8 channels or more: flat, unsigned indices and the
    # checks' sum reassociated, so that the channel loop vectorizes (2x at 16 channels; with
    # fewer than a vector's width it ran slower than scatter). Any order of that sum is NaN
    # where scatter's is, or the windows are finite and both paths give the same result.
    one = g.dtype.type(1)
    zero = g.dtype.type(0)
    bad = zero
    n, ho, wo, c = g.shape
    h, w = x.shape[1], x.shape[2]
    gf = g.reshape(-1)
    xf = x.reshape(-1)
    of = out.reshape(-1)
    for b in prange(n):
        for i in range(ho):
            for j in range(wo):
                at = U(((b * ho + i) * wo + j) * c)
                p0 = U(((b * h + 2 * i) * w + 2 * j) * c)
                p1 = p0 + U(c)
                p2 = p0 + U(w * c)
                p3 = p2 + U(c)
                for ch in range(U(c)):
                    o0, o1, o2, o3, t = share(
                        one, zero, gf[at + ch], xf[p0 + ch], xf[p1 + ch], xf[p2 + ch], xf[p3 + ch]
                    )
                    bad += t
                    of[p0 + ch] = o0
                    of[p1 + ch] = o1
                    of[p2 + ch] = o2
                    of[p3 + ch] = o3
    return bad


@njit(SIGS_PLACED, parallel=True, **OPTS)
def placed_scatter(g, x, code, last, out):
    # g written by selects at each window's chosen element, exact for any g: its offset read
    # from ``code`` (the forward pass's) where it has any, else found in x by PyTorch's scan
    # (first maximum, last NaN)
    coded = code.shape[0] > 0
    z = g.dtype.type(0)
    if last:
        n, ho, wo, c = g.shape
        for b in prange(n):
            for i in range(ho):
                for j in range(wo):
                    for ch in range(c):
                        if coded:
                            p = code[b, i, j, ch]
                        else:
                            _, p = window(
                                x[b, 2 * i, 2 * j, ch], x[b, 2 * i, 2 * j + 1, ch],
                                x[b, 2 * i + 1, 2 * j, ch], x[b, 2 * i + 1, 2 * j + 1, ch],
                            )
                        gv = g[b, i, j, ch]
                        out[b, 2 * i, 2 * j, ch] = gv if p == 0 else z
                        out[b, 2 * i, 2 * j + 1, ch] = gv if p == 1 else z
                        out[b, 2 * i + 1, 2 * j, ch] = gv if p == 2 else z
                        out[b, 2 * i + 1, 2 * j + 1, ch] = gv if p == 3 else z
    else:
        n, c, ho, wo = g.shape
        for b in prange(n):
            for ch in range(c):
                for i in range(ho):
                    for j in range(wo):
                        if coded:
                            p = code[b, ch, i, j]
                        else:
                            _, p = window(
                                x[b, ch, 2 * i, 2 * j], x[b, ch, 2 * i, 2 * j + 1],
                                x[b, ch, 2 * i + 1, 2 * j], x[b, ch, 2 * i + 1, 2 * j + 1],
                            )
                        gv = g[b, ch, i, j]
                        out[b, ch, 2 * i, 2 * j] = gv if p == 0 else z
                        out[b, ch, 2 * i, 2 * j + 1] = gv if p == 1 else z
                        out[b, ch, 2 * i + 1, 2 * j] = gv if p == 2 else z
                        out[b, ch, 2 * i + 1, 2 * j + 1] = gv if p == 3 else z
"""
)


WINDOWS_SOURCE = (
    HEADER
    + """
GEO = types.UniTuple(types.int64, 8)  # kh, kw, sh, sw, ph, pw, dh, dw
SIGS = [types.void(rc(t), GEO, types.boolean, wc(t), wc(uint8)) for t in FLOATS]
SIGS_SCATTER = [types.void(rc(t), rc(t), rc(uint8), GEO, types.boolean, wc(t)) for t in FLOATS]


@njit(inline="always")
def span(o, s, p, d, k, size):
    # the taps [lo, hi) of a window at output o (stride s, padding p, dilation d, k taps) that
    # fall inside an input of ``size``
    lo = 0
    while lo < k and o * s - p + lo * d < 0:
        lo += 1
    hi = k
    while hi > lo and o * s - p + (hi - 1) * d >= size:
        hi -= 1
    return lo, hi


@njit(inline="always")
def chosen(x, b, ch, i, j, geo, h, w, last):
    # PyTorch's scan of window (i, j) over its taps inside the input: the first one, then any
    # greater or NaN; (its value, its tap row-major in the window)
    kh, kw, sh, sw, ph, pw, dh, dw = geo
    r0, r1 = span(i, sh, ph, dh, kh, h)
    q0, q1 = span(j, sw, pw, dw, kw, w)
    best = x[0, 0, 0, 0]
    p = -1
    for ki in range(r0, r1):
        for kj in range(q0, q1):
            r, q = i * sh - ph + ki * dh, j * sw - pw + kj * dw
            v = x[b, r, q, ch] if last else x[b, ch, r, q]
            if p < 0 or v > best or v != v:
                best = v
                p = ki * kw + kj
    return best, p


@njit(SIGS, parallel=True, **OPTS)  # images over numba's threads
def pool(x, geo, last, out, code):
    # each window's chosen element (PyTorch's scan over the taps inside the input: the first
    # one, then any greater or NaN) into out and its tap (row-major in the window) into code;
    # x, out and code in memory order: (N, H, W, C) where last, else (N, C, H, W)
    kh, kw, sh, sw, ph, pw, dh, dw = geo
    if last:
        n, h, w, c = x.shape
        ho, wo = out.shape[1], out.shape[2]
        for b in prange(n):  # chosen's scan, the channel loop innermost (it vectorizes)
            for i in range(ho):
                r0, r1 = span(i, sh, ph, dh, kh, h)
                for j in range(wo):
                    q0, q1 = span(j, sw, pw, dw, kw, w)
                    for ki in range(r0, r1):
                        for kj in range(q0, q1):
                            r, q = i * sh - ph + ki * dh, j * sw - pw + kj * dw
                            t = ki * kw + kj
                            if ki == r0 and kj == q0:
                                for ch in range(c):
                                    out[b, i, j, ch] = x[b, r, q, ch]
                                    code[b, i, j, ch] = t
                            else:
                                for ch in range(c):
                                    v = x[b, r, q, ch]
                                    if v > out[b, i, j, ch] or v != v:
                                        out[b, i, j, ch] = v
                                        code[b, i, j, ch] = t
    else:
        n, c, h, w = x.shape
        ho, wo = out.shape[2], out.shape[3]
        for b in prange(n):
            for ch in range(c):
                for i in range(ho):
                    for j in range(wo):
                        best, p = chosen(x, b, ch, i, j, geo, h, w, False)
                        out[b, ch, i, j] = best
                        code[b, ch, i, j] = p


@njit(SIGS_SCATTER, parallel=True, **OPTS)
def scatter(g, x, code, geo, last, out):
    # out (zeros) += g at each window's chosen element: its tap read from ``code`` (the forward
    # pass's) where it has any, else found in x by pool's scan; windows may overlap, so images
    # (never shared by two windows) go over the threads
    kh, kw, sh, sw, ph, pw, dh, dw = geo
    coded = code.shape[0] > 0
    if last:
        n, ho, wo, c = g.shape
        h, w = out.shape[1], out.shape[2]
    else:
        n, c, ho, wo = g.shape
        h, w = out.shape[2], out.shape[3]
    for b in prange(n):
        for ch in range(c):
            for i in range(ho):
                for j in range(wo):
                    if coded:
                        p = code[b, i, j, ch] if last else code[b, ch, i, j]
                    else:
                        _, p = chosen(x, b, ch, i, j, geo, h, w, last)
                    r = i * sh - ph + (p // kw) * dh
                    q = j * sw - pw + (p % kw) * dw
                    if last:
                        out[b, r, q, ch] += g[b, i, j, ch]
                    else:
                        out[b, ch, r, q] += g[b, ch, i, j]


kernel = pool
"""
)


def window_kernels(*dtypes):
    """The compiled module for any window (``pool``, ``scatter``: kernel, stride, padding and
    dilation given at run time, up to 255 taps) when numba serves ``dtypes``; else None."""
    return _jit.float_module("maxpool_windows", WINDOWS_SOURCE, *dtypes)


def geometry(op) -> tuple:
    """``op``'s window as the kernels take it: (kh, kw, sh, sw, ph, pw, dh, dw)."""
    return (*op.kernel, *op.stride, *op.padding, *op.dilation)


def pooled(mod, op, x, shape):
    """(window maxima, each window's chosen tap as uint8) of ``x`` (C-contiguous or
    channels-last memory; the results in the same layout) for any window of ``op``."""
    xm, last = memory(x)
    out, om = empty(shape, x.dtype, last)
    code, cm = empty(shape, np.uint8, last)
    mod.pool(xm, geometry(op), last, om, cm)
    return out, code


def scattered(mod, op, g, x, code=None):
    """MaxPoolScatter for any window of ``op``: ``g`` added at each window's chosen element of
    ``x``, in ``x``'s layout; from ``pooled``'s ``code`` where given, else found in ``x``."""
    xm, last = memory(x)
    gm = _in_layout(g, last)
    out, om = empty(x.shape, g.dtype, last)
    om[...] = 0
    cm = None if code is None else memory(code)
    cm = cm[0] if cm is not None and cm[1] == last else _NO_CODE
    mod.scatter(gm, xm, cm, geometry(op), last, om)
    return out


def kernels(*dtypes):
    """The compiled module (``kernel``, ``scatter``, ``scatter_wide``, ``placed_scatter``) when
    numba serves ``dtypes`` (all float32 or all float64) and the module is ready; else None
    (the caller runs NumPy)."""
    return _jit.float_module("maxpool", SOURCE, *dtypes)


def memory(x):
    """``(x in memory order, last)``: a C-contiguous (N, C, H, W) array as it is
    (``last=False``), channels-last memory as its (N, H, W, C) view (``last=True``); None for
    other layouts."""
    if x.flags.c_contiguous:
        return x, False
    t = x.transpose(0, 2, 3, 1)
    return (t, True) if t.flags.c_contiguous else None


def _in_layout(g, last: bool):
    """``g`` in memory order of the layout ``last`` says (a copy where it is in another)."""
    gm = memory(g)
    if gm is not None and gm[1] == last:
        return gm[0]
    gl, gm = empty(g.shape, g.dtype, last)
    gl[...] = g
    return gm


def empty(shape, dtype, last: bool):
    """``(array, its memory-order view)``: a new (N, C, H, W) array, channels-last where
    ``last``."""
    if not last:
        out = np.empty(shape, dtype)
        return out, out
    n, c, h, w = shape
    t = np.empty((n, h, w, c), dtype)
    return t.transpose(0, 3, 1, 2), t


def maxima(mod, xp, x, shape):
    """(2x2 window maxima, each window's chosen offset as uint8) of ``x`` (C-contiguous or
    channels-last memory; the results in the same layout), one pass."""
    xm, last = memory(x)
    out, om = empty(shape, x.dtype, last)
    code, cm = empty(shape, np.uint8, last)
    mod.kernel(xm, last, om, cm)
    return out, code


WIDE = 8  # channels from which channels-last memory takes scatter_wide (a vector of float32)


def scatter(mod, g, x, code=None):
    """MaxPoolScatter for 2x2 windows: ``g`` at each window's chosen element of ``x`` (first
    maximum, last NaN), zero elsewhere, in ``x``'s layout (C-contiguous or channels-last);
    ``g`` is copied to that layout first if it is in another. With ``code`` (``maxima``'s,
    in ``x``'s layout) the elements are read from it, not found in ``x`` again."""
    xm, last = memory(x)
    gm = _in_layout(g, last)
    out, om = empty(x.shape, g.dtype, last)
    ho, wo = g.shape[2:]
    out[:, :, 2 * ho :] = 0  # rows and columns no window covers
    out[:, :, :, 2 * wo :] = 0
    cm = None if code is None else memory(code)
    if cm is not None and cm[1] == last:
        mod.placed_scatter(gm, xm, cm[0], last, om)
        return out
    if last and g.shape[1] >= WIDE:
        bad = mod.scatter_wide(gm, xm, om)
    else:
        bad = mod.scatter(gm, xm, last, om)
    if bad != bad:  # a NaN in some window, or a g that is not finite
        mod.placed_scatter(gm, xm, _NO_CODE, last, om)
    return out


_NO_CODE = np.empty((0, 0, 0, 0), np.uint8)
