"""Direct convolution of a one-channel input on the CPU: a numba kernel per kernel size and
output channel count, the override of ``Conv2d``'s forward for it (``ember.ops.conv``).

A first layer over grey images with few filters (LeNet-5's 1x28x28 with 5x5 and 6 filters)
has K = kh * kw products per output value: too few for im2col's patch
matrix to pay. That matrix is kh * kw times the input (5 MB for 64 LeNet images), written once
and read once by a GEMM whose 6 columns keep OpenBLAS far from its speed. Here each output row
is computed where it is stored, channels-last: the row's Wo * O values ``t = q * O + o`` are

    out[b, i, t] = sum over (a, c) of xe[i + a, t + c * O] * wt[a * kw + c, t]

with ``xe`` the image's zero-padded rows, each value repeated O times (a thread's scratch, a
few KiB), and ``wt[k, q * O + o] = w[o, 0, k]`` the weights repeated along the row. Every term
reads two contiguous rows, so LLVM vectorizes the loop over ``t`` with the kh * kw sum in
registers; the source is generated with the taps unrolled (``source``). A kernel size's module
compiles in the background the first time (LeNet-5's, both kernels and dtypes: 10.7 s; im2col
serves until then) and loads from numba's disk cache after.

Where it pays: the loop reads 2 * kh * kw values per output value, while im2col's GEMM gets
faster as the filters grow, and ``wt`` (kh * kw * Wo * O values) stays in L1 only for few
filters. So ``applies`` takes at most ``MAX_FILTERS`` (8). Measured (2 threads, float32, best
quarter of 30-300 calls, PyTorch 2.13 in the same process), forward direct / im2col / PyTorch:

- LeNet-5's first layer, 64x1x28x28, 5x5, pad 2, 6 filters: 236-272 / 430-616 / 314-326 us;
  4 filters 158 / 341 / 289; 8 filters 339 / 414 / 346; 12 filters 609 / 524 / 405 (im2col
  wins from here: 16 filters 624 / 471, 32 filters 3x3 636 / 302);
- 8x1x96x96, 5x5, 6 filters: 357 / 624 / 383 us; 4x1x224x224, 7x7, 6 filters: 1.7 / 4.5 / 2.5
  ms; 64x1x8x8, 3x3, 8 filters: 30 / 155 / 58 us (32 filters: 72 / 73 / 184).

A LeNet-5 training step: 4.38 -> 3.94 ms eager, 3.41 -> 3.04 ms compiled (PyTorch 3.99-4.01),
with the direct weight gradient below 3.65 eager and 2.63 compiled (PyTorch 3.89-4.02).

The weight gradient, ``dw[o, a, c] = sum over (b, i, q) of g[b, o, i, q] * x[b, i + a, q + c]``
(padded), runs per image and filter as kh * kw dot products of one long row: the gradient's
rows padded to the input's padded width ``wx`` (zeros after Wo) and laid end to end, against the
padded input from offset ``a * wx + c``, so each tap is one contiguous sum that LLVM vectorizes
(a kernel row's taps share a pass). LeNet-5's first layer: 193-205 us against im2col's 285-297
and PyTorch's 283-309 (256 images: 0.79-0.84 ms against 1.34-1.58 and 0.92-1.0). Where the patch
matrix is small enough to stay in cache im2col wins (``pays_grad_weight``).

With many input channels the forward's unrolled sum stops vectorizing (150 terms for LeNet-5's
second layer ran 15x slower than im2col), so ``applies`` takes one channel only.

>>> import numpy as np
>>> source(3, 3, 2).count("xe[")  # the padded rows, and one read per tap
4
"""

from __future__ import annotations

import functools

import numpy as np

from ..backend import blas as _blas
from ..backend import jit as _jit
from . import _conv_numba

MAX_TAPS = 49  # kh * kw: up to 7x7 (sums of more terms were not measured)
MAX_FILTERS = 8  # output channels (``applies``; the module's notes)
GRAD_WEIGHT_MIN_BYTES = 1 << 20  # ``pays_grad_weight``
GRAD_WEIGHT_MAX_FILTERS = 6


