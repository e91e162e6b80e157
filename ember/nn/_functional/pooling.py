"""Pooling: max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d, adaptive_max_pool1d/2d.

>>> import ember
>>> import ember.nn.functional as F
>>> F.max_pool2d(ember.arange(16.0).reshape(1, 1, 4, 4), 2)
tensor([[[[ 5.,  7.],
          [13., 15.]]]])
"""

from __future__ import annotations

import math

import numpy as np

from ..._errors import ShapeError
from ..._node import named
from ..._tensor import Tensor
from ...ops.base import apply
from ...ops.pool import MaxPool2d, MaxPoolIndices, pool_out_size
from ._args import at_least, pair, single


def _batched(input: Tensor, ndim: int, op: str):
    if input.ndim == ndim - 1:
        return input.unsqueeze(0), True
    if input.ndim != ndim:
        raise ShapeError(
            f"{op}: expected a {ndim - 1}-D or {ndim}-D input, got shape {tuple(input.shape)}"
        )
    return input, False


def _window(kernel_size, stride, norm, op: str):
    """Kernel and stride normalized by ``norm`` (``pair`` or ``single``) and checked to be
    positive; the stride defaults to the kernel.

    >>> _window(2, None, pair, "max_pool2d")
    ((2, 2), (2, 2))
    >>> _window(2, 0, pair, "max_pool2d")
    Traceback (most recent call last):
    ember._errors.ShapeError: max_pool2d: stride must be greater than zero, got stride=(0, 0)
    """
    kernel = norm(kernel_size, "kernel_size", op)
    at_least(kernel, "kernel_size", op)
    if stride is None or stride == []:
        return kernel, kernel
    stride = norm(stride, "stride", op)
    at_least(stride, "stride", op)
    return kernel, stride


def _as_2d(input: Tensor, kernel_size, stride, padding, op: str):
    """A 1-D pooling's (N, C, L) or (C, L) input as a height-1 image (N, C, 1, L), whether it
    was unbatched, and its kernel, stride and padding as pairs."""
    x, unbatched = _batched(input, 3, op)
    k, s = _window(kernel_size, stride, single, op)
    padding = single(padding, "padding", op)
    at_least(padding, "padding", op, low=0)
    return x.unsqueeze(2), unbatched, (1, k), (1, s), (0, padding)


def _from_2d(result, unbatched: bool):
    """A 2-D pooling's result (a tensor or a tuple of them) back in the 1-D input's layout."""
    if isinstance(result, tuple):
        return tuple(_from_2d(r, unbatched) for r in result)
    out = result.squeeze(2)
    return named(out.squeeze(0) if unbatched else out, "SqueezeBackward1")


def max_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """Max over (kh, kw) windows of an (N, C, H, W) or (C, H, W) input.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.max_pool2d(ember.zeros(1, 1, 5, 5), 2, ceil_mode=True).shape
    ember.Size([1, 1, 3, 3])
    """
    op = "max_pool2d"
    x, unbatched = _batched(input, 4, op)
    kernel, stride = _window(kernel_size, stride, pair, op)
    padding, dilation = pair(padding, "padding", op), pair(dilation, "dilation", op)
    at_least(padding, "padding", op, low=0)
    at_least(dilation, "dilation", op)
    pool = MaxPool2d(kernel, stride, padding, dilation, bool(ceil_mode))
    pool.check(x.shape)
    out = apply(pool, x)
    if unbatched:
        out = named(out.squeeze(0), "MaxPool2DWithIndicesBackward0")
    if return_indices:
        idx = apply(
            MaxPoolIndices(
                *(pool.kernel, pool.stride, pool.padding, pool.dilation, pool.ceil_mode)
            ),
            x,
        )
        return out, idx.squeeze(0) if unbatched else idx
    return out


def max_pool1d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """Max over windows of an (N, C, L) or (C, L) input.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.max_pool1d(ember.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
    tensor([[[3., 2.]]])
    """
    op = "max_pool1d"
    x, unbatched, kernel, stride, padding = _as_2d(input, kernel_size, stride, padding, op)
    dilation = single(dilation, "dilation", op)
    at_least(dilation, "dilation", op)
    dilation = (1, dilation)
    res = max_pool2d(x, kernel, stride, padding, dilation, ceil_mode, return_indices)
    return _from_2d(res, unbatched)


