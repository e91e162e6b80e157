"""Winograd F(2x2, 3x3) convolution on the CPU (Lavin & Gray, "Fast Algorithms for
Convolutional Neural Networks", 2015): 3x3, stride 1, with 2.25x fewer multiplications in the
matrix products than im2col + GEMM. Where maps and batches are large enough (``tile_size``),
``conv3x3`` and ``grad_weight3x3`` take F(4x4, 3x3) instead (its transforms in
``_winograd43``, the drivers below, ``DRIVERS``, shared): 4x fewer multiplications than im2col,
for about 10x F(2x2, 3x3)'s float32 rounding.

The math. In one dimension, two outputs of a 3-tap correlation of four inputs d are

    y = A^T [(G w) * (B^T d)]        (* elementwise)

    B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]
    G   = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]
    A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]

four multiplications instead of six. Nested, a 2x2 output tile of a 3x3 correlation of a 4x4
input tile d is ``Y = A^T [(G w G^T) * (B^T d B)] A``: 16 multiplications instead of 36. Over
channels the elementwise product becomes a sum over input channels, so with the input tiles
transformed, ``V[k, p, c] = (B^T d_p,c B)[k]`` for the 16 positions k of the 4x4 transform domain
and every tile p of every image, and the weights ``U[k, c, o] = (G w_o,c G^T)[k]``, the
convolution is 16 independent matrix products ``M[k] = V[k] @ U[k]`` ((tiles, C) x (C, O)),
and each output tile is ``A^T M[:, p, o] A``. The tiles step by 2
over the zero-padded input and overlap by 2; a last tile that reaches past an odd output size
computes values that are dropped. The input gradient of a stride-1 convolution is a 3x3
convolution of the output gradient with the flipped, in/out-swapped kernel (padding 2 - p), so
it runs the same code.

The weight gradient is the adjoint in w: ``dw = G^T [sum over tiles (A g_t A^T) * V_t] G``,
with ``g_t`` the 2x2 tiles of the output gradient: 16 products (C, tiles) x (tiles, O) over the
same transformed input tiles (``grad_weight3x3``, which can take the forward pass's ``V``).

Cost per output value: 16 * C / 4 = 4C multiply-adds against im2col's 9C, plus the transforms,
which are memory passes (the transformed input is 4x the input's size: 16 values per 2x2
tile, against im2col's 9x patches). The transforms are numba loops (``SOURCE``, compiled in
the background and cached on disk by ``ember.backend.jit``), written as loops that read one
or two rows of channels and write one or two (LLVM vectorizes those; one loop writing all 16
outputs of a tile did not vectorize, for fear of aliasing: the input transform took 1.6 ms
instead of 0.18 ms on 64x32x8x8).

A convolution runs as one numba kernel (``forward``; the weight gradient ``grad_weight``)
that works through the batch a block of images at a time, one run of blocks per numba thread
(``blas.image_blocks``: blocks of ``GROUP_BYTES`` of transformed tiles and products): each
thread transforms its block, runs the block's 16 products by calling OpenBLAS's ``gemm`` on
one BLAS thread, and transforms them back, while the block is in its cache. Before, each phase
ran over the whole batch (the transforms over numba's threads, the 16 products split between
them), and the 4-8 MB of tiles and products between phases came from memory: the 64x64x32x32
forward took 35-40 ms, and 22-23 ms a block at a time (PyTorch 30-35 ms); the digits model's
32 -> 32 8x8 layer 660-780 us against 525-700 us. The weight gradient sums each thread's
products into a part of its own; the parts are added after. Without numba, while the kernels
compile, or where NumPy's BLAS is not an OpenBLAS ember reaches (``ember.backend.blas``),
``conv3x3`` answers NotImplemented and the caller runs im2col + GEMM.

Rounding: B^T and A^T add and subtract up to nine values (G halves), so a float32 result has
a few times the rounding of one direct sum; measured max error relative to the output's largest
value against a float64 reference 1.5-3.1e-7 (forward and input gradient, 32-64 channels),
PyTorch's float32 (oneDNN) 1.5-7.5e-7 on the same inputs; float64 ~4e-16.

Measured on this project's 2-core AVX2 machine (float32, one process alternating with the
im2col path: im2col + GEMM with numba's gather, or the numba scatter of the input gradient;
best of repeats), im2col / Winograd per call. One BLAS thread, 64 images (machine shared with
other jobs, load 4-30):

    one BLAS thread       forward (grad mode)   input gradient   forward + weight gradient
    32 -> 32, 8x8         1.37-1.52x            1.34-1.44x       1.12-1.31x (quiet: 1.21x)
    32 -> 64, 4x4         1.08-1.25x            1.06-1.09x       1.14-1.21x (quiet: 1.26x)
    64 -> 64, 4x4         1.38-1.69x            1.41-1.83x       1.37-1.57x (quiet: 1.47x)
    64 -> 64, 32x32       1.51x                 2.43x            1.26x      (quiet: 1.55x)
    1 -> 32, 8x8          0.13x                 0.07x

Two BLAS threads, quiet machine (no other job), forward without gradient recording / input
gradient / forward + weight gradient: 64x64x32x32 -> 64 1.19-1.60x / 1.46-1.82x / 1.31x; the
digits model's 64-image layers 0.76-1.21x / 0.63-1.43x / 0.74-0.95x. The 16 products are small
and gain nothing from the second BLAS thread (16 products of 1024x32 by 32x32: 566 us with two
threads, 535 us with one), while im2col's one large product gains 1.4x. So ``pays`` asks for
2^19 multiply-adds per product with one BLAS thread and 2^24 with more.

Those figures predate the block-at-a-time kernels (they measured the phase-by-phase path);
the policy stands, as each product runs on one BLAS thread.

A forward pass while gradients are recorded keeps its transformed tiles ``V`` for the weight
gradient (``conv3x3(keep=True)``, held by ``ember.ops.conv``'s ``_keep`` as im2col's patches
are, where they fit its limit), and the weight gradient's override runs ``grad_weight3x3`` from
them; where none are kept it transforms the input again, block by block (64x64x32x32 -> 64: 23
ms against im2col's 43-46 ms).
"""

