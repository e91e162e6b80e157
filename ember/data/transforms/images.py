"""What the transforms accept and share: ``TransformError``, the image kinds (NumPy array,
Pillow image, ember tensor) with their layout and size, the ``size`` argument, and the
generator random transforms draw from.
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Sequence

import numpy as np

from ..._errors import DTypeError, EmberError, ShapeError
from ..._tensor import Tensor
from ...random import rng as _default_rng
from .._worker import get_worker_info

__all__ = ["TransformError"]


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
