"""Crops: ``RandomCrop`` (with torchvision's padding forms and modes) and ``CenterCrop``."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

from ..._errors import ShapeError
from ..._tensor import Tensor
from ...functions.padding import pad as _pad_tensor
from .images import TransformError, _as_array, _describe, _hw, _is_pil, _rng, _setup_size

__all__ = ["CenterCrop", "RandomCrop"]


_PAD_MODES = ("constant", "edge", "reflect", "symmetric")


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
        from ...backend import xp_of

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
        from ...backend import xp_of

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