from __future__ import annotations

import numpy as np

from ..backend import blas as _blas
from ..backend import jit as _jit
from ..backend.memory import scratch as _scratch
from . import _conv_numba, _transpose_numba

HEAD = """
import numpy as np
from numba import njit, prange, types

from ember.backend import blas as _blas


def rc(t, nd):
    return types.Array(t, nd, "C", readonly=True)


def wc(t, nd):
    return types.Array(t, nd, "C")


I = types.int64
F = (types.float32, types.float64)


@njit(inline="always")
def _source_rows(xf, b, top, edge):
    # the input rows top .. top + R - 1 of image b of xf (N, H, W * C), R = len(edge): a view of
    # them, or ``edge`` filled with them and zero rows past the edges (the padding)
    count, h = edge.shape[0], xf.shape[1]
    if 0 <= top and top + count <= h:
        return xf[b, top : top + count]
    for r in range(count):
        if 0 <= top + r < h:
            edge[r] = xf[b, top + r]
        else:
            edge[r] = 0
    return edge


@njit(inline="always")
def _part_sum(partial):
    # partial[0] += partial[1] + ... (the parts, in order), whole positions at a time
    for part in range(1, partial.shape[0]):
        for k in range(partial.shape[1]):
            q, src = partial[0, k].reshape(-1), partial[part, k].reshape(-1)
            for i in range(q.size):
                q[i] += src[i]


@njit(inline="always")
def _kernel_last(r, dw):
    # r (9, at least O * C): the 3x3 kernels with (o, c) last, into dw (O, C, 3, 3)
    dwf = dw.reshape((-1, 9))
    for j in range(dwf.shape[0]):
        d = dwf[j]
        for k in range(9):
            d[k] = r[k, j]


@njit(inline="always")
def _output_tile(g, d, b, i, j, m):
    # the m x m output tile (i, j) of image b of g (N, Ho, Wo, O) into d (m * m, O), zeros
    # past the edges
    ho, wo, o = g.shape[1], g.shape[2], g.shape[3]
    for r in range(m):
        for s in range(m):
            dk = d[m * r + s]
            if m * i + r < ho and m * j + s < wo:
                src = g[b, m * i + r, m * j + s]
                for oc in range(o):
                    dk[oc] = src[oc]
            else:
                for oc in range(o):
                    dk[oc] = 0


"""

