"""``Resize``: torchvision's resizing of tensors (interpolation matrices, antialiased
like PIL), NumPy arrays and Pillow images.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Sequence

import numpy as np

from ..._errors import DTypeError, ShapeError
from ..._tensor import Tensor
from ...backend.arrays import freeze, scatter_add
from .images import TransformError, _describe, _is_pil

__all__ = ["Resize"]


#: interpolation name -> Pillow resample filter (torchvision's ``pil_modes_mapping``)
_PIL_FILTERS = {
    "nearest": 0,
    "nearest-exact": 0,
    "bilinear": 2,
    "bicubic": 3,
    "box": 4,
    "hamming": 5,
    "lanczos": 1,
}


_TENSOR_MODES = ("nearest", "nearest-exact", "bilinear", "bicubic")


def _resized_size(hw: tuple[int, int], size, max_size: int | None, shown) -> tuple[int, int]:
    """torchvision's ``_compute_resized_output_size``: the ``(h, w)`` a resize gives."""
    h, w = hw
    short, long = (w, h) if w <= h else (h, w)
    if size is None:
        new_short, new_long = int(max_size * short / long), max_size
    elif len(size) == 1:
        req = size[0]
        new_short, new_long = req, int(req * long / short)
        if max_size is not None and new_long > max_size:
            new_short, new_long = int(max_size * new_short / new_long), max_size
    else:
        return int(size[0]), int(size[1])
    new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    if new_h <= 0 or new_w <= 0:
        raise ShapeError(
            f"Resize: resizing an image of size {(h, w)} to size={shown!r} "
            f"(max_size={max_size}) gives an empty image {(new_h, new_w)}"
        )
    return new_h, new_w


def _aa_filter(mode: str):
    if mode == "bilinear":
        return lambda x: np.maximum(1.0 - np.abs(x), 0.0)

    def cubic(x, a=-0.5):  # Pillow's and torch's antialiased bicubic kernel
        x = np.abs(x)
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = (((x - 5) * x + 8) * x - 4) * a
        return np.where(x < 1, near, np.where(x < 2, far, 0.0))

    return cubic


@functools.lru_cache(maxsize=128)
def _resize_matrix(n_in: int, n_out: int, mode: str, antialias: bool) -> np.ndarray:
    """The ``(n_out, n_in)`` float64 matrix of one axis of ``torch.nn.functional.interpolate``
    (``align_corners=False``, ``size`` given): ``out = M @ x`` along that axis. The same
    coefficients as torch's kernels (``upsample_bilinear2d``, ``upsample_bicubic2d`` and their
    ``_aa`` versions), written densely; cached, read-only."""
    scale = n_in / n_out
    i = np.arange(n_out, dtype=np.float64)
    m = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    if mode in ("nearest", "nearest-exact"):
        shift = 0.5 if mode == "nearest-exact" else 0.0
        src = np.minimum(np.floor((i + shift) * scale).astype(np.int64), n_in - 1)
        m[rows, src] = 1.0
    elif antialias:
        support = (1.0 if mode == "bilinear" else 2.0) * (scale if scale >= 1.0 else 1.0)
        invscale = 1.0 / scale if scale >= 1.0 else 1.0
        center = scale * (i + 0.5)
        xmin = np.maximum(np.trunc(center - support + 0.5), 0)[:, None]
        xmax = np.minimum(np.trunc(center + support + 0.5), n_in)[:, None]
        j = np.arange(n_in, dtype=np.float64)[None, :]
        w = _aa_filter(mode)((j - center[:, None] + 0.5) * invscale)
        w = np.where((j >= xmin) & (j < xmax), w, 0.0)
        total = w.sum(1, keepdims=True)
        m = np.divide(w, total, out=w, where=total != 0)
    elif mode == "bilinear":
        src = np.maximum(scale * (i + 0.5) - 0.5, 0.0)
        i0 = src.astype(np.int64)
        lam = src - i0
        i1 = np.minimum(i0 + 1, n_in - 1)
        scatter_add(m, (rows, i0), 1.0 - lam)
        scatter_add(m, (rows, i1), lam)
    else:  # bicubic, torch's a = -0.75, border pixels repeated
        a = -0.75
        src = scale * (i + 0.5) - 0.5
        i0 = np.floor(src).astype(np.int64)
        t = src - i0

        def c1(x):
            return ((a + 2) * x - (a + 3)) * x * x + 1

        def c2(x):
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

        for k, wk in enumerate((c2(t + 1), c1(t), c1(1 - t), c2(2 - t))):
            scatter_add(m, (rows, np.clip(i0 - 1 + k, 0, n_in - 1)), wk)
    return freeze(m)


