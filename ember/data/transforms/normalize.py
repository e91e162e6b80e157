"""``Normalize``: subtract a per-channel mean and divide by a per-channel std."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..._errors import DTypeError, ShapeError
from ..._tensor import Tensor
from .images import TransformError, _describe

__all__ = ["Normalize"]


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
            from ...functions.creation import as_tensor

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
