"""numba kernels for batch and layer normalization on the CPU (the overrides in ``ember.ops.norm``
call them): each of the four batch-norm ops is one loop over its inputs, in their own memory
layout; the two layer-norm ops (``ROWS_SOURCE``) one loop over rows.

The NumPy bodies take about ten passes over memory per op (a centred copy, products, BLAS
sums) and copy a channels-last input (a convolution's output) to NCHW first; these kernels read
each input once or twice (the moments' two passes) and write the result in the input's layout,
so a network whose convolutions answer channels-last memory stays channels-last through
BatchNorm, ReLU and max-pool.

Arrays come as C-contiguous 3-D views ``(N, C, L)`` (NCHW-like, ``last=False``) or
``(N, L, C)`` (channels-last, ``last=True``): ``view(x)`` finds which, or None for any other
layout (the op's NumPy body runs). Per-channel sums accumulate in float64 (for float32 data
too), two passes for the variance as the NumPy body computes it.

numba is optional: ``kernels(dtype)`` is None without it, with ``EMBER_JIT=0``, for dtypes
other than float32 and float64, and while the module compiles in the background
(``ember.backend.jit``); callers then run the op's NumPy body.
"""

from __future__ import annotations

import numpy as np

from ..backend import blas as _blas
from ..backend import jit as _jit

SOURCE = """
import numpy as np
from numba import njit, prange, types


def r3(t):
    return types.Array(t, 3, "C", readonly=True)


def w3(t):
    return types.Array(t, 3, "C")


def r1(t):
    return types.Array(t, 1, "C", readonly=True)


def w2(t):
    return types.Array(t, 2, "C")


F = (types.float32, types.float64)
# ``normalize`` and ``grad_input`` split their images in ``parts`` blocks over numba's threads
# (``parts()``); ``parts`` 1 costs the thread pool's launch (~2.5 us) and no more. Only the
# explicit ``prange`` loops run in parallel: numba's default also makes every array expression
# and ``np.zeros`` a parallel loop of its own (a launch each: a split 64x64x4x4 moments kernel
# took 173 us instead of 15). The two sums stay serial: split by images (partial sums added in
# image order) they gained at 64x32x8x8 (35 -> 24-28 us) but lost up to 2x below it. The split
# doubles the module's first compile (6.0 -> 12.7 s, in the background; then numba's disk cache).
PARALLEL = {
    "prange": True,
    **dict.fromkeys(
        ("comprehension", "numpy", "reduction", "setitem", "stencil", "fusion", "inplace_binop"),
        False,
    ),
}
SERIAL = dict(cache=True, nogil=True, fastmath=True, error_model="numpy")
OPTS = dict(SERIAL, parallel=PARALLEL)
I = types.int64


@njit(
    [types.void(r3(t), types.boolean, w2(a)) for t in F for a in F], **SERIAL
)
def moments(x, last, stats):
    # sums of one image in x's dtype (vectorized), images added up in float64
    n = x.shape[0]
    c = x.shape[2] if last else x.shape[1]
    l = x.shape[1] if last else x.shape[2]
    m = n * l
    s = np.zeros(c, np.float64)
    q = np.zeros(c, np.float64)
    t = np.zeros(c, x.dtype)
    mean = np.zeros(c, x.dtype)
    if last:
        for i in range(n):
            t[:] = 0
            for j in range(l):
                for k in range(c):
                    t[k] += x[i, j, k]
            for k in range(c):
                s[k] += t[k]
        for k in range(c):
            s[k] /= m
            mean[k] = s[k]
        for i in range(n):
            t[:] = 0
            for j in range(l):
                for k in range(c):
                    d = x[i, j, k] - mean[k]
                    t[k] += d * d
            for k in range(c):
                q[k] += t[k]
    else:
        for k in range(c):
            acc = 0.0
            for i in range(n):
                a = x[i, k, 0] - x[i, k, 0]
                for j in range(l):
                    a += x[i, k, j]
                acc += a
            s[k] = acc / m
            mk = x[0, k, 0] - x[0, k, 0] + s[k]
            acc = 0.0
            for i in range(n):
                a = x[i, k, 0] - x[i, k, 0]
                for j in range(l):
                    d = x[i, k, j] - mk
                    a += d * d
                acc += a
            q[k] = acc
    for k in range(c):
        stats[0, k] = s[k]
        stats[1, k] = q[k] / m


@njit(inline="always")
def _normalize_images(x, last, scale, shift, y, i0, i1):
    d1, d2 = x.shape[1], x.shape[2]
    if last:
        for i in range(i0, i1):
            for j in range(d1):
                for k in range(d2):
                    y[i, j, k] = x[i, j, k] * scale[k] + shift[k]
    else:
        for i in range(i0, i1):
            for j in range(d1):
                a, b = scale[j], shift[j]
                for k in range(d2):
                    y[i, j, k] = x[i, j, k] * a + b


@njit(
    [types.void(r3(t), types.boolean, r1(a), r1(a), w3(t), I) for t in F for a in F], **OPTS
)
def normalize(x, last, scale, shift, y, parts):
    n = x.shape[0]
    parts = min(parts, n)
    for p in prange(parts):
        _normalize_images(x, last, scale, shift, y, p * n // parts, (p + 1) * n // parts)


@njit(
    [types.void(r3(t), r3(t), types.boolean, r1(a), w2(a)) for t in F for a in F], **SERIAL
)
def sums(g, x, last, mean, out):
    n, d1, d2 = x.shape
    c = d2 if last else d1
    a = np.zeros(c, np.float64)
    b = np.zeros(c, np.float64)
    if last:
        ta = np.zeros(c, x.dtype)
        tb = np.zeros(c, x.dtype)
        mt = np.zeros(c, x.dtype)
        for k in range(c):
            mt[k] = mean[k]
        for i in range(n):
            ta[:] = 0
            tb[:] = 0
            for j in range(d1):
                for k in range(d2):
                    gv = g[i, j, k]
                    ta[k] += gv
                    tb[k] += gv * (x[i, j, k] - mt[k])
            for k in range(c):
                a[k] += ta[k]
                b[k] += tb[k]
    else:
        for j in range(d1):
            sa = 0.0
            sb = 0.0
            mj = x[0, j, 0] - x[0, j, 0] + mean[j]
            for i in range(n):
                pa = mj - mj
                pb = mj - mj
                for k in range(d2):
                    gv = g[i, j, k]
                    pa += gv
                    pb += gv * (x[i, j, k] - mj)
                sa += pa
                sb += pb
            a[j] = sa
            b[j] = sb
    for k in range(c):
        out[0, k] = a[k]
        out[1, k] = b[k]


@njit(inline="always")
def _grad_input_images(g, x, last, mean, k1, k2, k3, dx, i0, i1):
    d1, d2 = x.shape[1], x.shape[2]
    if last:
        for i in range(i0, i1):
            for j in range(d1):
                for k in range(d2):
                    dx[i, j, k] = k1[k] * g[i, j, k] + k2[k] * (x[i, j, k] - mean[k]) + k3[k]
    else:
        for i in range(i0, i1):
            for j in range(d1):
                a, b, m, e = k1[j], k2[j], mean[j], k3[j]
                for k in range(d2):
                    dx[i, j, k] = a * g[i, j, k] + b * (x[i, j, k] - m) + e


@njit(
    [
        types.void(r3(t), r3(t), types.boolean, r1(a), r1(a), r1(a), r1(a), w3(t), I)
        for t in F
        for a in F
    ],
    **OPTS,
)
def grad_input(g, x, last, mean, k1, k2, k3, dx, parts):
    n = x.shape[0]
    parts = min(parts, n)
    for p in prange(parts):
        i0, i1 = p * n // parts, (p + 1) * n // parts
        _grad_input_images(g, x, last, mean, k1, k2, k3, dx, i0, i1)


kernel = moments
"""

