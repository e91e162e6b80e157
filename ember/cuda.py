"""``ember.cuda``: GPU queries and the legacy ``ember.cuda.FloatTensor`` names.

>>> import ember
>>> isinstance(ember.cuda.is_available(), bool)
True
"""

from __future__ import annotations

from ._legacy import CUDA_TYPES
from .backend.cuda import device_count, is_available, synchronize

FloatTensor = CUDA_TYPES["FloatTensor"]
DoubleTensor = CUDA_TYPES["DoubleTensor"]
HalfTensor = CUDA_TYPES["HalfTensor"]
BFloat16Tensor = CUDA_TYPES["BFloat16Tensor"]
ByteTensor = CUDA_TYPES["ByteTensor"]
CharTensor = CUDA_TYPES["CharTensor"]
ShortTensor = CUDA_TYPES["ShortTensor"]
IntTensor = CUDA_TYPES["IntTensor"]
LongTensor = CUDA_TYPES["LongTensor"]
BoolTensor = CUDA_TYPES["BoolTensor"]


def manual_seed(seed: int) -> None:
    """Seed the GPU's generator (a no-op without CuPy)."""
    from .backend import cuda as _cuda

    if _cuda._load() is not None:
        _cuda._cupy.random.seed(int(seed) % (2**32))


manual_seed_all = manual_seed


def current_device() -> int:
    """Index of the current GPU."""
    from .backend import cuda as _cuda

    return _cuda.xp().cuda.Device().id


__all__ = [
    "is_available",
    "device_count",
    "synchronize",
    "manual_seed",
    "manual_seed_all",
    "current_device",
    *CUDA_TYPES,
]
