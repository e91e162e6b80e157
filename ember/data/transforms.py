"""Image transforms with torchvision's semantics: ``Compose``, ``ToTensor``, ``Normalize``,
``Resize``, ``CenterCrop``, ``RandomCrop``, ``RandomHorizontalFlip`` and ``Lambda``.

Images are NumPy arrays (``HxW`` or ``HxWxC``, as ember's datasets return them), Pillow images,
or ``CxHxW`` ember tensors (after ``ToTensor``). Random transforms draw from ember's default
generator (``ember.manual_seed`` makes them reproducible); inside a DataLoader *thread* worker
they draw from that worker's own generator (``get_worker_info().rng.ember``) so that workers
neither share nor reseed the main generator. Tensors that require grad or live on a GPU go
through ember ops; CPU tensors and arrays take a NumPy fast path (a few microseconds a sample).

>>> import numpy as np, ember
>>> from ember.data import transforms as T
>>> t = T.Compose([T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize((0.5,), (0.5,))])
>>> _ = ember.manual_seed(0)
>>> x = t(np.full((4, 4), 255, dtype=np.uint8))
>>> x.shape, x.dtype, float(x.max())
(ember.Size([1, 4, 4]), ember.float32, 1.0)
"""

from __future__ import annotations

import functools
import numbers
import sys
from collections.abc import Callable, Sequence

import numpy as np

from .._errors import DTypeError, EmberError, ShapeError
from .._tensor import Tensor
from ..backend.arrays import freeze, scatter_add
from ..functions.padding import pad as _pad_tensor
from ..random import rng as _default_rng
from ._worker import get_worker_info

__all__ = [
    "CenterCrop",
    "Compose",
    "Lambda",
    "Normalize",
    "RandomCrop",
    "RandomHorizontalFlip",
    "Resize",
    "ToTensor",
    "TransformError",
]

_PAD_MODES = ("constant", "edge", "reflect", "symmetric")


class TransformError(EmberError, ValueError):
    """A transform given arguments or an image it cannot work with."""


def _rng() -> np.random.Generator:
    """The generator random transforms draw from: a thread worker's own, else ember's default."""
    info = get_worker_info()
    if info is not None and info.rng is not None:
        return info.rng.ember.rng
    return _default_rng()


def _is_pil(img) -> bool:
    mod = sys.modules.get("PIL.Image")  # never import Pillow just to find out
    return mod is not None and isinstance(img, mod.Image)


def _describe(img) -> str:
    if isinstance(img, (Tensor, np.ndarray)):
        return f"{type(img).__name__} of shape {tuple(img.shape)}"
    return type(img).__name__


# -- ToTensor ----------------------------------------------------------------------------------


class ToTensor:
    """A Pillow image or ``HxW[xC]`` array -> a ``CxHxW`` tensor (torchvision's ``ToTensor``).

    uint8 data becomes float32 divided by 255; other arrays keep their dtype and values (a
    float32 array stays float32, as in torchvision). Pillow images of mode ``I``, ``I;16`` and
    ``F`` give int32, int16 and float32 tensors, mode ``1`` gives 0 or 1 as float32.

    >>> import numpy as np
    >>> from ember.data.transforms import ToTensor
    >>> x = ToTensor()(np.array([[0, 51], [102, 255]], dtype=np.uint8))
    >>> x
    tensor([[[0.0000, 0.2000],
             [0.4000, 1.0000]]])
    >>> ToTensor()(np.zeros((2, 3, 3), dtype=np.uint8)).shape
    ember.Size([3, 2, 3])
    """

    def __call__(self, pic) -> Tensor:
        if isinstance(pic, np.ndarray):
            arr = pic
        elif _is_pil(pic):
            arr = _pil_to_array(pic)
        else:
            raise DTypeError(
                f"ToTensor: pic should be a Pillow image or ndarray, got {_describe(pic)}"
            )
        if arr.ndim == 2:
            arr = arr[None]  # HxW -> 1xHxW: already CxHxW
        elif arr.ndim == 3:
            arr = arr.transpose(2, 0, 1)
        else:
            raise ShapeError(
                f"ToTensor: expected an HxW or HxWxC image, got an array of shape {arr.shape}"
            )
        if arr.dtype == np.uint8:
            out = arr.astype(np.float32, order="C")  # a fresh contiguous copy
            out /= np.float32(255)  # float32 division, bit for bit what torch's div(255) gives
        else:
            out = np.array(arr, order="C")  # a copy: never share memory with the dataset's array
            if out.dtype.byteorder == ">":
                out = out.astype(out.dtype.newbyteorder("="))
        return Tensor._make(out)

    def __repr__(self) -> str:
        return "ToTensor()"