def avg_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Mean over (kh, kw) windows (a depthwise convolution with a constant kernel).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.avg_pool2d(ember.arange(16.0).reshape(1, 1, 4, 4), 2)
    tensor([[[[ 2.5000,  4.5000],
              [10.5000, 12.5000]]]])
    """
    from .conv import conv2d
    from .padding import pad

    op = "avg_pool2d"
    x, unbatched = _batched(input, 4, op)
    kernel, stride = _window(kernel_size, stride, pair, op)
    padding = pair(padding, "padding", op)
    at_least(padding, "padding", op, low=0)
    if padding[0] * 2 > kernel[0] or padding[1] * 2 > kernel[1]:
        raise ShapeError(
            f"{op}: pad should be at most half of effective kernel size, got {padding}"
        )
    n, c, h, w = x.shape
    ho, wo = (
        pool_out_size(s, k, st, p, 1, ceil_mode)
        for s, k, st, p in zip((h, w), kernel, stride, padding)
    )
    if ho <= 0 or wo <= 0:
        raise ShapeError(f"{op}: input {tuple(x.shape)} is too small for kernel {kernel}")
    if stride == kernel and padding == (0, 0) and ho * kernel[0] <= h and wo * kernel[1] <= w:
        # windows tile the input: a reshape and a mean (or sum), no gather
        if (ho * kernel[0], wo * kernel[1]) != (h, w):
            x = x[:, :, : ho * kernel[0], : wo * kernel[1]]
        tiles = x.reshape(n, c, ho, kernel[0], wo, kernel[1])
        out = tiles.sum((3, 5)) / divisor_override if divisor_override else tiles.mean((3, 5))
        return named(out.squeeze(0) if unbatched else out, "AvgPool2DBackward0")
    # pad explicitly (zeros), including ceil mode's extra right/bottom cells
    extra = [
        max(0, (o - 1) * st + k - (s + 2 * p))
        for o, st, k, s, p in zip((ho, wo), stride, kernel, (h, w), padding)
    ]
    xp_ = pad(x, (padding[1], padding[1] + extra[1], padding[0], padding[0] + extra[0]))
    from ...functions.creation import ones as _ones

    ones = _ones(1, 1, *kernel, dtype=x.dtype, device=x.device)
    sums = conv2d(xp_.reshape(n * c, 1, *xp_.shape[2:]), ones, stride=stride).reshape(n, c, ho, wo)
    if divisor_override:
        out = sums / divisor_override
    else:
        rows = _counts(h, kernel[0], stride[0], padding[0], ho, count_include_pad)
        cols = _counts(w, kernel[1], stride[1], padding[1], wo, count_include_pad)
        from ...functions.creation import tensor

        div = tensor(np.outer(rows, cols), dtype=x.dtype, device=x.device)
        out = sums / div
    return named(out.squeeze(0) if unbatched else out, "AvgPool2DBackward0")


def _counts(size: int, k: int, s: int, p: int, n_out: int, include_pad: bool) -> np.ndarray:
    """How many cells each window averages over, along one dimension (PyTorch's rule)."""
    starts = np.arange(n_out) * s - p
    ends = np.minimum(starts + k, size + p)
    if include_pad:
        return (ends - starts).astype(np.float64)
    return (np.minimum(ends, size) - np.maximum(starts, 0)).astype(np.float64)


def avg_pool1d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """Mean over windows of an (N, C, L) input.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.avg_pool1d(ember.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
    tensor([[[2., 1.]]])
    """
    op = "avg_pool1d"
    x, unbatched, kernel, stride, padding = _as_2d(input, kernel_size, stride, padding, op)
    out = avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad)
    return _from_2d(out, unbatched)