# The drivers of a convolution, for both tile sizes (``{P}`` transform positions, ``{R}`` input
# rows per tile, tiles ``{M}`` apart, ``{ACC}`` and ``{D}`` rows of scratch): this module's
# F(2x2, 3x3) and ``_winograd43``'s F(4x4, 3x3) fill it with their sizes and transforms (the
# per-tile ones each defines: ``_grad_tile``, and the input and output transforms' loops).
DRIVERS = """
# -- whole convolutions, a block of images at a time on each of numba's threads ------------------
# cblas_?gemm as ``_blas`` finds it in NumPy's OpenBLAS (none without one: then no kernels).
# Each thread transforms a block of images, runs the block's {P} products on one BLAS thread
# and transforms them back, while the block's tiles are in its cache.
GEMMS = _blas.numba_gemms()


def _sigs(*arrays):
    return [types.void(g, *(a(t, nd) for a, nd in arrays), I, I, I, I, I, I) for g, t in GEMMS]


@njit(inline="always")
def _block_scratch(kept, tiles, c, o, w, tw, dtype):
    # a thread's scratch for blocks of ``tiles`` tiles: its own transformed tiles (none where
    # they are kept), the products, an edge row and the rows of B^T d (zeros: the padding)
    own = np.empty(({P}, 0 if kept.shape[1] else tiles, c), dtype)
    out = np.empty(({P}, tiles, o), dtype)
    return own, out, np.empty(({R}, w * c), dtype), np.zeros(({R}, {M} * tw + 2, c), dtype)


@njit(cache=True, nogil=True, error_model="numpy")
def _grad_images(g, z, first, b0, b1, th, tw, d, t):
    # g: (N, Ho, Wo, O) channels-last output gradient; z: ({P}, tiles, O) = A g A^T per {M}x{M}
    # tile (``_grad_tile``; zeros past the map's edges), tile 0 the first of image ``first``,
    # for images b0 .. b1; ``d`` ({D}, O, zeros) and ``t`` ({ACC}, O) scratch
    for b in range(b0, b1):
        for i in range(th):
            for j in range(tw):
                _output_tile(g, d, b, i, j, {M})
                _grad_tile(d, t, z, ((b - first) * th + i) * tw + j)


def forward(gemm, x, u, y, kept, ph, pw, th, tw, group, parts):
    # y (N, Ho, Wo, O) = the convolution of x (N, H, W, C) by the transformed weights u
    # ({P}, C, O), ``parts`` runs of blocks of ``group`` images; the transformed tiles go into
    # ``kept`` ({P}, N * th * tw, C) when it has any, else into each thread's scratch
    n, w, c = x.shape[0], x.shape[2], x.shape[3]
    o = u.shape[2]
    tiles = group * th * tw
    blocks = (n + group - 1) // group
    one, zero = x.dtype.type(1), x.dtype.type(0)
    for part in prange(parts):
        own, m, edge, rows = _block_scratch(kept, tiles, c, o, w, tw, x.dtype)
        acc = np.empty(({ACC}, o), x.dtype)
        for blk in range(blocks * part // parts, blocks * (part + 1) // parts):
            b0, b1 = blk * group, min(n, (blk + 1) * group)
            v, first = (kept, 0) if kept.shape[1] else (own, b0)
            _input_images(x, v, first, b0, b1, ph, pw, th, tw, edge, rows)
            t0, cnt = (b0 - first) * th * tw, (b1 - b0) * th * tw
            for k in range({P}):
                gemm(101, 111, 111, cnt, o, c, one, v[k, t0:].ctypes.data, c, u[k].ctypes.data, o,
                     zero, m[k].ctypes.data, o)
            _output_images(m, y, b0, b0, b1, th, tw, acc)


def grad_weight(gemm, x, g, kept, partial, ph, pw, th, tw, group, parts):
    # partial[part] ({P}, O, C) = the sum over that run of blocks of Z^T V, V the transformed
    # tiles of x (N, H, W, C; read from ``kept`` when it has any, and then x may be empty) and
    # Z those of the output gradient g (N, Ho, Wo, O); ``weight_back_tf`` adds the parts up
    n, w, c = g.shape[0], x.shape[2], x.shape[3]
    o = g.shape[3]
    tiles = group * th * tw
    blocks = (n + group - 1) // group
    one = x.dtype.type(1)
    for part in prange(parts):
        own, z, edge, rows = _block_scratch(kept, tiles, c, o, w, tw, x.dtype)
        d = np.zeros(({D}, o), x.dtype)
        t = np.empty(({ACC}, o), x.dtype)
        du = partial[part]
        du[...] = 0
        for blk in range(blocks * part // parts, blocks * (part + 1) // parts):
            b0, b1 = blk * group, min(n, (blk + 1) * group)
            v, first = (kept, 0) if kept.shape[1] else (own, b0)
            if not kept.shape[1]:
                _input_images(x, v, first, b0, b1, ph, pw, th, tw, edge, rows)
            _grad_images(g, z, b0, b0, b1, th, tw, d, t)
            t0, cnt = (b0 - first) * th * tw, (b1 - b0) * th * tw
            for k in range({P}):
                gemm(101, 112, 111, o, c, cnt, one, z[k].ctypes.data, o, v[k, t0:].ctypes.data, c,
                     one, du[k].ctypes.data, c)


if GEMMS:
    flags = dict(cache=True, nogil=True, error_model="numpy", parallel=True)
    forward = njit(_sigs((rc, 4), (rc, 3), (wc, 4), (wc, 3)), **flags)(forward)
    grad_weight = njit(_sigs((rc, 4), (rc, 4), (wc, 3), (wc, 4)), **flags)(grad_weight)
else:
    forward = grad_weight = None

kernel = forward
"""