def _pil_to_array(pic) -> np.ndarray:
    mode = pic.mode
    if mode == "1":
        return np.asarray(pic, dtype=np.uint8) * np.uint8(255)
    arr = np.asarray(pic)
    if mode == "I;16" and arr.dtype != np.int16:
        arr = arr.astype(np.int16)  # torchvision reads I;16 as int16
    return arr


# -- Normalize ---------------------------------------------------------------------------------


class Normalize:
    """``(x - mean[c]) / std[c]`` for each channel ``c`` of a ``(..., C, H, W)`` float tensor.

    ``mean`` and ``std`` are sequences with one value per channel (or one value for all),
    converted to the tensor's dtype as torchvision does. ``inplace=True`` writes into ``x``.

    >>> import ember
    >>> from ember.data.transforms import Normalize
    >>> Normalize((0.5, 0.0), (0.5, 2.0))(ember.ones(2, 1, 2))
    tensor([[[1.0000, 1.0000]],
    <BLANKLINE>
            [[0.5000, 0.5000]]])
    >>> Normalize(mean=(0.1307,), std=(0.3081,))
    Normalize(mean=(0.1307,), std=(0.3081,))
    """

    def __init__(self, mean: Sequence[float], std: Sequence[float], inplace: bool = False):
        self.mean = mean
        self.std = std
        self.inplace = inplace
        self._cache: dict = {}  # np dtype -> (mean, std) arrays of shape (C, 1, 1)

    def _params(self, tensor: Tensor):
        """Checks ``tensor`` and gives ``(mean, std)`` as arrays of its dtype, shaped to
        broadcast over its channels; cached per (dtype, ndim, channels), so only the first
        image of a kind pays for the checks."""
        arr = tensor._data
        key = (arr.dtype, arr.ndim, arr.shape[-3] if arr.ndim >= 3 else 0)
        got = self._cache.get(key)
        if got is not None:
            return got
        if not tensor.dtype.is_floating_point:
            raise DTypeError(
                f"Normalize: input tensor should be a float tensor, got {tensor.dtype}"
            )
        shape = tuple(arr.shape)
        if len(shape) < 3:
            raise ShapeError(
                "Normalize: expected a tensor image of size (..., C, H, W), "
                f"got a tensor of shape {shape}"
            )
        np_dtype = tensor.dtype.np
        try:
            mean = np.asarray(self.mean, dtype=np_dtype)
            std = np.asarray(self.std, dtype=np_dtype)
        except (TypeError, ValueError):
            raise TransformError(
                "Normalize: mean and std must be numbers or sequences of numbers, "
                f"got mean={self.mean!r}, std={self.std!r}"
            ) from None
        if mean.ndim > 1 or std.ndim > 1:
            raise TransformError(
                f"Normalize: mean and std must be 1-d, got shapes {mean.shape} and {std.shape}"
            )
        if (std == 0).any():
            raise TransformError(
                f"Normalize: std evaluated to zero after conversion to {np_dtype}, "
                "leading to division by zero"
            )
        for p in (mean, std):
            if p.ndim == 1 and len(p) not in (1, shape[-3]):
                raise ShapeError(
                    f"Normalize: {len(p)} values of mean/std for an image with "
                    f"{shape[-3]} channels (shape {shape})"
                )
        mean = mean.reshape(-1, 1, 1) if mean.ndim == 1 else mean
        std = std.reshape(-1, 1, 1) if std.ndim == 1 else std
        got = self._cache[key] = (mean, std)
        return got

    def __call__(self, tensor: Tensor) -> Tensor:
        if not isinstance(tensor, Tensor):
            raise DTypeError(f"Normalize: expected a tensor, got {_describe(tensor)}")
        mean, std = self._params(tensor)
        arr = tensor._data
        if tensor._requires_grad or type(arr) is not np.ndarray:
            from ..functions.creation import as_tensor

            m = as_tensor(mean, device=tensor.device)
            s = as_tensor(std, device=tensor.device)
            if self.inplace:
                return tensor.sub_(m).div_(s)
            return (tensor - m) / s
        if self.inplace:
            np.subtract(arr, mean, out=arr)
            np.divide(arr, std, out=arr)
            tensor._version[0] += 1
            return tensor
        out = arr - mean
        out /= std
        return Tensor._make(out)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(mean={self.mean}, std={self.std})"


