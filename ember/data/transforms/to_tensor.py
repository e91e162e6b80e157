"""``ToTensor``: an HxWxC image (array or Pillow) to a CxHxW float tensor in [0, 1]."""

from __future__ import annotations

import numpy as np

from ..._errors import DTypeError, ShapeError
from ..._tensor import Tensor
from .images import _describe, _is_pil

__all__ = ["ToTensor"]


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