SOURCE = (
    HEAD
    + """@njit(cache=True, nogil=True, error_model="numpy")
def _rows_bt(d0, d1, d2, d3, r0, r1, r2, r3):
    # B^T d for whole rows: r = (d0 - d2, d1 + d2, d2 - d1, d1 - d3)
    for q in range(d0.size):
        r0[q] = d0[q] - d2[q]
    for q in range(d0.size):
        r1[q] = d1[q] + d2[q]
    for q in range(d0.size):
        r2[q] = d2[q] - d1[q]
    for q in range(d0.size):
        r3[q] = d1[q] - d3[q]


@njit(cache=True, nogil=True, error_model="numpy")
def _input_images(x, v, first, b0, b1, ph, pw, th, tw, edge, rows):
    # x: (N, H, W, C) channels-last; images b0 .. b1 into v (16, tiles, C), whose tile 0 is the
    # first of image ``first``. Per row of tiles: the rows of B^T d as whole zero-padded image
    # rows (4 long loops), then times B per tile, two outputs per loop. Few pointers per loop,
    # so that LLVM vectorizes them (a loop writing all 16 outputs would not, for fear of
    # aliasing). ``edge`` (4, W * C) and ``rows`` (4, 2 * tw + 2, C, zeros) are scratch.
    n, h, w, c = x.shape
    xf = x.reshape((n, h, w * c))
    lo, hi = pw * c, (pw + w) * c
    for b in range(b0, b1):
        for i in range(th):
            p0 = ((b - first) * th + i) * tw
            r0 = rows[0].reshape(-1)[lo:hi]
            r1 = rows[1].reshape(-1)[lo:hi]
            r2 = rows[2].reshape(-1)[lo:hi]
            r3 = rows[3].reshape(-1)[lo:hi]
            d = _source_rows(xf, b, 2 * i - ph, edge)
            _rows_bt(d[0], d[1], d[2], d[3], r0, r1, r2, r3)
            for r in range(4):
                t = rows[r]
                v0, v1, v2, v3 = v[4 * r], v[4 * r + 1], v[4 * r + 2], v[4 * r + 3]
                for j in range(tw):
                    e0, e1, e2, e3 = t[2 * j], t[2 * j + 1], t[2 * j + 2], t[2 * j + 3]
                    o0, o2 = v0[p0 + j], v2[p0 + j]
                    for ch in range(c):
                        o0[ch] = e0[ch] - e2[ch]
                        o2[ch] = e2[ch] - e1[ch]
                    o1, o3 = v1[p0 + j], v3[p0 + j]
                    for ch in range(c):
                        o1[ch] = e1[ch] + e2[ch]
                        o3[ch] = e1[ch] - e3[ch]


@njit(cache=True, nogil=True, error_model="numpy")
def _output_images(m, y, first, b0, b1, th, tw, u):
    # m: (16, tiles, O), tile 0 the first of image ``first``; y: (N, Ho, Wo, O), images b0 ..
    # b1 written; ``u`` (8, O) scratch
    n, ho, wo, o = y.shape
    for b in range(b0, b1):
        for i in range(th):
            for j in range(tw):
                p = ((b - first) * th + i) * tw + j
                for s in range(4):  # rows of A^T times m's rows
                    m0, m1, m2, m3 = m[s, p], m[4 + s, p], m[8 + s, p], m[12 + s, p]
                    u0, u1 = u[s], u[4 + s]
                    for oc in range(o):
                        u0[oc] = m0[oc] + m1[oc] + m2[oc]
                        u1[oc] = m1[oc] - m2[oc] - m3[oc]
                for r in range(2):  # then times A: columns
                    oh = 2 * i + r
                    if oh >= ho:
                        continue
                    q0, q1, q2, q3 = u[4 * r], u[4 * r + 1], u[4 * r + 2], u[4 * r + 3]
                    y0 = y[b, oh, 2 * j]
                    if 2 * j + 1 < wo:
                        y1 = y[b, oh, 2 * j + 1]
                        for oc in range(o):
                            y0[oc] = q0[oc] + q1[oc] + q2[oc]
                            y1[oc] = q1[oc] - q2[oc] - q3[oc]
                    else:
                        for oc in range(o):
                            y0[oc] = q0[oc] + q1[oc] + q2[oc]


@njit(inline="always")
def _g(a0, a1, a2, o0, o1, o2, o3, half):
    # G times three rows of O values (G's rows 1 and 2 halve sums), a loop along O each
    for oc in range(o0.size):
        o0[oc] = a0[oc]
        o3[oc] = a2[oc]
    for oc in range(o0.size):
        o1[oc] = half * (a0[oc] + a1[oc] + a2[oc])
        o2[oc] = half * (a0[oc] - a1[oc] + a2[oc])


@njit(
    [types.void(rc(t, 4), wc(t, 3)) for t in F],
    cache=True, nogil=True, error_model="numpy",
)
def weight_tf(w, u):
    # w: (C, 3, 3, O), the weight with its output channels last; u: (16, C, O) = G w G^T per
    # (c, o), every loop along O (with O first, a loop of strided reads took 124 us for 64x64
    # channels)
    c, o = w.shape[0], w.shape[3]
    half = u.dtype.type(0.5)
    t = np.empty((12, o), u.dtype)  # G w, [3 * row + column, o]
    for ch in range(c):
        for s in range(3):  # G w: rows
            _g(w[ch, 0, s], w[ch, 1, s], w[ch, 2, s], t[s], t[3 + s], t[6 + s], t[9 + s], half)
        for r in range(4):  # (G w) G^T: columns
            u0, u1, u2, u3 = u[4 * r, ch], u[4 * r + 1, ch], u[4 * r + 2, ch], u[4 * r + 3, ch]
            _g(t[3 * r], t[3 * r + 1], t[3 * r + 2], u0, u1, u2, u3, half)


@njit(inline="always")
def _a(a0, a1, o0, o1, o2, o3):
    # A times two rows of O values: (a0, a0 + a1, a0 - a1, -a1), a loop along O each
    for oc in range(o0.size):
        o0[oc] = a0[oc]
        o3[oc] = -a1[oc]
    for oc in range(o0.size):
        o1[oc] = a0[oc] + a1[oc]
        o2[oc] = a0[oc] - a1[oc]


@njit(inline="always")
def _grad_tile(d, t, z, p):
    # A d A^T of one 2x2 gradient tile d (4, O) into position p of z (16, tiles, O); t (8, O)
    for s in range(2):  # A times the tile's rows
        _a(d[s], d[2 + s], t[s], t[2 + s], t[4 + s], t[6 + s])
    for r in range(4):  # then times A^T: columns
        z0, z1 = z[4 * r, p], z[4 * r + 1, p]
        _a(t[2 * r], t[2 * r + 1], z0, z1, z[4 * r + 2, p], z[4 * r + 3, p])


@njit(inline="always")
def _gt(q0, q1, q2, q3, o0, o1, o2, half):
    # G^T times four rows (whole rows at a time: one output a loop, so that LLVM vectorizes)
    for i in range(o0.size):
        o0[i] = q0[i] + half * (q1[i] + q2[i])
    for i in range(o0.size):
        o1[i] = half * (q1[i] - q2[i])
    for i in range(o0.size):
        o2[i] = half * (q1[i] + q2[i]) + q3[i]


@njit(
    [types.void(wc(t, 4), wc(t, 4)) for t in F],
    cache=True, nogil=True, error_model="numpy",
)
def weight_back_tf(partial, dw):
    # partial: (parts, 16, O, C), the transformed weights' gradient in parts (added up in place
    # into partial[0]); dw: (O, C, 3, 3) = G^T du G, computed for all (o, c) at once along
    # rows of O * C values, then written 9 values per (o, c). (One (o, c) at a time, of
    # scalars, took 74 us for 64x64 channels; this takes about 22.)
    _part_sum(partial)
    n = partial.shape[2] * partial.shape[3]
    half = dw.dtype.type(0.5)
    q = partial[0].reshape((16, n))
    t = np.empty((12, n), dw.dtype)  # G^T du, [4 * row + column]
    r = np.empty((9, n + 16), dw.dtype)  # G^T du G, [3 * row + column]; padded so that its
    # rows are not a multiple of 4 KiB apart (_kernel_last reads all nine at once)
    for s in range(4):  # G^T du: rows
        _gt(q[s], q[4 + s], q[8 + s], q[12 + s], t[s], t[4 + s], t[8 + s], half)
    for i in range(3):  # then times G: columns
        _gt(t[4 * i], t[4 * i + 1], t[4 * i + 2], t[4 * i + 3],
            r[3 * i, :n], r[3 * i + 1, :n], r[3 * i + 2, :n], half)
    _kernel_last(r, dw)

"""
    + DRIVERS.format(P=16, R=4, M=2, ACC=8, D=4)
)