# -- geometry shared by RandomCrop and RandomHorizontalFlip ----------------------------------


def _as_array(img, name: str):
    """``(array, layout, restore)``: layout ``"chw"`` for tensors (and their arrays), ``"hwc"``
    for NumPy arrays and Pillow images; ``restore(array)`` makes the caller's type again."""
    if isinstance(img, Tensor):
        if img.dim() < 2:
            raise ShapeError(
                f"{name}: expected a tensor image of size (..., H, W), got {_describe(img)}"
            )
        return img._data, "chw", Tensor._make
    if isinstance(img, np.ndarray):
        if img.ndim not in (2, 3):
            raise ShapeError(f"{name}: expected an HxW or HxWxC image, got {_describe(img)}")
        return img, "hwc", None
    if _is_pil(img):
        from PIL import Image

        palette = img.getpalette() if img.mode == "P" else None

        def restore(a):
            out = Image.fromarray(a)
            if palette is not None:
                out.putpalette(palette)
            return out

        return np.asarray(img), "hwc", restore
    raise DTypeError(f"{name}: expected a tensor, ndarray or Pillow image, got {_describe(img)}")


def _hw(arr, layout: str) -> tuple[int, int]:
    return (arr.shape[-2], arr.shape[-1]) if layout == "chw" else (arr.shape[0], arr.shape[1])


def _setup_size(size, name: str) -> tuple[int, int]:
    if isinstance(size, numbers.Integral):
        size = (int(size), int(size))
    elif isinstance(size, Sequence) and len(size) in (1, 2):
        size = (int(size[0]), int(size[-1]))
    else:
        raise TransformError(
            f"{name}: size must be an int or a sequence of 1 or 2 ints, got {size!r}"
        )
    if size[0] <= 0 or size[1] <= 0:
        raise TransformError(f"{name}: size must be positive, got {size}")
    return size


def _parse_padding(padding, name: str) -> tuple[int, int, int, int]:
    """torchvision's padding forms -> (left, top, right, bottom)."""
    if isinstance(padding, numbers.Integral):
        p = (int(padding),) * 4
    elif isinstance(padding, Sequence) and len(padding) in (1, 2, 4):
        vals = tuple(int(v) for v in padding)
        if len(vals) == 1:
            p = vals * 4
        elif len(vals) == 2:
            p = (vals[0], vals[1], vals[0], vals[1])
        else:
            p = vals
    else:
        raise TransformError(
            f"{name}: padding must be an int or a sequence of 1, 2 or 4 ints, got {padding!r}"
        )
    if min(p) < 0:
        raise TransformError(f"{name}: padding must not be negative, got {padding!r}")
    return p