def _adaptive_matrix(size: int, out: int, dtype, device) -> Tensor:
    """(out, size) averaging matrix over PyTorch's adaptive windows
    [floor(i * n / o), ceil((i + 1) * n / o))."""
    from ...functions.creation import tensor

    m = np.zeros((out, size))
    for i in range(out):
        start = (i * size) // out
        end = -((-(i + 1) * size) // out)
        m[i, start:end] = 1.0 / (end - start)
    return tensor(m, dtype=dtype, device=device)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average-pool to a fixed (oh, ow) whatever the input size (None keeps a dimension).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.adaptive_avg_pool2d(ember.ones(2, 3, 7, 5), 1).shape
    ember.Size([2, 3, 1, 1])
    """
    op = "adaptive_avg_pool2d"
    x, unbatched = _batched(input, 4, op)
    h, w = x.shape[2:]
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    oh, ow = (s if o is None else int(o) for o, s in zip(output_size, (h, w)))
    if oh <= 0 or ow <= 0:
        raise ShapeError(f"{op}: output size must be positive, got {(oh, ow)}")
    if (oh, ow) == (1, 1):
        out = x.mean(dim=(2, 3), keepdim=True)
    elif h % oh == 0 and w % ow == 0:
        out = x.reshape(x.shape[0], x.shape[1], oh, h // oh, ow, w // ow).mean(dim=(3, 5))
    else:
        ph = _adaptive_matrix(h, oh, x.dtype, x.device)
        pw = _adaptive_matrix(w, ow, x.dtype, x.device)
        out = ph @ x @ pw.t()
    out = out.squeeze(0) if unbatched else out
    return named(out, "MeanBackward1" if (oh, ow) == (1, 1) else "AdaptiveAvgPool2DBackward0")


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Average-pool an (N, C, L) input to a fixed length.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.adaptive_avg_pool1d(ember.ones(1, 2, 9), 4).shape
    ember.Size([1, 2, 4])
    """
    op = "adaptive_avg_pool1d"
    x, unbatched = _batched(input, 3, op)
    out = adaptive_avg_pool2d(x.unsqueeze(2), (1, single(output_size, "output_size", op)))
    return _from_2d(out, unbatched)


def lp_pool2d(
    input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False
) -> Tensor:
    """Power-average pooling: (sum over window of x^p)^(1/p).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.lp_pool2d(ember.ones(1, 1, 2, 2), 2, 2)
    tensor([[[[2.]]]])
    """
    kernel, stride = _window(kernel_size, stride, pair, "lp_pool2d")
    out = avg_pool2d(input.pow(norm_type), kernel, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kernel[0] * kernel[1]).pow(1.0 / norm_type)


def _adaptive_bounds(n_in: int, n_out: int) -> list:
    return [(math.floor(i * n_in / n_out), math.ceil((i + 1) * n_in / n_out)) for i in range(n_out)]


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Max over adaptive windows giving ``output_size`` (int or (h, w); None keeps a size).

    >>> import ember
    >>> ember.nn.functional.adaptive_max_pool2d(ember.arange(16.0).reshape(1, 1, 4, 4), 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    from ...functions.shape import stack

    if input.ndim not in (3, 4):
        raise ShapeError(
            f"adaptive_max_pool2d: expected 3D or 4D input, got shape {tuple(input.shape)}"
        )
    h, w = input.shape[-2], input.shape[-1]
    oh, ow = (output_size, output_size) if isinstance(output_size, int) else output_size
    oh, ow = oh or h, ow or w
    values, indices = [], []
    for r0, r1 in _adaptive_bounds(h, oh):
        row_v, row_i = [], []
        for c0, c1 in _adaptive_bounds(w, ow):
            window = input[..., r0:r1, c0:c1].flatten(-2)
            best = window.argmax(-1, keepdim=True)
            row_v.append(window.gather(-1, best).squeeze(-1))
            if return_indices:
                width = c1 - c0
                flat = (best // width + r0) * w + best % width + c0
                row_i.append(flat.squeeze(-1))
        values.append(stack(row_v, -1))
        if return_indices:
            indices.append(stack(row_i, -1))
    out = named(stack(values, -2), "AdaptiveMaxPool2DBackward0")
    if not return_indices:
        return out
    return out, stack(indices, -2)


def adaptive_max_pool1d(input: Tensor, output_size: int, return_indices: bool = False):
    """Max over adaptive windows along the last dim giving ``output_size`` values.

    >>> import ember
    >>> ember.nn.functional.adaptive_max_pool1d(ember.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
    tensor([[[3., 2.]]])
    """
    if input.ndim not in (2, 3):
        raise ShapeError(
            f"adaptive_max_pool1d: expected 2D or 3D input, got shape {tuple(input.shape)}"
        )
    out = adaptive_max_pool2d(input.unsqueeze(-2), (1, output_size), return_indices)
    if return_indices:
        return named(out[0].squeeze(-2), "SqueezeBackward1"), out[1].squeeze(-2)
    return named(out.squeeze(-2), "SqueezeBackward1")