# A block of images whose transformed tiles and products (16 values per tile and channel, 36 for
# F(4x4, 3x3); input and output channels) take about this many bytes goes through a thread at a
# time, while in its cache: 64 images of the digits model's 32 -> 32 8x8 layer make 2 blocks (one
# per thread), one 64x32x32 image of 64 -> 64 channels a block.
GROUP_BYTES = 2 << 20


def kernels(dtype):
    """The compiled transforms when numba serves ``dtype`` and they are ready, else None."""
    return _jit.float_module("conv_winograd", SOURCE, dtype)


ENABLED = True  # False: every convolution takes im2col + GEMM (A/B benchmarks, tests)


def applies(kernel, stride, dilation, groups: int, a, w) -> bool:
    """Whether Winograd (either tile size) computes this convolution: 3x3, stride 1, no
    dilation, one group, float32 or float64 operands of one dtype (host arrays)."""
    return (
        tuple(kernel) == (3, 3)
        and tuple(stride) == (1, 1)
        and tuple(dilation) == (1, 1)
        and groups == 1
        and a.dtype == w.dtype
        and a.dtype in _jit.FLOAT_NP_DTYPES
        and type(a) is np.ndarray
    )


# Smallest product measured faster: tiles * C * O multiply-adds per transform position
# (64 images of 32 -> 64 channels on 4x4 maps: 256 tiles * 32 * 64).
MIN_WORK = 1 << 19
# With more BLAS threads: where im2col's one large product gains from them and the 16 small
# ones do not (measured on 2 cores, quiet machine, im2col / Winograd: 64x64x32x32 -> 64
# forward 1.19-1.60x, input gradient 1.46-1.82x, forward + weight gradient 1.31x; the digits
# model's 64-image layers, 2^20 per product, 0.63-1.43x and 0.74-0.95x).
MIN_WORK_THREADED = 1 << 24
# Fewest output pixels (images x map) measured faster: below, the weight's transforms (16 x C x O
# values, twice a step) outweigh the 16 products of few rows each. Forward + both gradients,
# Winograd / im2col ms, 2 cores: 32 x 256 -> 256 on 2x2 maps 6.2 / 5.1 and 512 -> 512 25.4 /
# 20.3, 8 x 256 on 4x4 5.6 / 4.8; 64 x 128 on 2x2 (256 pixels) 1.3 / 1.8, 32 x 256 on 4x4 10.3 /
# 13.0.
MIN_OUTPUTS = 256