# Layer normalization (``LayerNormalize`` and ``LayerNormGradInput``) on C-contiguous
# (rows, n) views: each row is read from memory once (it stays in cache for the later passes)
# and written once. Row sums accumulate in float64 for float32 data too. ``affine_sums`` (the
# ``AffineSums`` op: layer and group norm's weight and bias gradients) works on (A, C, L) views
# with one parameter per C; ``Affine`` itself is batch norm's ``normalize`` (per-channel scale
# and shift).
ROWS_SOURCE = """
import numpy as np
from numba import njit, types


def r1(t):
    return types.Array(t, 1, "C", readonly=True)


def r2(t):
    return types.Array(t, 2, "C", readonly=True)


def r3(t):
    return types.Array(t, 3, "C", readonly=True)


def w2(t):
    return types.Array(t, 2, "C")


def w3(t):
    return types.Array(t, 3, "C")


F = (types.float32, types.float64)
OPTS = dict(cache=True, nogil=True, fastmath=True, error_model="numpy")


@njit(**OPTS)
def row_mean(x, i, t):
    # row i's mean, summed in float64, rounded to x's dtype through t[0]
    s = 0.0
    for j in range(x.shape[1]):
        s += x[i, j]
    t[0] = s / x.shape[1]
    return t[0]


@njit([types.void(r2(t), types.float64, w2(t)) for t in F], **OPTS)
def layer_norm(x, eps, y):
    rows, n = x.shape
    t = np.empty(2, x.dtype)  # the row's coefficients in x's dtype
    for i in range(rows):
        m = row_mean(x, i, t)
        q = 0.0
        for j in range(n):
            d = x[i, j] - m
            q += d * d
        t[1] = 1.0 / np.sqrt(q / n + eps)
        r = t[1]
        for j in range(n):
            y[i, j] = (x[i, j] - m) * r


@njit([types.void(r2(t), r2(t), types.float64, w2(t)) for t in F], **OPTS)
def layer_norm_grad(g, x, eps, dx):
    rows, n = x.shape
    t = np.empty(4, x.dtype)
    for i in range(rows):
        m = row_mean(x, i, t)
        q = 0.0
        sg = 0.0
        sgc = 0.0
        for j in range(n):
            d = x[i, j] - m
            gv = g[i, j]
            q += d * d
            sg += gv
            sgc += gv * d
        rstd = 1.0 / np.sqrt(q / n + eps)
        t[1] = rstd
        t[2] = -rstd * rstd * rstd * sgc / n
        t[3] = -rstd * sg / n
        k1, k2, k3 = t[1], t[2], t[3]
        for j in range(n):
            dx[i, j] = k1 * g[i, j] + k2 * (x[i, j] - m) + k3



@njit([types.void(r3(t), r3(t), w2(t)) for t in F], **OPTS)
def affine_sums(g, y, out):
    # out (2, C): [sum over A and L of g * y, of g], accumulated in float64
    na, nc, nl = y.shape
    s0 = np.zeros(nc, np.float64)
    s1 = np.zeros(nc, np.float64)
    if nl == 1:
        for i in range(na):
            for c in range(nc):
                gv = g[i, c, 0]
                s0[c] += gv * y[i, c, 0]
                s1[c] += gv
    else:
        for i in range(na):
            for c in range(nc):
                a0 = 0.0
                a1 = 0.0
                for j in range(nl):
                    gv = g[i, c, j]
                    a0 += gv * y[i, c, j]
                    a1 += gv
                s0[c] += a0
                s1[c] += a1
    for c in range(nc):
        out[0, c] = s0[c]
        out[1, c] = s1[c]


kernel = layer_norm
"""


