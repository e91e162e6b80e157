"""Winograd F(4x4, 3x3): the transforms of ``_winograd``'s convolution for 4x4 output tiles.

The same scheme as F(2x2, 3x3) (``_winograd``'s notes), with 6x6 input tiles stepping by 4
(Lavin & Gray's matrices, interpolation points 0, +-1, +-2 and infinity):

    B^T = [[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
           [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]]
    G   = [[1/4, 0, 0], [-1/6, -1/6, -1/6], [-1/6, 1/6, -1/6],
           [1/24, 1/12, 1/6], [1/24, -1/12, 1/6], [0, 0, 1]]
    A^T = [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]]

36 products per 16 outputs: 2.25 C multiply-adds per output value against F(2x2, 3x3)'s 4 C
and im2col's 9 C, and transformed tiles 2.25x the input's size against 4x. The price is
rounding: the transforms scale by up to 8 and 1/24, so a float32 result carries several times
F(2x2, 3x3)'s error (``_winograd.tile_size`` says where each serves). The kernels are written
as ``_winograd``'s: loops along channels that read a few rows and write one or two, so that
LLVM vectorizes them; the drivers (a block of images per numba thread, OpenBLAS's ``gemm`` on
that thread) and the gradient's tile loop are ``_winograd.DRIVERS`` with 36 positions.
"""

from __future__ import annotations

from ..backend import jit as _jit
from ._winograd import DRIVERS, HEAD