def pays(n: int, c: int, o: int, ho: int, wo: int) -> bool:
    """Whether Winograd measured faster than im2col + GEMM for ``c`` input and ``o`` output
    channels over an ``n`` x ``ho`` x ``wo`` output (the input gradient: its own convolution's
    channels and size).

    The 16 products save 5/9 of im2col's multiply-adds while the transforms cost memory passes
    over ``c + o`` channels per tile, so the saving grows with ``c * o / (c + o)``; with one
    input channel Winograd loses 7x. With one BLAS thread it wins from 2^19 multiply-adds per
    product (the digits model's 32 -> 32 and 32 -> 64 layers, 64 images); with more BLAS
    threads im2col's one large product gains from them and the 16 small ones do not, so it
    takes 2^24 (64 images of 64 -> 64 channels on 32x32 maps: see the module's figures).
    """
    if not ENABLED or c * o < 16 * (c + o) or min(ho, wo) == 1 or n * ho * wo < MIN_OUTPUTS:
        return False  # (a map one output wide uses half a tile or less: 512 channels, 32 images
        # of 1x1, forward and both gradients 23.5 ms against im2col's 14.2)
    work = n * ((ho + 1) // 2) * ((wo + 1) // 2) * c * o
    return work >= (MIN_WORK if _blas.one_thread() else MIN_WORK_THREADED)


def _tiles(h: int, w: int, padding, m: int = 2) -> tuple:
    """(Ho, Wo, tile rows, tile columns) of a 3x3 stride-1 convolution of an h x w input, in
    output tiles of m x m."""
    ho, wo = h + 2 * padding[0] - 2, w + 2 * padding[1] - 2
    return ho, wo, (ho + m - 1) // m, (wo + m - 1) // m


def _plan(n: int, th: int, tw: int, channels: int, itemsize: int, m: int) -> tuple:
    """``(images per block, runs of blocks)`` (``blas.image_blocks``): blocks within
    ``GROUP_BYTES`` of transformed tiles and products (``channels``: input and output)."""
    return _blas.image_blocks(n, (m + 2) ** 2 * th * tw * channels * itemsize, GROUP_BYTES)


# F(4x4, 3x3) (``_winograd43``) where ``tile_size`` says; False keeps F(2x2, 3x3) everywhere (its
# float32 rounding is PyTorch's, F(4x4, 3x3)'s ~10x).
TILE4 = True
# Measured on the 2-core development machine (float32, channels-last, ms, F(2x2) -> F(4x4);
# forward keeping its tiles + input gradient + weight gradient from them unless said):
# images x channels x map: 64 x 64 x 32x32 forward 15.3 -> 9.7, input gradient 15.2 -> 9.7,
# weight gradient 15.5 -> 12.1; 64 x 128 x 16x16 42.7 -> 27.6; 8 x 256 x 32x32 81.5 -> 65.0;
# 64 x 32 x 16x16 4.71 -> 4.34; 128 x 256 x 8x8 82.0 -> 70.8; 128 x 64 x 8x8 7.04 -> 5.38;
# 64 x 64 x 8x8 3.34 -> 2.91; where the 4x4-output tiles are few against the channels it lost:
# 8 x 512 x 16x16 115 -> 154, 4 x 128 x 16x16 3.46 -> 5.15, 32 x 256 x 8x8 26.0 -> 32.7; on 4x4
# maps it always lost (64 x 128: 3.61 -> 5.02); 64 x 32 x 8x8 0.92 -> 0.93 (the digits model).
TILE4_MIN = 16 * 16  # output values from which a map takes F(4x4, 3x3) at any channel count,
TILE4_WIDE = 64  # from 8x8 with this many channels in and out,
TILE4_TILES = 2  # where the batch makes this many 4x4 tiles per channel of the wider side


def tile_size(n: int, c: int, o: int, ho: int, wo: int) -> int:
    """The output tile of the Winograd variant for ``n`` images of ``c`` -> ``o`` channels on
    an ``ho`` x ``wo`` output map: 4 (F(4x4, 3x3), ``_winograd43``) where ``TILE4`` and the
    measurements above favour it, else 2 (F(2x2, 3x3)).

    >>> tile_size(64, 64, 64, 32, 32), tile_size(64, 32, 32, 8, 8), tile_size(8, 512, 512, 16, 16)
    (4, 2, 2)
    """
    if not TILE4:
        return 2
    size = ho * wo
    maps = size >= TILE4_MIN or (size >= 64 and min(c, o) >= TILE4_WIDE)
    tiles = n * ((ho + 3) // 4) * ((wo + 3) // 4)
    return 4 if maps and tiles >= TILE4_TILES * max(c, o) else 2


def _module(m: int, dtype):
    if m == 4:
        from . import _winograd43

        return _winograd43.kernels(dtype)
    return kernels(dtype)


def _variant(n: int, c: int, o: int, ho: int, wo: int, dtype) -> tuple:
    """``(tile size, its compiled module or None)`` (``tile_size``'s arguments): F(2x2, 3x3)
    while F(4x4, 3x3)'s module still compiles."""
    m = tile_size(n, c, o, ho, wo)
    mod = _module(m, dtype)
    if mod is None and m == 4:
        m, mod = 2, kernels(dtype)
    return m, mod


def tiles_bytes(x_shape: tuple, o: int, padding, dtype) -> int:
    """The bytes of ``conv3x3``'s transformed input tiles for an input of ``x_shape`` and
    ``dtype`` and ``o`` output channels: what ``keep=True`` holds.

    >>> tiles_bytes((64, 32, 8, 8), 32, (1, 1), np.float32)
    2097152
    """
    n, c, h, w = x_shape
    ho, wo, _, _ = _tiles(h, w, padding)
    m = tile_size(n, c, o, ho, wo)
    _, _, th, tw = _tiles(h, w, padding, m)
    return (m + 2) ** 2 * n * th * tw * c * np.dtype(dtype).itemsize


def conv3x3(xp, x, w, padding, swap: bool = False, keep: bool = False):
    """The stride-1 3x3 cross-correlation of ``x`` (N, C, H, W, any memory layout) with ``w``
    (O, C, 3, 3), zero padding ``padding``: (N, O, Ho, Wo) as a view of channels-last memory.
    With ``swap``, ``w`` is (C', O', 3, 3) and the kernel used is ``w`` in/out-swapped and
    flipped (the input gradient's). With ``keep`` it answers ``(y, v)``, ``v`` the transformed
    input tiles (``tiles_bytes``) for ``grad_weight3x3``. F(4x4, 3x3) or F(2x2, 3x3) as
    ``tile_size`` says. NotImplemented where the kernels are not compiled (or NumPy's BLAS is
    not an OpenBLAS ember reaches: ``backend.blas``)."""
    if xp is not np or w.dtype != x.dtype:
        return NotImplemented
    if swap:
        w = w.transpose(1, 0, 2, 3)[:, :, ::-1, ::-1]
    n, c, h, wd = x.shape
    o = w.shape[0]
    m, mod = _variant(n, c, o, *_tiles(h, wd, padding)[:2], x.dtype)
    if mod is None:
        return NotImplemented
    p = (m + 2) ** 2
    ph, pw = padding
    ho, wo, th, tw = _tiles(h, wd, padding, m)
    u = _scratch(xp, "wino_u", (p, c, o), x.dtype)
    mod.weight_tf(_outputs_last(w), u)
    y = np.empty((n, ho, wo, o), x.dtype)
    kept = np.empty((p, n * th * tw if keep else 0, c), x.dtype)
    group, parts = _plan(n, th, tw, c + o, x.itemsize, m)
    xt = _conv_numba.to_channels_last(x)
    gemm = _blas.library().gemm[_blas.FLOATS[x.dtype]]
    mod.forward(gemm, xt, u, y, kept, ph, pw, th, tw, group, parts)
    y = y.transpose(0, 3, 1, 2)
    return (y, kept) if keep else y


def _outputs_last(w):
    """The weight (O, C, 3, 3) as a C-contiguous (C, 3, 3, O) array: a blocked copy on numba's
    threads for a large C-contiguous weight (``_transpose_numba``), else NumPy's."""
    if w.flags.c_contiguous:
        t = _transpose_numba.transposed(w.reshape(w.shape[0], -1))
        if t is not None:
            return t.reshape(w.shape[1], 3, 3, w.shape[0])
    return np.ascontiguousarray(w.transpose(1, 2, 3, 0))


def grad_weight3x3(xp, x, g, padding, v=None):
    """The weight gradient (O, C, 3, 3) of ``conv3x3(x, w, padding)`` for output gradient ``g``
    (N, O, Ho, Wo): ``G^T [sum over tiles (A g_t A^T) * V_t] G``, one product
    (C, tiles) x (tiles, O) per transform position. ``v``: the forward pass's transformed tiles
    of ``x`` where kept (their variant: 16 positions F(2x2, 3x3), 36 F(4x4, 3x3)).
    NotImplemented where the transforms are not compiled."""
    if xp is not np or g.dtype != x.dtype:
        return NotImplemented
    n, c, h, wd = x.shape
    o = g.shape[1]
    if v is None:
        m, mod = _variant(n, c, o, *_tiles(h, wd, padding)[:2], x.dtype)
    else:  # the kept tiles' variant
        m = 2 if v.shape[0] == 16 else 4
        mod = _module(m, x.dtype)
    if mod is None:
        return NotImplemented
    p = (m + 2) ** 2
    ph, pw = padding
    _, _, th, tw = _tiles(h, wd, padding, m)
    gt = _conv_numba.to_channels_last(g)
    if v is None:
        xt, v = _conv_numba.to_channels_last(x), np.empty((p, 0, c), x.dtype)
    else:
        xt = np.empty((0, 0, 0, c), x.dtype)
    group, parts = _plan(n, th, tw, c + o, x.itemsize, m)
    partial = np.empty((parts, p, o, c), x.dtype)
    gemm = _blas.library().gemm[_blas.FLOATS[x.dtype]]
    mod.grad_weight(gemm, xt, gt, v, partial, ph, pw, th, tw, group, parts)
    dw = np.empty((o, c, 3, 3), x.dtype)
    mod.weight_back_tf(partial, dw)
    return dw