def _pad(arr, layout: str, pad: tuple[int, int, int, int], fill, mode: str):
    left, top, right, bottom = pad
    if layout == "chw":
        widths = [(0, 0)] * (arr.ndim - 2) + [(top, bottom), (left, right)]
    else:
        widths = [(top, bottom), (left, right)] + [(0, 0)] * (arr.ndim - 2)
    if type(arr) is np.ndarray:
        xp = np
    else:
        from ..backend import xp_of

        xp = xp_of(arr)
    if mode != "constant":
        return xp.pad(arr, widths, mode=mode)
    if isinstance(fill, numbers.Number):
        return xp.pad(arr, widths, mode="constant", constant_values=fill)
    # a per-channel fill (as for Pillow images): pad with zeros, then paint the border
    out = xp.pad(arr, widths, mode="constant")
    nch = arr.shape[-3] if layout == "chw" else (arr.shape[2] if arr.ndim == 3 else 1)
    fill = tuple(fill)
    if len(fill) != nch:
        raise TransformError(f"RandomCrop: fill {fill} has {len(fill)} values for {nch} channels")
    mask = xp.ones(_hw(out, layout), dtype=bool)
    mask[top : top + _hw(arr, layout)[0], left : left + _hw(arr, layout)[1]] = False
    if layout == "chw":
        for c, v in enumerate(fill):
            out[..., c, :, :][..., mask] = v
    elif arr.ndim == 3:
        out[mask] = xp.asarray(fill, dtype=out.dtype)
    else:
        out[mask] = fill[0]
    return out


