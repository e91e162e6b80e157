"""Resampling: ``interpolate`` (nearest, nearest-exact, (bi/tri)linear, bicubic, area) and
the pixel / channel shuffles, with PyTorch's index rules.

Interpolation is separable: one spatial dim at a time, each a gather of neighbour slices
(``index_select``) weighted and summed, so gradients of every order come with it.

>>> import ember
>>> import ember.nn.functional as F
>>> F.interpolate(ember.tensor([[[1.0, 2.0]]]), scale_factor=2, mode="nearest")
tensor([[[1., 1., 2., 2.]]])
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..._errors import ShapeError
from ..._node import named
from ..._tensor import Tensor
from ._args import at_least

_MODES = {
    "nearest": (1, 2, 3),
    "nearest-exact": (1, 2, 3),
    "linear": (1,),
    "bilinear": (2,),
    "bicubic": (2,),
    "trilinear": (3,),
    "area": (1, 2, 3),
}


def _output_size(input: Tensor, size, scale_factor, dims: int) -> tuple[list, list]:
    """Output sizes and the scales used to map output to input coordinates (None: in/out)."""
    spatial = list(input.shape[2:])
    if (size is None) == (scale_factor is None):
        raise ShapeError("interpolate: exactly one of size or scale_factor should be defined")
    if size is not None:
        sizes = [size] * dims if isinstance(size, int) else list(size)
        if len(sizes) != dims:
            raise ShapeError(
                f"interpolate: input with spatial size {tuple(spatial)} needs {dims} output "
                f"sizes, got size={size}"
            )
        return [int(s) for s in sizes], [None] * dims
    scales = [scale_factor] * dims if isinstance(scale_factor, (int, float)) else list(scale_factor)
    if len(scales) != dims:
        raise ShapeError(
            f"interpolate: input with spatial size {tuple(spatial)} needs {dims} scale factors, "
            f"got scale_factor={scale_factor}"
        )
    sizes = [int(math.floor(n * float(s))) for n, s in zip(spatial, scales)]
    return sizes, [float(s) for s in scales]


def _source(n_in: int, n_out: int, scale, align_corners: bool, cubic: bool = False):
    """Source coordinates of the output positions (PyTorch's area_pixel_compute_source_index)."""
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        return dst * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
    ratio = 1.0 / scale if scale is not None else n_in / n_out
    src = (dst + 0.5) * ratio - 0.5
    return src if cubic else np.maximum(src, 0.0)


def _take(x: Tensor, dim: int, index: np.ndarray) -> Tensor:
    from ...functions.creation import tensor

    return x.index_select(dim, tensor(index.astype(np.int64), device=x.device))


def _weights(x: Tensor, dim: int, w: np.ndarray) -> Tensor:
    from ...functions.creation import tensor

    shape = [1] * x.ndim
    shape[dim] = w.shape[0]
    return tensor(w.reshape(shape), dtype=x.dtype, device=x.device)


def _nearest(x: Tensor, dim: int, n_out: int, scale, exact: bool) -> Tensor:
    n_in = x.shape[dim]
    ratio = 1.0 / scale if scale is not None else n_in / n_out
    dst = np.arange(n_out, dtype=np.float64)
    src = np.floor((dst + 0.5) * ratio) if exact else np.floor(dst * np.float32(ratio))
    return _take(x, dim, np.minimum(src, n_in - 1))


def _linear(x: Tensor, dim: int, n_out: int, scale, align_corners: bool) -> Tensor:
    n_in = x.shape[dim]
    src = _source(n_in, n_out, scale, align_corners)
    i0 = np.minimum(np.floor(src), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    w = src - i0
    lo, hi = _take(x, dim, i0), _take(x, dim, i1)
    return lo + (hi - lo) * _weights(x, dim, w)


def _cubic_weights(t: np.ndarray, a: float = -0.75) -> list:
    def near(s):  # |s| <= 1
        return ((a + 2) * s - (a + 3)) * s * s + 1

    def far(s):  # 1 < |s| < 2
        return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _cubic(x: Tensor, dim: int, n_out: int, scale, align_corners: bool) -> Tensor:
    n_in = x.shape[dim]
    src = _source(n_in, n_out, scale, align_corners, cubic=True)
    base = np.floor(src)
    t = src - base
    out = None
    for k, w in enumerate(_cubic_weights(t)):
        tap = _take(x, dim, np.clip(base - 1 + k, 0, n_in - 1)) * _weights(x, dim, w)
        out = tap if out is None else out + tap
    return out


def interpolate(
    input: Tensor,
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dims of an (N, C, *spatial) tensor to ``size`` or by ``scale_factor``.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.interpolate(ember.tensor([[[0.0, 1.0]]]), size=3, mode="linear", align_corners=True)
    tensor([[[0.0000, 0.5000, 1.0000]]])
    """
    if mode not in _MODES:
        raise ShapeError(f"interpolate: unknown mode {mode!r}; expected one of {list(_MODES)}")
    dims = input.ndim - 2
    if dims not in _MODES[mode]:
        raise ShapeError(
            f"interpolate: mode {mode!r} expects a {_MODES[mode][0] + 2}-D input, got shape "
            f"{tuple(input.shape)}"
        )
    if align_corners is not None and mode not in ("linear", "bilinear", "bicubic", "trilinear"):
        raise ShapeError(
            "interpolate: align_corners option can only be set with the interpolating modes: "
            "linear | bilinear | bicubic | trilinear"
        )
    if antialias:
        raise ShapeError("interpolate: antialias=True is not supported")
    sizes, scales = _output_size(input, size, scale_factor, dims)
    if recompute_scale_factor:
        scales = [None] * dims
    if any(s <= 0 for s in sizes):
        raise ShapeError(
            f"interpolate: output size {tuple(sizes)} is too small for input of shape "
            f"{tuple(input.shape)}"
        )
    if mode == "area":
        from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d

        if dims == 1:
            return adaptive_avg_pool1d(input, sizes[0])
        if dims == 2:
            return adaptive_avg_pool2d(input, tuple(sizes))
        raise ShapeError("interpolate: mode 'area' supports 3-D and 4-D inputs")
    corners = bool(align_corners)
    out = input
    for k, (n_out, scale) in enumerate(zip(sizes, scales)):
        dim = 2 + k
        if mode in ("nearest", "nearest-exact"):
            out = _nearest(out, dim, n_out, scale, mode == "nearest-exact")
        elif mode == "bicubic":
            out = _cubic(out, dim, n_out, scale, corners)
        else:
            out = _linear(out, dim, n_out, scale, corners)
    kind = "".join(part.capitalize() for part in mode.split("-"))  # nearest-exact: NearestExact
    return named(out, f"Upsample{kind}{dims}DBackward0")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None) -> Tensor:
    """Deprecated name of ``interpolate``.

    >>> import ember
    >>> ember.nn.functional.upsample(ember.ones(1, 1, 2), scale_factor=2).shape
    ember.Size([1, 1, 4])
    """
    warnings.warn(
        "nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None) -> Tensor:
    """``interpolate(..., mode='nearest')`` (deprecated name).

    >>> import ember
    >>> ember.nn.functional.upsample_nearest(ember.ones(1, 1, 2, 2), 3).shape
    ember.Size([1, 1, 3, 3])
    """
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None) -> Tensor:
    """``interpolate(..., mode='bilinear', align_corners=True)`` (deprecated name).

    >>> import ember
    >>> ember.nn.functional.upsample_bilinear(ember.ones(1, 1, 2, 2), scale_factor=2).shape
    ember.Size([1, 1, 4, 4])
    """
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r², H, W) -> (*, C, H r, W r): channels become r x r blocks of pixels.

    >>> import ember
    >>> ember.nn.functional.pixel_shuffle(ember.arange(4.0).reshape(1, 4, 1, 1), 2)
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """
    r = int(upscale_factor)
    at_least(r, "upscale_factor", "pixel_shuffle")
    if input.ndim < 3 or input.shape[-3] % (r * r):
        raise ShapeError(
            f"pixel_shuffle: expected an input of at least 3 dims whose channels are divisible "
            f"by upscale_factor squared ({r * r}), got shape {tuple(input.shape)}"
        )
    *lead, c, h, w = input.shape
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    k = len(lead)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return named(x.reshape(*lead, c // (r * r), h * r, w * r), "PixelShuffleBackward0")


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r², H, W): the inverse of ``pixel_shuffle``.

    >>> import ember
    >>> ember.nn.functional.pixel_unshuffle(ember.ones(1, 1, 4, 4), 2).shape
    ember.Size([1, 4, 2, 2])
    """
    r = int(downscale_factor)
    at_least(r, "downscale_factor", "pixel_unshuffle")
    if input.ndim < 3 or input.shape[-1] % r or input.shape[-2] % r:
        raise ShapeError(
            f"pixel_unshuffle: expected an input of at least 3 dims whose height and width are "
            f"divisible by downscale_factor ({r}), got shape {tuple(input.shape)}"
        )
    *lead, c, h, w = input.shape
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    k = len(lead)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return named(x.reshape(*lead, c * r * r, h // r, w // r), "PixelUnshuffleBackward0")


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the channels of ``groups`` groups (ShuffleNet).

    >>> import ember
    >>> ember.nn.functional.channel_shuffle(ember.arange(4.0).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    if input.ndim < 3 or groups <= 0 or input.shape[1] % groups:
        raise ShapeError(
            f"channel_shuffle: the number of channels must be divisible by groups ({groups}), "
            f"got shape {tuple(input.shape)}"
        )
    n, c, *rest = input.shape
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord: Tensor, lo: float, hi: float) -> Tensor:
    """Reflect coordinates into [lo, hi] (PyTorch's reflect_coordinates)."""
    if hi <= lo:
        return coord * 0
    span = hi - lo
    x = (coord - lo).abs()
    flips = (x / span).floor()
    extra = x - flips * span
    even = (flips % 2) == 0
    from ...functions.elementwise import where

    return where(even, extra + lo, span - extra + lo)


def _source_coord(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    x = _unnormalize(coord, size, align_corners)
    if padding_mode == "reflection":
        x = _reflect(x, 0, size - 1) if align_corners else _reflect(x, -0.5, size - 0.5)
        x = x.clamp(0, size - 1)
    elif padding_mode == "border":
        x = x.clamp(0, size - 1)
    return x


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Sample (N, C, H, W) ``input`` at the (N, Ho, Wo, 2) ``grid`` of (x, y) points in
    [-1, 1] (bilinear or nearest; zeros, border or reflection outside), differentiable in
    both the input and the grid.

    >>> import ember
    >>> img = ember.arange(4.0).reshape(1, 1, 2, 2)
    >>> ember.nn.functional.grid_sample(img, ember.zeros(1, 1, 1, 2), align_corners=True)
    tensor([[[[1.5000]]]])
    """
    from ...functions.elementwise import where

    if mode not in ("bilinear", "nearest"):
        raise ShapeError(f"grid_sample: mode must be 'bilinear' or 'nearest', got {mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ShapeError(
            f"grid_sample: padding_mode must be 'zeros', 'border' or 'reflection', got "
            f"{padding_mode!r}"
        )
    if input.ndim != 4 or grid.ndim != 4 or grid.shape[-1] != 2 or grid.shape[0] != input.shape[0]:
        raise ShapeError(
            f"grid_sample: expected a 4-D input (N, C, H, W) and a grid (N, Ho, Wo, 2), got "
            f"shapes {tuple(input.shape)} and {tuple(grid.shape)}"
        )
    corners = bool(align_corners)
    n, c, h, w = input.shape
    ho, wo = grid.shape[1], grid.shape[2]
    x = _source_coord(grid[..., 0], w, padding_mode, corners)
    y = _source_coord(grid[..., 1], h, padding_mode, corners)
    flat = input.reshape(n, c, h * w)

    def corner(xi: Tensor, yi: Tensor) -> Tensor:
        inside = (xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1)
        index = (yi.clamp(0, h - 1) * w + xi.clamp(0, w - 1)).long().reshape(n, 1, ho * wo)
        values = flat.gather(2, index.expand(n, c, ho * wo)).reshape(n, c, ho, wo)
        return where(inside.unsqueeze(1), values, values * 0)

    if mode == "nearest":
        return corner(x.round(), y.round())
    x0, y0 = x.floor(), y.floor()
    x1, y1 = x0 + 1, y0 + 1
    wx1, wy1 = (x - x0).unsqueeze(1), (y - y0).unsqueeze(1)
    wx0, wy0 = 1 - wx1, 1 - wy1
    return (
        corner(x0, y0) * (wx0 * wy0)
        + corner(x1, y0) * (wx1 * wy0)
        + corner(x0, y1) * (wx0 * wy1)
        + corner(x1, y1) * (wx1 * wy1)
    )


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The (N, H, W, 2) sampling grid of the affine maps ``theta`` (N, 2, 3) for an output of
    ``size`` (N, C, H, W), for ``grid_sample``.

    >>> import ember
    >>> theta = ember.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> ember.nn.functional.affine_grid(theta, (1, 1, 2, 2), align_corners=True)[0, 0]
    tensor([[-1., -1.],
            [ 1., -1.]])
    """
    from ...functions.creation import arange, ones
    from ...functions.shape import stack

    if len(size) != 4 or theta.ndim != 3 or tuple(theta.shape[1:]) != (2, 3):
        raise ShapeError(
            f"affine_grid: expected theta of shape (N, 2, 3) and a 4-D size (N, C, H, W), got "
            f"{tuple(theta.shape)} and {tuple(size)}"
        )
    n, _, h, w = size
    if theta.shape[0] != n:
        raise ShapeError(
            f"affine_grid: theta has batch size {theta.shape[0]} but size asks for {n}"
        )

    def axis(k: int) -> Tensor:
        steps = arange(k, dtype=theta.dtype, device=theta.device)
        if k == 1:
            return steps * 0
        if align_corners:
            return steps * (2.0 / (k - 1)) - 1
        return (steps * 2 + 1) / k - 1

    xs = axis(w).reshape(1, w).expand(h, w)
    ys = axis(h).reshape(h, 1).expand(h, w)
    base = stack([xs, ys, ones(h, w, dtype=theta.dtype, device=theta.device)], -1)
    return (base.reshape(1, h * w, 3) @ theta.transpose(1, 2)).reshape(n, h, w, 2)


__all__ = [
    "grid_sample", "affine_grid",
    "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
    "pixel_unshuffle", "channel_shuffle",
]  # fmt: skip
