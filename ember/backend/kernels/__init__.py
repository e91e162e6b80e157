"""Hand-written CUDA kernels for CuPy, built lazily and cached per (kernel, dtype).

Most of ember's GPU work is ``xp`` code: CuPy runs the same NumPy calls as the CPU, with cuBLAS
under ``matmul``. Where a chain of NumPy calls makes many passes over memory (the optimizers'
updates, softmax, layer norm) this package has a fused kernel instead, written once as CUDA
source (a CuPy ``ElementwiseKernel`` or ``RawKernel``) and once as the NumPy computation it
replaces (the reference, which the CPU runs and the tests compare against).

Nothing here imports CuPy: kernels are built from the ``xp`` module an op receives, on first
use, and kept in ``_cache`` keyed by name, accumulation type and variant. ``fused(xp)`` says
whether ``xp`` can build kernels at all (a stand-in CuPy without ``ElementwiseKernel``, such as
the test suite's fake, gets the reference path on its arrays).

Dtypes: storage may be float16, bfloat16 (CuPy >= 14, ml_dtypes), float32 or float64; the
arithmetic is float32 for the first three and float64 for float64 (PyTorch's accumulation
types). ``RawKernel`` sources read 16-bit storage as raw ``unsigned short`` bits and convert
with inline PTX (float16) or bit arithmetic (bfloat16), so they need no CUDA headers.

>>> acc_ctype(np.float16), acc_ctype(np.float64)
('float', 'double')
>>> fused(np)
False
"""

from __future__ import annotations

import numpy as np

_cache: dict = {}


def fused(xp) -> bool:
    """Whether ``xp`` builds CUDA kernels (real CuPy; not NumPy, not a stand-in without them)."""
    # Not cached: a module can gain or lose kernels (tests patch stand-ins), and hasattr is cheap.
    return xp is not np and hasattr(xp, "ElementwiseKernel")


def acc_ctype(dtype) -> str:
    """The C type arithmetic runs in for a storage dtype: double for float64, else float."""
    return "double" if np.dtype(dtype) == np.float64 else "float"


def acc_dtype(dtype) -> np.dtype:
    """NumPy dtype of ``acc_ctype``."""
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


def storage_kind(dtype) -> str:
    """How a RawKernel source reads the dtype: 'f32', 'f64', 'f16' or 'bf16'."""
    dt = np.dtype(dtype)
    if dt == np.float32:
        return "f32"
    if dt == np.float64:
        return "f64"
    if dt == np.float16:
        return "f16"
    if dt.name == "bfloat16":
        return "bf16"
    raise TypeError(f"no GPU kernel for dtype {dt}")


def cached(key: tuple, build):
    """The kernel stored under ``key``, built by ``build()`` on first use."""
    k = _cache.get(key)
    if k is None:
        k = _cache[key] = build()
    return k


def raw_view(xp, a):
    """``a`` as the array a RawKernel source reads: 16-bit floats as their uint16 bits."""
    if a.dtype.itemsize == 2:
        return a.view(xp.uint16)
    return a


def on_gpu(data) -> bool:
    """Whether a Tensor's ``_data`` (an array or a traced Symbol) lives on a GPU."""
    if type(data) is np.ndarray:
        return False
    from .. import cuda

    if cuda.is_cupy_array(data):
        return True
    return getattr(data, "device", None) is not None and not hasattr(data, "__array__")


def clear() -> None:
    """Forget every built kernel (they are rebuilt on next use).

    >>> clear()
    """
    _cache.clear()


__all__ = ["fused", "acc_ctype", "acc_dtype", "storage_kind", "cached", "raw_view", "on_gpu"]