class RandomCrop:
    """Crop a random ``size`` window (torchvision's ``RandomCrop``, same draws and padding).

    ``padding`` (an int, or 1, 2 or 4 ints: all sides, left/right and top/bottom, or left, top,
    right, bottom) is added first with ``padding_mode`` ``"constant"`` (value ``fill``),
    ``"edge"``, ``"reflect"`` or ``"symmetric"``; ``pad_if_needed`` pads images smaller than
    ``size`` (as torchvision does: by the missing amount on *both* sides). Works on ``CxHxW``
    tensors and ``HxW[xC]`` arrays or Pillow images; the corner is drawn with two integer draws
    (row, then column), none when the image already has the crop's size.

    >>> import numpy as np, ember
    >>> from ember.data.transforms import RandomCrop
    >>> _ = ember.manual_seed(0)
    >>> RandomCrop(2, padding=1)(np.arange(4).reshape(2, 2)).shape
    (2, 2)
    >>> RandomCrop(32, padding=4)
    RandomCrop(size=(32, 32), padding=4)
    """

    def __init__(
        self,
        size: int | Sequence[int],
        padding: int | Sequence[int] | None = None,
        pad_if_needed: bool = False,
        fill: float | Sequence[float] = 0,
        padding_mode: str = "constant",
    ) -> None:
        self.size = _setup_size(size, "RandomCrop")
        self.padding = padding
        self._pad = None if padding is None else _parse_padding(padding, "RandomCrop")
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        if padding_mode not in _PAD_MODES:
            raise TransformError(
                f"RandomCrop: padding_mode must be one of {', '.join(_PAD_MODES)}; "
                f"got {padding_mode!r}"
            )
        self.padding_mode = padding_mode

    @staticmethod
    def get_params(img, output_size: tuple[int, int]) -> tuple[int, int, int, int]:
        """``(top, left, height, width)`` of a random crop of ``output_size`` from ``img``.

        >>> import numpy as np
        >>> from ember.data.transforms import RandomCrop
        >>> RandomCrop.get_params(np.zeros((5, 5)), (5, 5))
        (0, 0, 5, 5)
        """
        arr, layout, _ = _as_array(img, "RandomCrop")
        return _crop_params(_hw(arr, layout), output_size)

    def __call__(self, img):
        if isinstance(img, Tensor) and img._requires_grad:
            return self._call_tensor_grad(img)
        arr, layout, restore = _as_array(img, "RandomCrop")
        if type(arr) is np.ndarray and (
            self._pad is None
            or (self.padding_mode == "constant" and isinstance(self.fill, numbers.Number))
        ):
            out = self._crop_constant(arr, layout)
            return out if restore is None else restore(out)
        if self._pad is not None:
            arr = _pad(arr, layout, self._pad, self.fill, self.padding_mode)
        th, tw = self.size
        if self.pad_if_needed:
            h, w = _hw(arr, layout)
            if w < tw:
                arr = _pad(arr, layout, (tw - w, 0, tw - w, 0), self.fill, self.padding_mode)
            if h < th:
                arr = _pad(arr, layout, (0, th - h, 0, th - h), self.fill, self.padding_mode)
        i, j, h, w = _crop_params(_hw(arr, layout), self.size)
        if layout == "chw":
            out = arr[..., i : i + h, j : j + w].copy()
        else:
            out = np.ascontiguousarray(arr[i : i + h, j : j + w])
        return out if restore is None else restore(out)

    def _crop_constant(self, arr: np.ndarray, layout: str) -> np.ndarray:
        """Pad with a constant and crop in one step: the padded image is never built, only the
        crop (filled, then the overlap with the image copied in). Same draws and result as
        padding first."""
        left, top, right, bottom = self._pad or (0, 0, 0, 0)
        H, W = _hw(arr, layout)
        th, tw = self.size
        if self.pad_if_needed:
            if W + left + right < tw:
                d = tw - (W + left + right)
                left, right = left + d, right + d
            if H + top + bottom < th:
                d = th - (H + top + bottom)
                top, bottom = top + d, bottom + d
        i, j, h, w = _crop_params((H + top + bottom, W + left + right), self.size)
        i, j = i - top, j - left  # the crop's corner in the image's coordinates
        r0, r1, c0, c1 = max(i, 0), min(i + h, H), max(j, 0), min(j + w, W)
        if layout == "chw":
            if r0 == i and c0 == j and r1 == i + h and c1 == j + w:
                return arr[..., i : i + h, j : j + w].copy()
            out = np.full(arr.shape[:-2] + (h, w), _cast(self.fill, arr.dtype), dtype=arr.dtype)
            if r1 > r0 and c1 > c0:
                out[..., r0 - i : r1 - i, c0 - j : c1 - j] = arr[..., r0:r1, c0:c1]
            return out
        if r0 == i and c0 == j and r1 == i + h and c1 == j + w:
            return np.ascontiguousarray(arr[i : i + h, j : j + w])
        out = np.full((h, w) + arr.shape[2:], _cast(self.fill, arr.dtype), dtype=arr.dtype)
        if r1 > r0 and c1 > c0:
            out[r0 - i : r1 - i, c0 - j : c1 - j] = arr[r0:r1, c0:c1]
        return out

    def _call_tensor_grad(self, img: Tensor) -> Tensor:
        # keeps the graph: pad and crop with ember ops
        def pad(t, p):
            left, top, right, bottom = p
            mode = {"edge": "replicate", "symmetric": None}.get(
                self.padding_mode, self.padding_mode
            )
            if mode is None or not isinstance(self.fill, numbers.Number):
                raise TransformError(
                    "RandomCrop: on tensors that require grad only numeric fill and the "
                    "constant, edge and reflect padding modes are supported"
                )
            if mode == "constant":
                return _pad_tensor(t, (left, right, top, bottom), mode="constant", value=self.fill)
            return _pad_tensor(t, (left, right, top, bottom), mode=mode)

        if self._pad is not None:
            img = pad(img, self._pad)
        th, tw = self.size
        if self.pad_if_needed:
            h, w = img.shape[-2], img.shape[-1]
            if w < tw:
                img = pad(img, (tw - w, 0, tw - w, 0))
            if h < th:
                img = pad(img, (0, th - h, 0, th - h))
        i, j, h, w = _crop_params((img.shape[-2], img.shape[-1]), self.size)
        return img[..., i : i + h, j : j + w]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size}, padding={self.padding})"