def _resize_tensor(img: Tensor, oh: int, ow: int, mode: str, antialias: bool) -> Tensor:
    """``(..., H, W)`` tensor -> ``(..., oh, ow)``: two matrix products with ``_resize_matrix``,
    in ember ops when ``img`` requires grad (differentiable), else on its raw array."""
    arr = img._data
    h, w = arr.shape[-2], arr.shape[-1]
    dtype = img.dtype
    if arr.dtype.kind not in "uif":
        raise DTypeError(f"Resize: cannot resize a tensor of dtype {dtype}")
    work = arr.dtype if arr.dtype in (np.float32, np.float64) else np.dtype(np.float32)
    mh = _resize_matrix(h, oh, mode, antialias).astype(work)
    mw = _resize_matrix(w, ow, mode, antialias).T.astype(work)
    rows_first = oh * w * (h + ow) <= ow * h * (w + oh)  # the cheaper order of the products
    if img._requires_grad:
        from ...dtypes import float32
        from ...functions.creation import as_tensor

        x = img if arr.dtype == work else img.to(float32)
        th = as_tensor(mh, device=img.device)
        tw = as_tensor(mw, device=img.device)
        out = (th @ x) @ tw if rows_first else th @ (x @ tw)
        return out if out.dtype == dtype else out.to(dtype)
    if type(arr) is np.ndarray:
        xp = np
    else:
        from ...backend import xp_of

        xp = xp_of(arr)
        mh, mw = xp.asarray(mh), xp.asarray(mw)
    x = arr.astype(work, copy=False)
    out = (mh @ x) @ mw if rows_first else mh @ (x @ mw)
    if arr.dtype.kind in "iu":  # torchvision rounds (and, for bicubic, clamps) back
        info = np.iinfo(arr.dtype)
        out = xp.clip(xp.round(out), info.min, info.max)
    return Tensor._make(xp.ascontiguousarray(out.astype(arr.dtype, copy=False)))


def _resize_array(arr: np.ndarray, oh: int, ow: int, mode: str) -> np.ndarray:
    """An ``HxW[xC]`` array resized with Pillow, one channel at a time: uint8 as mode ``L``,
    anything else as mode ``F`` (float32) and back to its dtype (integers rounded and clipped)."""
    from PIL import Image

    if arr.dtype.kind not in "uif" or arr.dtype.itemsize > 8:
        raise DTypeError(f"Resize: cannot resize an array of dtype {arr.dtype}")
    resample = _PIL_FILTERS[mode]
    planes = arr[:, :, None] if arr.ndim == 2 else arr
    out = np.empty((oh, ow, planes.shape[2]), dtype=arr.dtype)
    work = np.uint8 if arr.dtype == np.uint8 else np.float32
    for c in range(planes.shape[2]):
        plane = np.ascontiguousarray(planes[:, :, c], dtype=work)
        got = np.asarray(Image.fromarray(plane).resize((ow, oh), resample))
        if arr.dtype.kind in "iu" and arr.dtype != np.uint8:
            info = np.iinfo(arr.dtype)
            got = np.clip(np.round(got), info.min, info.max)
        out[:, :, c] = got
    return out[:, :, 0] if arr.ndim == 2 else out


