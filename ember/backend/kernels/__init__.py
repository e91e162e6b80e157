"""Hand-written CUDA kernels for CuPy, built lazily and cached per (kernel, dtype).

Most of ember's GPU work is ``xp`` code: CuPy runs the same NumPy calls as the CPU, with cuBLAS
under ``matmul``. Where a chain of NumPy calls makes many passes over memory (the optimizers'
updates, softmax, layer norm) or a library does better (cuDNN convolutions), this package has a
kernel instead, written once as CUDA source (a CuPy ``ElementwiseKernel`` or ``RawKernel``).
Each one is an *override* (``ember.backend.overrides``) of the op or optimizer rule whose
reference body it replaces: the ops register theirs beside the op (``ember.ops.softmax`` ...),
the optimizer kernels register here by the optimizer's name (``optim.py``), and the tests
compare every registered override with the body it replaces.

Nothing here imports CuPy: kernels are built from the ``xp`` module an op receives, on first
use, and kept in ``_cache`` keyed by name, accumulation type and variant. ``fused(xp)`` says
whether ``xp`` can build kernels at all (a stand-in CuPy without ``ElementwiseKernel`` gets
``NotImplemented`` from every override, hence the reference bodies).

Dtypes: storage may be float16, bfloat16 (CuPy >= 14, ml_dtypes), float32 or float64; the
arithmetic is float32 for the first three and float64 for float64 (PyTorch's accumulation
types). ``RawKernel`` sources read 16-bit storage as raw ``unsigned short`` bits and convert
with inline PTX (float16) or bit arithmetic (bfloat16), so they need no CUDA headers.

>>> acc_ctype(np.float16), acc_ctype(np.float64)
('float', 'double')
>>> fused(np), served(np.float16), served(np.int64)
(False, True, False)
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ... import _caches

_cache: dict = {}


def fused(xp) -> bool:
    """Whether ``xp`` builds CUDA kernels (real CuPy; not NumPy, not a stand-in without them)."""
    # Not cached: a module can gain or lose kernels (tests patch stand-ins), and hasattr is cheap.
    return xp is not np and hasattr(xp, "ElementwiseKernel")


def acc_ctype(dtype) -> str:
    """The C type arithmetic runs in for a storage dtype: double for float64, else float."""
    return "double" if np.dtype(dtype) == np.float64 else "float"


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def acc_dtype(dtype) -> np.dtype:
    """NumPy dtype of ``acc_ctype``."""
    return _F64 if dtype == _F64 else _F32


# keyed by dtype objects: a lookup by an array's dtype costs ~0.05 us, by ``dtype.name`` ~6 us
_STORAGE = {
    np.dtype(name): kind
    for name, kind in (("float32", "f32"), ("float64", "f64"), ("float16", "f16"))
}
_STORAGE[np.dtype(ml_dtypes.bfloat16)] = "bf16"


def _kind(dtype):
    kind = _STORAGE.get(dtype)
    if kind is None and not isinstance(dtype, np.dtype):  # a type or a name: convert once
        kind = _STORAGE.get(np.dtype(dtype))
    return kind


def served(dtype) -> bool:
    """Whether the kernels here take arrays of ``dtype`` (the four floating-point types)."""
    return _kind(dtype) is not None


def storage_kind(dtype) -> str:
    """How a RawKernel source reads the dtype: 'f32', 'f64', 'f16' or 'bf16'."""
    kind = _kind(dtype)
    if kind is None:
        raise TypeError(f"no GPU kernel for dtype {np.dtype(dtype)}")
    return kind


def cached(key: tuple, build):
    """The kernel stored under ``key``, built by ``build()`` on first use."""
    k = _cache.get(key)
    if k is None:
        k = _cache[key] = build()
    return k


# float16 / bfloat16 bits (``unsigned short``) <-> float as CUDA device functions, one pair per
# kind with the kind in its name, so that one source may convert both: float16 with PTX
# conversions (as cuda_fp16.hpp does), bfloat16 as the high half of a float32 (round to nearest
# even, a NaN stays a quiet NaN). No CUDA headers needed.
_HALF_IO = {
    "f16": (
        "__device__ __forceinline__ float ember_ld_f16(unsigned short v) {\n"
        '  float f; asm("{ cvt.f32.f16 %0, %1; }" : "=f"(f) : "h"(v)); return f;\n'
        "}\n"
        "__device__ __forceinline__ unsigned short ember_st_f16(float v) {\n"
        '  unsigned short h; asm("{ cvt.rn.f16.f32 %0, %1; }" : "=h"(h) : "f"(v)); return h;\n'
        "}\n"
    ),
    "bf16": (
        "__device__ __forceinline__ float ember_ld_bf16(unsigned short v) {\n"
        "  return __uint_as_float(((unsigned int)v) << 16);\n"
        "}\n"
        "__device__ __forceinline__ unsigned short ember_st_bf16(float v) {\n"
        "  unsigned int u = __float_as_uint(v);\n"
        "  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);\n"
        "  u += 0x7fffu + ((u >> 16) & 1u);\n"
        "  return (unsigned short)(u >> 16);\n"
        "}\n"
    ),
}


def half_io(kind: str) -> str:
    """CUDA source of ``ember_ld_<kind>`` (16-bit storage bits, ``unsigned short``, to float)
    and ``ember_st_<kind>`` (float to bits, rounded to nearest even) for the storage kind
    'f16' or 'bf16' (``storage_kind``). The names differ per kind: a source may hold both.

    >>> "ember_st_bf16" in half_io("bf16") and "cvt.rn.f16.f32" in half_io("f16")
    True
    """
    return _HALF_IO[kind]


def address(a) -> int:
    """The device (CuPy) or host (NumPy, the kernel emulator's arrays) address of ``a``'s first
    element.

    >>> a = np.zeros(4, np.float32)
    >>> address(a[1:]) - address(a)
    4
    """
    return a.ctypes.data if isinstance(a, np.ndarray) else a.data.ptr


def grid(n: int, block: int) -> int:
    """Blocks for a grid-stride loop over ``n`` elements: one per ``block`` of them, at most
    65535.

    >>> grid(1000, 256), grid(0, 256), grid(10**9, 256)
    (4, 1, 65535)
    """
    return max(1, min(-(-n // block), 65535))


def raw_view(xp, a):
    """``a`` as the array a RawKernel source reads: 16-bit floats as their uint16 bits."""
    if a.dtype.itemsize == 2:
        return a.view(xp.uint16)
    return a


def clear() -> None:
    """Forget every built kernel (they are rebuilt on next use).

    >>> clear()
    """
    _cache.clear()


_caches.register("CUDA kernels", clear, _cache.__len__)

__all__ = [
    "address",
    "fused",
    "served",
    "acc_ctype",
    "acc_dtype",
    "storage_kind",
    "cached",
    "raw_view",
    "half_io",
]

from . import optim  # noqa: E402, F401  (registers the optimizers' overrides)
