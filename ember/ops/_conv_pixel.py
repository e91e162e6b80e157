"""Convolutions whose output is one pixel per image, as one matrix product over the live taps.

A 3x3 convolution with padding 1 of a 1x1 map (ResNet-18's last stage on 32x32 images) meets
the input with its centre tap only: the other eight read padding. im2col multiplies them all
(nine times the work) and copies the whole weight into its own layout twice a step; on this
2-core CPU a 512x512 layer's forward and backward took 13 ms against PyTorch's 4.6. When the
output is one pixel, the taps that meet the input form a window of the kernel and the pixels
they read a window of the input, so the layer is one product of the two windows (the CPU
overrides in ``ops/conv.py`` take this path first, for the convolution and both gradients;
on the GPU cuDNN's plans serve these shapes).

The taps that only meet padding are skipped, as PyTorch's CPU convolution skips them: an
infinite weight there gives a finite output, where im2col's product gives NaN (0 * inf).

>>> import numpy as np
>>> from ember.ops.conv import Conv2d
>>> op = Conv2d((1, 1), (1, 1), (1, 1), 1)
>>> window(op, (2, 3, 1, 1), (4, 3, 3, 3))
((slice(0, 1, 1), slice(1, 2, None)), (slice(0, 1, 1), slice(1, 2, None)))
>>> x, w = np.ones((2, 3, 1, 1), np.float32), np.ones((4, 3, 3, 3), np.float32)
>>> conv(x, w, window(op, x.shape, w.shape)).ravel().tolist()
[3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0]
"""

from __future__ import annotations

import numpy as np

from ..backend import blas as _blas

FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def window(op, x_shape, w_shape):
    """For ``op``'s geometry (stride, padding, dilation, groups) on an input of ``x_shape`` and a
    weight of ``w_shape``: ``((input rows, kernel rows), (input columns, kernel columns))`` as
    slices, where the output is one pixel per image and some tap meets the input; else None
    (grouped convolutions, larger outputs)."""
    if op.groups != 1 or len(x_shape) != 4 or len(w_shape) != 4:
        return None
    dims = []
    for size, k, s, p, d in zip(x_shape[2:], w_shape[2:], op.stride, op.padding, op.dilation):
        if (size + 2 * p - d * (k - 1) - 1) // s != 0:  # more than one output pixel
            return None
        taps = [i for i in range(k) if 0 <= i * d - p < size]
        if not taps:
            return None
        t0, t1 = taps[0], taps[-1] + 1
        dims.append((slice(t0 * d - p, (t1 - 1) * d - p + 1, d), slice(t0, t1)))
    return tuple(dims)


def applies(win, *arrays) -> bool:
    """Whether the product serves: a window, and host arrays of one float dtype."""
    dtype = arrays[0].dtype
    return (
        win is not None
        and dtype in FLOATS
        and all(type(a) is np.ndarray and a.dtype == dtype for a in arrays)
    )


def _rows(x, win):
    """The input's window, one row per image: (N, C * taps)."""
    (ri, _), (rj, _) = win
    return x[:, :, ri, rj].reshape(x.shape[0], -1)


def _tap_index(w_shape, win):
    """The live taps' positions in a filter's kh * kw values, in the window's order."""
    kh, kw = w_shape[2:]
    (_, ti), (_, tj) = win
    return (np.arange(kh)[ti, None] * kw + np.arange(kw)[None, tj]).ravel()


def _taps(w, win):
    """The weight's live taps, one row per filter: (O, C * taps). NumPy's copy of a 4-D
    window reads runs of a few values (a 512x256 weight's 2x2 of 3x3 taps: 1.4 ms); taking
    columns of the (O * C, kh * kw) matrix took 0.4."""
    o, c, kh, kw = w.shape
    idx = _tap_index(w.shape, win)
    if idx.size == kh * kw:
        return w.reshape(o, -1)
    flat = w.reshape(o * c, kh * kw)
    if idx.size == 1:
        return flat[:, idx[0]].reshape(o, c)
    return np.take(flat, idx, axis=1).reshape(o, -1)


def conv(x, w, win):
    """The convolution: (N, C, H, W) * (O, C, kh, kw) -> (N, O, 1, 1)."""
    out = _blas.matmul(_rows(x, win), _taps(w, win).T)
    return out.reshape(x.shape[0], w.shape[0], 1, 1)


def grad_input(g, w, x_shape, win):
    """The input gradient for the output gradient ``g`` (N, O, 1, 1): (N, C, H, W)."""
    part = _blas.matmul(g.reshape(g.shape[0], -1), _taps(w, win))
    (ri, _), (rj, _) = win
    n, c, h, wd = x_shape
    rows, cols = range(h)[ri], range(wd)[rj]
    if len(rows) == h and len(cols) == wd:
        return part.reshape(x_shape)
    out = np.zeros(x_shape, dtype=part.dtype)
    out[:, :, ri, rj] = part.reshape(n, c, len(rows), len(cols))
    return out


def grad_weight(x, g, w_shape, win):
    """The weight gradient for the input ``x`` and output gradient ``g``: (O, C, kh, kw)."""
    part = _blas.matmul(g.reshape(g.shape[0], -1).T, _rows(x, win))
    o, c, kh, kw = w_shape
    idx = _tap_index(w_shape, win)
    if idx.size == kh * kw:
        return part.reshape(w_shape)
    out = np.zeros((o * c, kh * kw), dtype=part.dtype)
    out[:, idx] = part.reshape(o * c, idx.size)
    return out.reshape(w_shape)