def row_kernels(dtype):
    """The compiled layer-norm module (``layer_norm``, ``layer_norm_grad``, ``affine_sums``)
    when numba serves ``dtype`` and the module is ready; else None (the caller runs NumPy)."""
    return _jit.float_module("layernorm", ROWS_SOURCE, dtype)


def kernels(dtype):
    """The compiled module (``moments``, ``normalize``, ``sums``, ``grad_input``) when numba
    serves ``dtype`` and the module is ready; else None (the caller runs NumPy)."""
    return _jit.float_module("batchnorm", SOURCE, dtype)


PARALLEL_MIN = 1 << 14  # values from which ``normalize`` and ``grad_input`` split their images
# over numba's threads (``parts``; 2 threads, float32: 64x64x4x4 normalize 19 -> 16-18 us, input
# gradient 30-33 -> 24-26; 64x32x8x8 27 -> 21, 48 -> 31; 64x6x28x28 168 -> 64, 385 -> 118)


def parts(x) -> int:
    """How many blocks ``normalize`` and ``grad_input`` split ``x``'s images into: one per
    thread of ``backend.blas.kernel_threads()`` from ``PARALLEL_MIN`` values, else 1.

    >>> parts(np.ones(4))
    1
    """
    return _blas.kernel_threads() if x.size >= PARALLEL_MIN else 1


def _last_axes(nd: int) -> tuple:
    """Axes moving dim 1 last: (N, C, H, W) -> (N, H, W, C)."""
    return (0,) + tuple(range(2, nd)) + (1,)


def _first_axes(nd: int) -> tuple:
    """The inverse of ``_last_axes``: (N, H, W, C) -> (N, C, H, W)."""
    return (0, nd - 1) + tuple(range(1, nd - 1))


def view(x):
    """``(3-D C-contiguous view, last)`` of an (N, C, *) array: ``(N, C, L)`` for NCHW-like
    memory, ``(N, L, C)`` for channels-last memory; None for any other layout (or < 2 dims)."""
    if x.ndim < 2 or x.size == 0:
        return None
    n, c = x.shape[:2]
    if x.flags.c_contiguous:
        return x.reshape(n, c, -1), False
    if x.ndim > 2:
        t = x.transpose(_last_axes(x.ndim))
        if t.flags.c_contiguous:
            return t.reshape(n, -1, c), True
    return None


def like(x, last: bool):
    """A new array of ``x``'s shape and dtype in the layout ``last`` says, and its 3-D view."""
    n, c = x.shape[:2]
    if not last:
        out = np.empty(x.shape, x.dtype)
        return out, out.reshape(n, c, -1)
    t = np.empty((n,) + x.shape[2:] + (c,), x.dtype)
    return t.transpose(_first_axes(x.ndim)), t.reshape(n, -1, c)


def as_layout(g, last: bool):
    """``g``'s 3-D view in the layout ``last`` says: ``g`` itself when it is laid out so,
    else a copy."""
    v = view(g)
    if v is not None and v[1] == last:
        return v[0]
    _, out = like(g, last)
    n, c = g.shape[:2]
    src = g.reshape(n, c, -1)
    out[...] = src.transpose(0, 2, 1) if last else src
    return out
