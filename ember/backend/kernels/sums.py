"""Sums over leading axes on the GPU as one matrix product with a row of ones.

A bias or LayerNorm-weight gradient sums a (rows, cols) array over its rows. CuPy reduces a
leading axis with a generic kernel (measured on an H100: about 130 us for 8192 x 3072 bfloat16,
four times what memory bandwidth allows) and, for float16 / bfloat16, ember first widened the
array to float32 for the accumulation. ``ones(1, rows) @ x`` is a cuBLAS GEMM that reads ``x``
once at full bandwidth and accumulates 16-bit inputs in float32 (``CUBLAS_COMPUTE_32F``),
rounding once, as ``Sum.forward`` does. float32 takes this path only while TF32 is off for
matrix products (PyTorch's default), so a sum never loses precision to TF32. It goes through
``xp.matmul``, which a captured step (CUDA graph) replaces with a direct cuBLAS call.

This is the CUDA override of ``ember.ops.reduce.Sum`` (registered there); it returns
``NotImplemented`` for anything else (other axes, non-contiguous or integer arrays), and
``Sum.forward`` runs.

>>> leading_sum(np, np.ones((4, 3), np.float32), (0,), False)
NotImplemented
"""

from __future__ import annotations

import numpy as np

from .. import cuda as _flags
from . import cached, fused, served
from . import conv as _conv
from .matmul import apply_precision, state_applied


def _ones(xp, rows: int, dtype, device: int):
    """A cached (1, rows) row of ones on ``device`` (never written)."""
    return cached(("ones", device, rows, np.dtype(dtype).str), lambda: xp.ones((1, rows), dtype))


def leading_sum(xp, x, axis, keepdim: bool):
    """``x.sum(axis, keepdims=keepdim)`` for ``axis == (0, ..., k-1)``, ``k < x.ndim``."""
    if not fused(xp) or not axis or not served(x.dtype) or x.size == 0:
        return NotImplemented
    k = len(axis)
    if axis != tuple(range(k)) or k >= x.ndim or not x.flags.c_contiguous:
        return NotImplemented
    if x.dtype == np.float32:
        if _flags.matmul_allows_tf32():
            return NotImplemented
        if state_applied() != _flags.state["version"]:
            apply_precision(xp)
    rows = 1
    for s in x.shape[:k]:
        rows *= s
    ones = _ones(xp, rows, x.dtype, _conv.device_id(x))
    out = xp.matmul(ones, x.reshape(rows, x.size // rows))
    shape = (1,) * k + x.shape[k:] if keepdim else x.shape[k:]
    return out.reshape(shape).astype(x.dtype, copy=False)