@functools.lru_cache(maxsize=64)
def source(kh: int, kw: int, o: int) -> str:
    """The kernel module for a ``kh`` x ``kw`` kernel and ``o`` output channels:

    - ``kernel(x, wt, out, ph, pw, threads)``: the forward pass, ``x`` (N, H, W), ``wt``
      (kh * kw, Wo * o), ``out`` (N, Ho, Wo * o);
    - ``grad_weight(x, g, acc, ph, pw, threads) -> bool``: adds the weight gradient of ``x``
      and the channels-last output gradient ``g`` (N, Ho, Wo, o) into ``acc`` (threads, o,
      kh * kw); False (``acc`` unfinished) where ``x`` holds an infinity or a NaN.

    Both split the images in ``threads`` blocks.

    >>> "r0[t + 2]" in source(1, 2, 2)
    True
    """
    rows = "\n".join(f"                r{a} = xe[i + {a}]" for a in range(kh))
    taps = [(a, c) for a in range(kh) for c in range(kw)]
    terms = " + ".join(f"r{a}[t + {c * o}] * wt[{k}, t]" for k, (a, c) in enumerate(taps))
    offsets = "\n".join(f"    o{k} = U({a} * wx + {c})" for k, (a, c) in enumerate(taps))
    sums = ""
    for first in range(0, len(taps), kw):  # a kernel row's taps per pass over the gradient
        part = range(first, min(first + kw, len(taps)))
        sums += "".join(f"                s{k} = zero\n" for k in part)
        sums += "                for j in range(U(m)):\n                    gv = gr[j]\n"
        sums += "".join(f"                    s{k} += gv * xf[j + o{k}]\n" for k in part)
        sums += "".join(f"                acc[part, oc, {k}] += s{k}\n" for k in part)
    return (
        _jit.HEADER
        + f"""from numba import prange, uint64 as U


I = types.int64
FLOATS = ("float32", "float64")


@njit(
    [(ro(t, 3), ro(t, 2), rw(t, 3), I, I, I) for t in FLOATS],
    cache=True,
    nogil=True,
    parallel=True,
    error_model="numpy",
)
def kernel(x, wt, out, ph, pw, threads):
    n, h, w = x.shape
    ho, width = out.shape[1], out.shape[2]
    for part in prange(threads):  # a block of images per thread, with its own padded rows
        xe = np.zeros((h + 2 * ph, (w + 2 * pw) * {o}), x.dtype)
        for b in range(part * n // threads, (part + 1) * n // threads):
            for r in range(h):
                row = xe[r + ph]
                for u in range(w):
                    v = x[b, r, u]
                    at = (u + pw) * {o}
                    for k in range({o}):
                        row[at + k] = v
            for i in range(ho):
{rows}
                dst = out[b, i]
                for t in range(width):
                    dst[t] = {terms}


@njit(
    [types.boolean(ro(t, 3), ro(t, 4), rw(t, 3), I, I, I) for t in FLOATS],
    cache=True,
    nogil=True,
    parallel=True,
    error_model="numpy",
    fastmath={{"reassoc", "contract"}},
)
def grad_weight(x, g, acc, ph, pw, threads):
    n, h, w = x.shape
    ho, wo = g.shape[1], g.shape[2]
    wx = w + 2 * pw
    m = ho * wx
    zero = x.dtype.type(0)
{offsets}
    finite = np.ones(threads, np.bool_)
    for part in prange(threads):
        xf = np.zeros((h + 2 * ph + 1) * wx, x.dtype)
        gp = np.zeros(({o}, m), x.dtype)
        for b in range(part * n // threads, (part + 1) * n // threads):
            for r in range(h):
                at = (r + ph) * wx + pw
                for u in range(w):
                    v = x[b, r, u]
                    if not v - v == 0:
                        finite[part] = False
                    xf[at + u] = v
            for i in range(ho):
                for q in range(wo):
                    for oc in range({o}):
                        gp[oc, i * wx + q] = g[b, i, q, oc]
            for oc in range({o}):
                gr = gp[oc]
{sums}
    return finite.all()
"""
    )


