"""``RandomHorizontalFlip``: mirror an image left to right with probability ``p``."""

from __future__ import annotations

import numpy as np

from ..._tensor import Tensor
from .images import TransformError, _as_array, _rng

__all__ = ["RandomHorizontalFlip"]


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
