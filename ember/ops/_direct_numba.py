"""Direct convolution of a one-channel input on the CPU: a numba kernel per kernel size and
output channel count, the override of ``Conv2d``'s forward for it (``ember.ops.conv``).

A first layer over grey images (LeNet-5's 1x28x28 with 5x5 and 6 filters, the digits model's
1x8x8 with 3x3 and 32) has K = kh * kw products per output value: too few for im2col's patch
matrix to pay. That matrix is kh * kw times the input (5 MB for 64 LeNet images), written once
and read once by a GEMM whose 6 columns keep OpenBLAS far from its speed. Here each output row
is computed where it is stored, channels-last: the row's Wo * O values ``t = q * O + o`` are

    out[b, i, t] = sum over (a, c) of xe[i + a, t + c * O] * wt[a * kw + c, t]

with ``xe`` the image's zero-padded rows, each value repeated O times (a thread's scratch, a
few KiB), and ``wt[k, q * O + o] = w[o, 0, k]`` the weights repeated along the row. Every term
reads two contiguous rows, so LLVM vectorizes the loop over ``t`` with the kh * kw sum in
registers; the source is generated with the taps unrolled (``source``).

Measured (2 threads, float32, medians of 300 calls, PyTorch 2.13 in the same process):
LeNet-5's first layer, 64x1x28x28, 5x5, pad 2, 6 filters: 236-272 us against im2col's 430-616
and PyTorch's 314-326; 64x1x8x8, 3x3, pad 1, 32 filters: 50-55 us against 54-66 and 80-85. A
LeNet-5 training step: 4.38 -> 3.94 ms eager, 3.41 -> 3.04 ms compiled (PyTorch 3.99-4.01).

With many input channels the unrolled sum stops vectorizing (150 terms for LeNet-5's second
layer ran 15x slower than im2col), so ``applies`` takes one channel only. The weight gradient
stays im2col + GEMM (a direct version, accumulating per tap, measured no faster), now
gathering its patches itself, since no forward patches are kept for it.

>>> import numpy as np
>>> source(3, 3, 2).count("xe[")  # the padded rows, and one read per tap
4
"""

from __future__ import annotations

import functools

import numpy as np

from ..backend import blas as _blas
from ..backend import jit as _jit

MAX_TAPS = 49  # kh * kw: up to 7x7 (sums of more terms were not measured)


@functools.lru_cache(maxsize=64)
def source(kh: int, kw: int, o: int) -> str:
    """The kernel module for a ``kh`` x ``kw`` kernel and ``o`` output channels: ``kernel(x,
    wt, out, ph, pw, threads)`` with ``x`` (N, H, W), ``wt`` (kh * kw, Wo * o), ``out``
    (N, Ho, Wo * o), its images split in ``threads`` blocks.

    >>> "r0[t + 2]" in source(1, 2, 2)
    True
    """
    rows = "\n".join(f"                r{a} = xe[i + {a}]" for a in range(kh))
    terms = " + ".join(
        f"r{a}[t + {c * o}] * wt[{a * kw + c}, t]" for a in range(kh) for c in range(kw)
    )
    return (
        _jit.HEADER
        + f"""from numba import prange


I = types.int64


@njit(
    [(ro(t, 3), ro(t, 2), rw(t, 3), I, I, I) for t in ("float32", "float64")],
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
"""
    )


def applies(op, x, w) -> bool:
    """Whether the direct kernel computes ``op`` (a ``Conv2d``) of ``x`` and ``w``: one input
    channel, stride 1, no dilation, one group, at most ``MAX_TAPS`` taps, float32 or float64
    host arrays of one dtype."""
    return (
        x.shape[1] == 1
        and op.groups == 1
        and tuple(op.stride) == (1, 1)
        and tuple(op.dilation) == (1, 1)
        and w.shape[2] * w.shape[3] <= MAX_TAPS
        and type(x) is np.ndarray
        and type(w) is np.ndarray
        and x.dtype == w.dtype
        and x.dtype.name in _jit.FLOATS
    )


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
    mod = _jit.module(f"conv_direct_{kh}x{kw}x{o}", source(kh, kw, o))
    if mod is None:
        return NotImplemented
    n, _, h, wd = x.shape
    ph, pw = padding
    ho, wo = h + 2 * ph - kh + 1, wd + 2 * pw - kw + 1
    wt = np.ascontiguousarray(np.tile(w.reshape(o, kh * kw).T, (1, wo)))
    out = np.empty((n, ho, wo * o), x.dtype)
    threads = min(n, _blas.kernel_threads())
    mod.kernel(np.ascontiguousarray(x.reshape(n, h, wd)), wt, out, ph, pw, threads)
    return out.reshape(n, ho, wo, o).transpose(0, 3, 1, 2)