def applies(op, x, other, kernel, filters: int) -> bool:
    """Whether the direct kernels compute ``op`` (``Conv2d``, or ``Conv2dGradWeight``) of
    ``x`` and ``other`` (the weight, or the output gradient) with a ``kernel`` (kh, kw) and
    ``filters`` output channels: one input channel, at most ``MAX_FILTERS`` filters, stride 1,
    no dilation, one group, at most ``MAX_TAPS`` taps, float32 or float64 host arrays of one
    dtype."""
    return (
        x.shape[1] == 1
        and filters <= MAX_FILTERS
        and op.groups == 1
        and tuple(op.stride) == (1, 1)
        and tuple(op.dilation) == (1, 1)
        and kernel[0] * kernel[1] <= MAX_TAPS
        and type(x) is np.ndarray
        and type(other) is np.ndarray
        and x.dtype == other.dtype
        and x.dtype in _jit.FLOAT_NP_DTYPES
    )


def _module(kh: int, kw: int, o: int):
    return _jit.module(f"conv_direct_{kh}x{kw}x{o}", source(kh, kw, o))


def _images(x):
    """(N, 1, H, W) -> C-contiguous (N, H, W)."""
    n, _, h, w = x.shape
    return np.ascontiguousarray(x.reshape(n, h, w))


def conv(x, w, padding):
    """The convolution of (N, 1, H, W) ``x`` with (O, 1, kh, kw) ``w``: (N, O, Ho, Wo) as a
    view of channels-last memory, or NotImplemented while the kernel compiles (or without
    numba).

    >>> import ember.backend.jit as jit
    >>> prev = jit.set_mode("sync")
    >>> x, w = np.ones((1, 1, 3, 3), np.float32), np.ones((2, 1, 2, 2), np.float32)
    >>> conv(x, w, (0, 0))[0, :, 0, 0].tolist()
    [4.0, 4.0]
    >>> _ = jit.set_mode(prev)
    """
    o, _, kh, kw = w.shape
    mod = _module(kh, kw, o)
    if mod is None:
        return NotImplemented
    n, _, h, wd = x.shape
    ph, pw = padding
    ho, wo = h + 2 * ph - kh + 1, wd + 2 * pw - kw + 1
    wt = np.ascontiguousarray(np.tile(w.reshape(o, kh * kw).T, (1, wo)))
    out = np.empty((n, ho, wo * o), x.dtype)
    threads = min(n, _blas.kernel_threads())
    mod.kernel(_images(x), wt, out, ph, pw, threads)
    return out.reshape(n, ho, wo, o).transpose(0, 3, 1, 2)


def pays_grad_weight(x, kernel, g) -> bool:
    """Whether the direct weight gradient measured faster than im2col's: for at most
    ``GRAD_WEIGHT_MAX_FILTERS`` filters where the patch matrix (kh * kw values per output
    pixel) is larger than ``GRAD_WEIGHT_MIN_BYTES``. Smaller ones stay in cache between their
    gather and their GEMM, which then wins (64x1x8x8, 3x3, 8 filters: 25 us against the direct
    36), as it does from 8 filters on (64x1x28x28, 5x5: 257 against 277 us)."""
    n, o, ho, wo = g.shape
    return (
        o <= GRAD_WEIGHT_MAX_FILTERS
        and n * ho * wo * kernel[0] * kernel[1] * x.itemsize > GRAD_WEIGHT_MIN_BYTES
    )


def grad_weight(x, g, w_shape, padding):
    """The weight gradient (``w_shape``: (O, 1, kh, kw)) of the convolution of (N, 1, H, W)
    ``x`` whose output gradient is ``g`` (N, O, Ho, Wo); NotImplemented while the kernel
    compiles (or without numba), or where ``x`` holds an infinity or a NaN (the kernel then
    multiplies values outside the windows by zero; im2col keeps the exact result).

    >>> import ember.backend.jit as jit
    >>> prev = jit.set_mode("sync")
    >>> x, g = np.ones((1, 1, 3, 3), np.float32), np.ones((1, 2, 2, 2), np.float32)
    >>> grad_weight(x, g, (2, 1, 2, 2), (0, 0))[:, 0, 0, 0].tolist()
    [4.0, 4.0]
    >>> _ = jit.set_mode(prev)
    """
    o, _, kh, kw = w_shape
    mod = _module(kh, kw, o)
    if mod is None:
        return NotImplemented
    threads = min(x.shape[0], _blas.kernel_threads())
    acc = np.zeros((threads, o, kh * kw), x.dtype)
    rows = _conv_numba.to_channels_last(g)  # a view of a convolution's channels-last output
    if not mod.grad_weight(_images(x), rows, acc, *padding, threads):
        return NotImplemented
    return acc.sum(0).reshape(w_shape)
