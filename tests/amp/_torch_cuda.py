"""PyTorch's own CUDA autocast policy, run on a CPU-only torch: ``FakeTensorMode`` makes
tensors on device cuda with shapes and dtypes but no data, and turning autocast on for cuda
by its low-level switches (``torch.autocast`` refuses without a GPU) sends their ops through
the AutocastCUDA kernels that torch's ``autocast_mode.cpp`` registers in every build. So
output dtypes under ``torch.autocast("cuda", torch.float16)`` are torch's, not read off a list.
"""

from __future__ import annotations

import contextlib

import numpy as np
import torch
from torch._subclasses.fake_tensor import FakeTensorMode


@contextlib.contextmanager
def cuda_autocast(dtype=torch.float16):
    """Yield ``t(array) -> fake cuda tensor`` (same shape and dtype) with cuda autocast on."""
    with FakeTensorMode():
        torch.set_autocast_enabled("cuda", True)
        torch.set_autocast_dtype("cuda", dtype)
        torch.autocast_increment_nesting()
        try:
            yield lambda a: torch.empty(
                np.shape(a), dtype=getattr(torch, np.asarray(a).dtype.name), device="cuda"
            )
        finally:
            if torch.autocast_decrement_nesting() == 0:
                torch.clear_autocast_cache()
            torch.set_autocast_enabled("cuda", False)