def _cast(value, dtype):
    """``value`` in ``dtype`` as a C cast would make it (-1 -> 255 for uint8), like np.pad."""
    return np.array(value).astype(dtype)[()]


def _crop_params(hw: tuple[int, int], size: tuple[int, int]) -> tuple[int, int, int, int]:
    h, w = hw
    th, tw = size
    if h < th or w < tw:
        raise ShapeError(
            f"RandomCrop: required crop size {(th, tw)} is larger than the input image size "
            f"{(h, w)}"
        )
    if w == tw and h == th:
        return 0, 0, h, w
    g = _rng()
    i = int(g.integers(0, h - th + 1))
    j = int(g.integers(0, w - tw + 1))
    return i, j, th, tw


class RandomHorizontalFlip:
    """Mirror the image left to right with probability ``p`` (one uniform draw per call).

    Works on ``CxHxW`` tensors (flips the last dim) and ``HxW[xC]`` arrays or Pillow images.

    >>> import numpy as np
    >>> from ember.data.transforms import RandomHorizontalFlip
    >>> RandomHorizontalFlip(p=1.0)(np.array([[1, 2, 3]]))
    array([[3, 2, 1]])
    >>> RandomHorizontalFlip()
    RandomHorizontalFlip(p=0.5)
    """

    def __init__(self, p: float = 0.5) -> None:
        if not 0.0 <= float(p) <= 1.0:
            raise TransformError(f"RandomHorizontalFlip: p must be in [0, 1], got {p}")
        self.p = p

    def __call__(self, img):
        if not _rng().random() < self.p:
            return img
        if isinstance(img, Tensor) and img._requires_grad:
            return img.flip(-1)
        arr, layout, restore = _as_array(img, "RandomHorizontalFlip")
        out = arr[..., ::-1].copy() if layout == "chw" else np.ascontiguousarray(arr[:, ::-1])
        return out if restore is None else restore(out)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p={self.p})"


# -- Resize and CenterCrop ---------------------------------------------------------------------

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
        from ..dtypes import float32
        from ..functions.creation import as_tensor

        x = img if arr.dtype == work else img.to(float32)
        th = as_tensor(mh, device=img.device)
        tw = as_tensor(mw, device=img.device)
        out = (th @ x) @ tw if rows_first else th @ (x @ tw)
        return out if out.dtype == dtype else out.to(dtype)
    if type(arr) is np.ndarray:
        xp = np
    else:
        from ..backend import xp_of

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