class Resize:
    """Resize an image to ``size`` (torchvision's ``Resize``).

    ``size`` is an int (or a 1-sequence) to make the *smaller* edge that long, keeping the aspect
    ratio (the other edge is ``int(size * long / short)``; ``max_size`` then caps the longer
    edge), or ``(h, w)``. An image that already has the output size is returned as is.
    ``interpolation`` is ``"nearest"``, ``"nearest-exact"``, ``"bilinear"``, ``"bicubic"``, or,
    for Pillow images and arrays only, ``"box"``, ``"hamming"``, ``"lanczos"``.

    - Pillow images: ``img.resize`` (what torchvision does); Pillow always antialiases.
    - ``HxW[xC]`` NumPy arrays: Pillow too, channel by channel, uint8 as mode ``L`` (bit for bit
      what Pillow gives an ``L`` or ``RGB`` image), other dtypes as mode ``F`` (float32) and back
      to their dtype (integers rounded and clipped; float64 loses its extra precision).
      ``antialias`` is ignored, as for Pillow images. ``nearest`` is Pillow's nearest, which
      picks the pixel under the output pixel's centre (``nearest-exact``).
    - ``(..., H, W)`` ember tensors: ``torch.nn.functional.interpolate(align_corners=False,
      antialias=antialias)``, as torchvision does for tensors, computed as two products with
      that interpolation's (dense) weight matrices, so the result is **differentiable** (tensors
      that require grad go through ember ops, on any device) and equal to torch's within float
      rounding. float16 and integer tensors are resized in float32; integers are then rounded
      (and clamped), as torchvision does (torchvision's CPU uint8 fast path may differ by 1).
      A NaN or infinity spreads along its whole row and column of the output.

    >>> import numpy as np, ember
    >>> from ember.data.transforms import Resize
    >>> Resize(2)(np.zeros((4, 6, 3), np.uint8)).shape  # smaller edge to 2: 4x6 -> 2x3
    (2, 3, 3)
    >>> x = ember.arange(16.0).reshape(1, 4, 4)
    >>> Resize((2, 2), antialias=False)(x)  # plain bilinear halving: means of 2x2 blocks
    tensor([[[ 2.5000,  4.5000],
             [10.5000, 12.5000]]])
    >>> Resize((2, 2))(x.requires_grad_()).sum().backward()  # antialiased and differentiable
    >>> x.grad.sum()
    tensor(4.)
    >>> Resize(32)
    Resize(size=32, interpolation=bilinear, max_size=None, antialias=True)
    """

    def __init__(
        self,
        size: int | Sequence[int] | None,
        interpolation: str = "bilinear",
        max_size: int | None = None,
        antialias: bool = True,
    ) -> None:
        if size is None:
            if max_size is None:
                raise TransformError("Resize: size can only be None if max_size is also set")
            parsed = None
        elif isinstance(size, numbers.Integral):
            parsed = (int(size),)
        elif isinstance(size, Sequence) and len(size) in (1, 2):
            if not all(isinstance(v, numbers.Integral) for v in size):
                raise TransformError(f"Resize: size must hold ints, got {size!r}")
            parsed = tuple(int(v) for v in size)
        else:
            raise TransformError(
                f"Resize: size must be an int or a sequence of 1 or 2 ints, got {size!r}"
            )
        if parsed is not None and min(parsed) <= 0:
            raise TransformError(f"Resize: size must be positive, got {size!r}")
        if max_size is not None:
            if parsed is not None and len(parsed) == 2:
                raise TransformError(
                    "Resize: max_size should only be passed if size specifies the length of the "
                    f"smaller edge (an int or a sequence of length 1), got size={size!r}"
                )
            if parsed is not None and max_size <= parsed[0]:
                raise TransformError(
                    f"Resize: max_size = {max_size} must be strictly greater than the requested "
                    f"size for the smaller edge size = {size!r}"
                )
        mode = str(getattr(interpolation, "value", interpolation)).lower()
        if mode not in _PIL_FILTERS:
            raise TransformError(
                f"Resize: interpolation must be one of {', '.join(_PIL_FILTERS)}; "
                f"got {interpolation!r}"
            )
        self.size = size
        self._size = parsed
        self.interpolation = mode
        self.max_size = max_size
        self.antialias = bool(antialias)

    def __call__(self, img):
        if isinstance(img, Tensor):
            if img.dim() < 2:
                raise ShapeError(
                    f"Resize: expected a tensor image of size (..., H, W), got {_describe(img)}"
                )
            h, w = img.shape[-2], img.shape[-1]
        elif isinstance(img, np.ndarray):
            if img.ndim not in (2, 3):
                raise ShapeError(f"Resize: expected an HxW or HxWxC image, got {_describe(img)}")
            h, w = img.shape[0], img.shape[1]
        elif _is_pil(img):
            w, h = img.size
        else:
            raise DTypeError(
                f"Resize: expected a tensor, ndarray or Pillow image, got {_describe(img)}"
            )
        if h == 0 or w == 0:
            raise ShapeError(f"Resize: cannot resize an empty image of size {(h, w)}")
        oh, ow = _resized_size((h, w), self._size, self.max_size, self.size)
        if (oh, ow) == (h, w):
            return img
        if isinstance(img, Tensor):
            if self.interpolation not in _TENSOR_MODES:
                raise TransformError(
                    f"Resize: interpolation {self.interpolation!r} works on Pillow images and "
                    f"arrays only; tensors support {', '.join(_TENSOR_MODES)}"
                )
            return _resize_tensor(img, oh, ow, self.interpolation, self.antialias)
        if isinstance(img, np.ndarray):
            return _resize_array(img, oh, ow, self.interpolation)
        return img.resize((ow, oh), _PIL_FILTERS[self.interpolation])

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(size={self.size}, interpolation={self.interpolation}, "
            f"max_size={self.max_size}, antialias={self.antialias})"
        )