SOURCE = (
    HEAD
    + """@njit(cache=True, nogil=True, error_model="numpy")
def _rows_bt(d0, d1, d2, d3, d4, d5, r0, r1, r2, r3, r4, r5):
    # B^T d for whole rows, one output row per loop
    four = d0.dtype.type(4)
    five = d0.dtype.type(5)
    two = d0.dtype.type(2)
    for q in range(d0.size):
        r0[q] = four * d0[q] - five * d2[q] + d4[q]
    for q in range(d0.size):
        r1[q] = d4[q] + d3[q] - four * (d1[q] + d2[q])
    for q in range(d0.size):
        r2[q] = d4[q] - d3[q] + four * (d1[q] - d2[q])
    for q in range(d0.size):
        r3[q] = d4[q] - d2[q] + two * (d3[q] - d1[q])
    for q in range(d0.size):
        r4[q] = d4[q] - d2[q] - two * (d3[q] - d1[q])
    for q in range(d0.size):
        r5[q] = four * d1[q] - five * d3[q] + d5[q]


@njit(cache=True, nogil=True, error_model="numpy")
def _input_images(x, v, first, b0, b1, ph, pw, th, tw, edge, rows):
    # x: (N, H, W, C) channels-last; images b0 .. b1 into v (36, tiles, C), whose tile 0 is the
    # first of image ``first``: per row of tiles, the rows of B^T d as whole zero-padded image
    # rows, then times B per tile, two outputs per loop. ``edge`` (6, W * C) and ``rows``
    # (6, 4 * tw + 2, C, zeros) are scratch.
    n, h, w, c = x.shape
    xf = x.reshape((n, h, w * c))
    lo, hi = pw * c, (pw + w) * c
    four = x.dtype.type(4)
    five = x.dtype.type(5)
    two = x.dtype.type(2)
    for b in range(b0, b1):
        for i in range(th):
            p0 = ((b - first) * th + i) * tw
            r0 = rows[0].reshape(-1)[lo:hi]
            r1 = rows[1].reshape(-1)[lo:hi]
            r2 = rows[2].reshape(-1)[lo:hi]
            r3 = rows[3].reshape(-1)[lo:hi]
            r4 = rows[4].reshape(-1)[lo:hi]
            r5 = rows[5].reshape(-1)[lo:hi]
            d = _source_rows(xf, b, 4 * i - ph, edge)
            _rows_bt(d[0], d[1], d[2], d[3], d[4], d[5], r0, r1, r2, r3, r4, r5)
            for r in range(6):
                t = rows[r]
                v0, v1, v2 = v[6 * r], v[6 * r + 1], v[6 * r + 2]
                v3, v4, v5 = v[6 * r + 3], v[6 * r + 4], v[6 * r + 5]
                for j in range(tw):
                    e0, e1, e2 = t[4 * j], t[4 * j + 1], t[4 * j + 2]
                    e3, e4, e5 = t[4 * j + 3], t[4 * j + 4], t[4 * j + 5]
                    o0, o1 = v0[p0 + j], v1[p0 + j]
                    for ch in range(c):
                        o0[ch] = four * e0[ch] - five * e2[ch] + e4[ch]
                        o1[ch] = e4[ch] + e3[ch] - four * (e1[ch] + e2[ch])
                    o2, o3 = v2[p0 + j], v3[p0 + j]
                    for ch in range(c):
                        o2[ch] = e4[ch] - e3[ch] + four * (e1[ch] - e2[ch])
                        o3[ch] = e4[ch] - e2[ch] + two * (e3[ch] - e1[ch])
                    o4, o5 = v4[p0 + j], v5[p0 + j]
                    for ch in range(c):
                        o4[ch] = e4[ch] - e2[ch] - two * (e3[ch] - e1[ch])
                        o5[ch] = four * e1[ch] - five * e3[ch] + e5[ch]


@njit(cache=True, nogil=True, error_model="numpy")
def _output_images(m, y, first, b0, b1, th, tw, u):
    # m: (36, tiles, O), tile 0 the first of image ``first``; y: (N, Ho, Wo, O), images b0 ..
    # b1 written; ``u`` (24, O) scratch: A^T m, [6 * output row + column]
    n, ho, wo, o = y.shape
    two = y.dtype.type(2)
    four = y.dtype.type(4)
    eight = y.dtype.type(8)
    for b in range(b0, b1):
        for i in range(th):
            for j in range(tw):
                p = ((b - first) * th + i) * tw + j
                for s in range(6):  # rows of A^T times m's rows
                    m0, m1, m2 = m[s, p], m[6 + s, p], m[12 + s, p]
                    m3, m4, m5 = m[18 + s, p], m[24 + s, p], m[30 + s, p]
                    u0, u1 = u[s], u[6 + s]
                    for oc in range(o):
                        u0[oc] = m0[oc] + m1[oc] + m2[oc] + m3[oc] + m4[oc]
                        u1[oc] = m1[oc] - m2[oc] + two * (m3[oc] - m4[oc])
                    u2, u3 = u[12 + s], u[18 + s]
                    for oc in range(o):
                        u2[oc] = m1[oc] + m2[oc] + four * (m3[oc] + m4[oc])
                        u3[oc] = m1[oc] - m2[oc] + eight * (m3[oc] - m4[oc]) + m5[oc]
                cols = min(4, wo - 4 * j)
                for r in range(4):  # then times A: columns
                    oh = 4 * i + r
                    if oh >= ho:
                        break
                    q0, q1, q2 = u[6 * r], u[6 * r + 1], u[6 * r + 2]
                    q3, q4, q5 = u[6 * r + 3], u[6 * r + 4], u[6 * r + 5]
                    y0 = y[b, oh, 4 * j]
                    if cols == 4:
                        y1, y2, y3 = y[b, oh, 4 * j + 1], y[b, oh, 4 * j + 2], y[b, oh, 4 * j + 3]
                        for oc in range(o):
                            y0[oc] = q0[oc] + q1[oc] + q2[oc] + q3[oc] + q4[oc]
                            y1[oc] = q1[oc] - q2[oc] + two * (q3[oc] - q4[oc])
                        for oc in range(o):
                            y2[oc] = q1[oc] + q2[oc] + four * (q3[oc] + q4[oc])
                            y3[oc] = q1[oc] - q2[oc] + eight * (q3[oc] - q4[oc]) + q5[oc]
                        continue
                    for oc in range(o):
                        y0[oc] = q0[oc] + q1[oc] + q2[oc] + q3[oc] + q4[oc]
                    if cols > 1:
                        y1 = y[b, oh, 4 * j + 1]
                        for oc in range(o):
                            y1[oc] = q1[oc] - q2[oc] + two * (q3[oc] - q4[oc])
                    if cols > 2:
                        y2 = y[b, oh, 4 * j + 2]
                        for oc in range(o):
                            y2[oc] = q1[oc] + q2[oc] + four * (q3[oc] + q4[oc])


@njit(inline="always")
def _g(a0, a1, a2, o0, o1, o2, o3, o4, o5):
    # G times three rows of O values, a loop along O for each pair of outputs
    c4 = o0.dtype.type(1 / 4)
    c6 = o0.dtype.type(1 / 6)
    c12 = o0.dtype.type(1 / 12)
    c24 = o0.dtype.type(1 / 24)
    for oc in range(o0.size):
        o0[oc] = c4 * a0[oc]
        o5[oc] = a2[oc]
    for oc in range(o0.size):
        o1[oc] = -c6 * (a0[oc] + a1[oc] + a2[oc])
        o2[oc] = -c6 * (a0[oc] - a1[oc] + a2[oc])
    for oc in range(o0.size):
        o3[oc] = c24 * a0[oc] + c12 * a1[oc] + c6 * a2[oc]
        o4[oc] = c24 * a0[oc] - c12 * a1[oc] + c6 * a2[oc]


@njit(
    [types.void(rc(t, 4), wc(t, 3)) for t in F],
    cache=True, nogil=True, error_model="numpy",
)
def weight_tf(w, u):
    # w: (C, 3, 3, O), the weight with its output channels last; u: (36, C, O) = G w G^T per
    # (c, o), every loop along O
    c, o = w.shape[0], w.shape[3]
    t = np.empty((18, o), u.dtype)  # G w, [3 * row + column, o]
    for ch in range(c):
        for s in range(3):  # G w: rows
            _g(w[ch, 0, s], w[ch, 1, s], w[ch, 2, s],
               t[s], t[3 + s], t[6 + s], t[9 + s], t[12 + s], t[15 + s])
        for r in range(6):  # (G w) G^T: columns
            _g(t[3 * r], t[3 * r + 1], t[3 * r + 2], u[6 * r, ch], u[6 * r + 1, ch],
               u[6 * r + 2, ch], u[6 * r + 3, ch], u[6 * r + 4, ch], u[6 * r + 5, ch])


@njit(inline="always")
def _a(a0, a1, a2, a3, o0, o1, o2, o3, o4, o5):
    # A times four rows of O values, a loop along O for each pair of outputs
    two = o0.dtype.type(2)
    four = o0.dtype.type(4)
    eight = o0.dtype.type(8)
    for oc in range(o0.size):
        o0[oc] = a0[oc]
        o5[oc] = a3[oc]
    for oc in range(o0.size):
        o1[oc] = a0[oc] + a1[oc] + a2[oc] + a3[oc]
        o2[oc] = a0[oc] - a1[oc] + a2[oc] - a3[oc]
    for oc in range(o0.size):
        o3[oc] = a0[oc] + two * a1[oc] + four * a2[oc] + eight * a3[oc]
        o4[oc] = a0[oc] - two * a1[oc] + four * a2[oc] - eight * a3[oc]


@njit(inline="always")
def _grad_tile(d, t, z, p):
    # A d A^T of one 4x4 gradient tile d (16, O) into position p of z (36, tiles, O); t (24, O)
    for s in range(4):  # A times the tile's rows
        _a(d[s], d[4 + s], d[8 + s], d[12 + s],
           t[s], t[4 + s], t[8 + s], t[12 + s], t[16 + s], t[20 + s])
    for r in range(6):  # then times A^T: columns
        _a(t[4 * r], t[4 * r + 1], t[4 * r + 2], t[4 * r + 3], z[6 * r, p],
           z[6 * r + 1, p], z[6 * r + 2, p], z[6 * r + 3, p], z[6 * r + 4, p],
           z[6 * r + 5, p])


@njit(inline="always")
def _gt(q0, q1, q2, q3, q4, q5, o0, o1, o2, c4, c6, c12, c24):
    # G^T times six rows (whole rows at a time: one output a loop, so that LLVM vectorizes)
    for i in range(o0.size):
        o0[i] = c4 * q0[i] - c6 * (q1[i] + q2[i]) + c24 * (q3[i] + q4[i])
    for i in range(o0.size):
        o1[i] = c6 * (q2[i] - q1[i]) + c12 * (q3[i] - q4[i])
    for i in range(o0.size):
        o2[i] = c6 * (q3[i] + q4[i] - q1[i] - q2[i]) + q5[i]


@njit(
    [types.void(wc(t, 4), wc(t, 4)) for t in F],
    cache=True, nogil=True, error_model="numpy",
)
def weight_back_tf(partial, dw):
    # partial: (parts, 36, O, C), the transformed weights' gradient in parts (added up in place
    # into partial[0]); dw: (O, C, 3, 3) = G^T du G along rows of O * C values (as
    # ``_winograd``'s)
    _part_sum(partial)
    n = partial.shape[2] * partial.shape[3]
    c4 = dw.dtype.type(1 / 4)
    c6 = dw.dtype.type(1 / 6)
    c12 = dw.dtype.type(1 / 12)
    c24 = dw.dtype.type(1 / 24)
    q = partial[0].reshape((36, n))
    t = np.empty((18, n), dw.dtype)  # G^T du, [6 * row + column]
    r = np.empty((9, n + 16), dw.dtype)  # G^T du G, [3 * row + column], padded
    for s in range(6):  # G^T du: rows
        _gt(q[s], q[6 + s], q[12 + s], q[18 + s], q[24 + s], q[30 + s],
            t[s], t[6 + s], t[12 + s], c4, c6, c12, c24)
    for i in range(3):  # then times G: columns
        _gt(t[6 * i], t[6 * i + 1], t[6 * i + 2], t[6 * i + 3], t[6 * i + 4], t[6 * i + 5],
            r[3 * i, :n], r[3 * i + 1, :n], r[3 * i + 2, :n], c4, c6, c12, c24)
    _kernel_last(r, dw)


"""
    + DRIVERS.format(P=36, R=6, M=4, ACC=24, D=16)
)


def kernels(dtype):
    """The compiled F(4x4, 3x3) module when numba serves ``dtype`` and it is ready, else None."""
    return _jit.float_module("conv_winograd43", SOURCE, dtype)