def _center_corner(hw: tuple[int, int], size: tuple[int, int]) -> tuple[int, int]:
    """The crop's top-left corner in the image's coordinates (negative inside the padding):
    torchvision pads a too-small side by ``(crop - image) // 2`` before (the rest after) and
    otherwise starts at ``int(round((image - crop) / 2))`` (Python's half-to-even round)."""
    out = []
    for n, t in zip(hw, size):
        out.append(-((t - n) // 2) if t > n else int(round((n - t) / 2.0)))
    return out[0], out[1]


def _window(arr, layout: str, i: int, j: int, h: int, w: int):
    """A fresh ``h x w`` window of ``arr`` at ``(i, j)``, zeros where it leaves the image."""
    H, W = _hw(arr, layout)
    r0, r1, c0, c1 = max(i, 0), min(i + h, H), max(j, 0), min(j + w, W)
    if type(arr) is np.ndarray:
        xp = np
    else:
        from ..backend import xp_of

        xp = xp_of(arr)
    inside = r0 == i and c0 == j and r1 == i + h and c1 == j + w
    if layout == "chw":
        if inside:
            return xp.ascontiguousarray(arr[..., i : i + h, j : j + w]).copy()
        out = xp.zeros(arr.shape[:-2] + (h, w), dtype=arr.dtype)
        if r1 > r0 and c1 > c0:
            out[..., r0 - i : r1 - i, c0 - j : c1 - j] = arr[..., r0:r1, c0:c1]
        return out
    if inside:
        return np.ascontiguousarray(arr[i : i + h, j : j + w]).copy()
    out = np.zeros((h, w) + arr.shape[2:], dtype=arr.dtype)
    if r1 > r0 and c1 > c0:
        out[r0 - i : r1 - i, c0 - j : c1 - j] = arr[r0:r1, c0:c1]
    return out


class CenterCrop:
    """Crop the centre ``size`` (an int for a square, or ``(h, w)``) of an image, padding it
    with zeros first where it is smaller than ``size`` (torchvision's ``CenterCrop``: the
    padding is ``(size - image) // 2`` before and the rest after; an odd surplus puts the crop
    at ``int(round((image - size) / 2))``, Python's round half to even).

    Works on ``(..., H, W)`` tensors (differentiable when they require grad), ``HxW[xC]``
    arrays and Pillow images (``img.crop``, which fills with zeros too). The result never
    shares memory with the input.

    >>> import numpy as np
    >>> from ember.data.transforms import CenterCrop
    >>> CenterCrop(2)(np.arange(16).reshape(4, 4))
    array([[ 5,  6],
           [ 9, 10]])
    >>> CenterCrop((1, 4))(np.array([[1, 2]]))  # wider than the image: zeros either side
    array([[0, 1, 2, 0]])
    >>> CenterCrop(224)
    CenterCrop(size=(224, 224))
    """

    def __init__(self, size: int | Sequence[int]) -> None:
        self.size = _setup_size(size, "CenterCrop")

    def __call__(self, img):
        th, tw = self.size
        if _is_pil(img):
            W, H = img.size
            i, j = _center_corner((H, W), self.size)
            return img.crop((j, i, j + tw, i + th))
        if isinstance(img, Tensor) and img._requires_grad:
            if img.dim() < 2:
                raise ShapeError(
                    f"CenterCrop: expected a tensor image of size (..., H, W), got {_describe(img)}"
                )
            H, W = img.shape[-2], img.shape[-1]
            i, j = _center_corner((H, W), self.size)
            pad = (max(-j, 0), max(j + tw - W, 0), max(-i, 0), max(i + th - H, 0))
            if any(pad):
                img = _pad_tensor(img, pad, mode="constant", value=0)
                i, j = i + pad[2], j + pad[0]
            return img[..., i : i + th, j : j + tw]
        arr, layout, restore = _as_array(img, "CenterCrop")
        i, j = _center_corner(_hw(arr, layout), self.size)
        out = _window(arr, layout, i, j, th, tw)
        return out if restore is None else restore(out)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size})"


# -- composition -----------------------------------------------------------------------------


class Compose:
    """Apply ``transforms`` one after the other.

    >>> import numpy as np
    >>> from ember.data.transforms import Compose, Normalize, ToTensor
    >>> t = Compose([ToTensor(), Normalize((0.5,), (0.25,))])
    >>> t(np.array([[0.5, 1.0]], dtype=np.float32))
    tensor([[[0., 2.]]])
    >>> print(t)
    Compose(
        ToTensor()
        Normalize(mean=(0.5,), std=(0.25,))
    )
    """

    def __init__(self, transforms: Sequence[Callable]) -> None:
        self.transforms = list(transforms)
        for t in self.transforms:
            if not callable(t):
                raise DTypeError(f"Compose: every transform must be callable, got {t!r}")

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({body}\n)"


class Lambda:
    """A transform made from a function (not picklable if it is a lambda, as in torchvision).

    >>> from ember.data.transforms import Lambda
    >>> Lambda(lambda x: x * 2)(3)
    6
    >>> Lambda(abs)
    Lambda()
    """

    def __init__(self, lambd: Callable) -> None:
        if not callable(lambd):
            raise DTypeError(f"Lambda: argument should be callable, got {type(lambd).__name__}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
