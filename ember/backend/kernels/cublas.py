"""Matrix products through cuBLAS called directly (``ctypes``), where CuPy's ``matmul`` cannot.

- **Capture.** CuPy refuses every cuBLAS call while a stream is capturing (its
  ``cublas.setStream`` raises ``NotImplementedError: calling cuBLAS API during stream capture is
  currently unsupported``), although cuBLAS itself supports stream capture (CUDA >= 12.2
  allocates its workspace with ``cudaMallocAsync``). So while ``ember.compile`` captures a step,
  ``cupy.matmul`` is replaced by ``matmul`` here.
- **Batched bfloat16.** CuPy 14.2's batched product has no bfloat16 loop; ``matmul`` here is
  one ``cublasGemmStridedBatchedEx`` in bfloat16 with float32 accumulation (what eager attention
  products run, ``ember.backend.arrays``), instead of a float32 product on CUDA cores.

``matmul`` calls ``cublasGemmEx`` / ``cublasGemmStridedBatchedEx`` on CuPy's own cuBLAS handle
and current stream. Host pointer mode: alpha and beta are passed (and recorded into a graph) by
value (1 and 0).

Row-major products are column-major products with the operands swapped: ``C = A @ B`` (C is
m x n) is ``C^T = B^T A^T``, and a C-contiguous (r, c) matrix is a column-major (c, r) one
with leading dimension c. A matrix whose transpose is C-contiguous (``x.T`` of one) is used
as it is with the transpose flag, and a stack of such matrices at one uniform stride (a
transposed or sliced view of a batch) is used as it is too. Anything else (other strides,
mixed dtypes, integers) is made contiguous first, or refused with ``CaptureUnsupported``.

>>> p = gemm_plan((64, 1000), (4000, 4), (1000, 100), (400, 4), 4)
>>> p.transa, p.transb, p.m, p.n, p.k, p.lda, p.ldb, p.ldc
(0, 0, 100, 64, 1000, 100, 1000, 100)
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from . import row_copy

__all__ = [
    "CaptureUnsupported",
    "GemmPlan",
    "batch_stride",
    "c_order",
    "check_operands",
    "gemm_plan",
    "matmul",
]

_OP_N, _OP_T = 0, 1
# cuBLAS data types, keyed by dtype objects (a dict lookup; ``dtype.name`` costs about 5 us)
_CUDA_R = {
    np.dtype(np.float16): 2,
    np.dtype(np.float32): 0,
    np.dtype(np.float64): 1,
    np.dtype(ml_dtypes.bfloat16): 14,
}
_COMPUTE_32F, _COMPUTE_32F_FAST_TF32, _COMPUTE_64F = 68, 77, 70
_GEMM_DEFAULT = -1


class CaptureUnsupported(Exception):
    """This step cannot be recorded as a CUDA graph (the message says why)."""


@dataclass(frozen=True)
class GemmPlan:
    """Column-major GEMM arguments for one row-major ``(m_r, k) @ (k, n_r)`` product; cuBLAS's
    first operand is B, its second A."""

    transa: int
    transb: int
    m: int
    n: int
    k: int
    lda: int
    ldb: int
    ldc: int


def _layout(shape, strides, itemsize):
    """``(transposed, leading dimension)`` of a row-major 2-D operand, or None if neither it
    nor its transpose is contiguous in the sense cuBLAS needs."""
    r, c = shape
    sr, sc = (s // itemsize for s in strides)
    if (sc == 1 or c == 1) and (sr >= max(c, 1) or r == 1):
        return False, max(sr if r > 1 else c, 1)
    if (sr == 1 or r == 1) and (sc >= max(r, 1) or c == 1):
        return True, max(sc if c > 1 else r, 1)
    return None


def gemm_plan(a_shape, a_strides, b_shape, b_strides, itemsize) -> GemmPlan | None:
    """The cuBLAS arguments computing row-major ``A @ B`` into a C-contiguous C (None when an
    operand's layout needs a copy first). cuBLAS gets B first: ``C^T = B^T A^T``."""
    la = _layout(a_shape, a_strides, itemsize)
    lb = _layout(b_shape, b_strides, itemsize)
    if la is None or lb is None:
        return None
    (m_r, k), (_, n_r) = a_shape, b_shape
    # B (k x n_r) row-major, not transposed, is column-major (n_r x k) = B^T: op N, ld.
    # B transposed-contiguous is column-major (k x n_r) = B: op T gives B^T.
    return GemmPlan(
        transa=_OP_T if lb[0] else _OP_N,
        transb=_OP_T if la[0] else _OP_N,
        m=n_r,
        n=m_r,
        k=k,
        lda=lb[1],
        ldb=la[1],
        ldc=max(n_r, 1),
    )


_lib = [None]


def _cublas(cp):
    if _lib[0] is None:
        runtime = getattr(getattr(cp, "cuda", None), "runtime", None)
        if runtime is None:  # a stand-in array module (the CPU emulator of CUDA kernels)
            raise CaptureUnsupported(f"{getattr(cp, '__name__', cp)} has no CUDA runtime")
        major = runtime.runtimeGetVersion() // 1000
        errors = []
        for name in (f"libcublas.so.{major}", "libcublas.so", f"cublas64_{major}.dll"):
            try:
                lib = ctypes.CDLL(name)
            except OSError as e:
                errors.append(str(e))
                continue
            for fn in ("cublasGemmEx", "cublasGemmStridedBatchedEx"):
                getattr(lib, fn).restype = ctypes.c_int
            _lib[0] = lib
            break
        else:
            _lib[0] = f"cuBLAS could not be loaded ({errors[-1]})"  # remembered: tried once
    if isinstance(_lib[0], str):
        raise CaptureUnsupported(_lib[0])  # a new exception each time (no growing traceback)
    return _lib[0]


def _compute(dtype) -> tuple[int, object]:
    """cuBLAS compute type and the ctypes type of alpha / beta for ``dtype``."""
    if dtype == np.float64:
        return _COMPUTE_64F, ctypes.c_double
    if dtype == np.float32:
        from .. import cuda as flags

        return (_COMPUTE_32F_FAST_TF32 if flags.matmul_allows_tf32() else _COMPUTE_32F), (
            ctypes.c_float
        )
    return _COMPUTE_32F, ctypes.c_float  # float16 / bfloat16: float32 accumulation


def _check(status: int, what: str) -> None:
    if status != 0:
        raise CaptureUnsupported(f"{what} failed during capture (cuBLAS status {status})")


def check_operands(a, b) -> None:
    """Raise ``CaptureUnsupported`` unless cuBLAS takes ``a @ b`` as given: one dtype it has a
    type for (no promotion here, as CuPy's matmul would make).

    >>> check_operands(np.ones(2, np.float32), np.ones(2, np.float64))
    Traceback (most recent call last):
    ...
    ember.backend.kernels.cublas.CaptureUnsupported: matmul of float32 and float64 during capture
    """
    if b.dtype != a.dtype or a.dtype not in _CUDA_R:
        raise CaptureUnsupported(f"matmul of {a.dtype} and {b.dtype} during capture")


def matmul(cp, a, b, out=None):
    """``cupy.matmul(a, b, out=out)`` through cuBLAS called directly (see the module
    docstring); NumPy's matmul semantics: 1-D operands, broadcast batch dimensions."""
    check_operands(a, b)
    dt = a.dtype
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    a2 = a.reshape(1, -1) if a_vec else a
    b2 = b.reshape(-1, 1) if b_vec else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not match")
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    m_r, k, n_r = a2.shape[-2], a2.shape[-1], b2.shape[-1]
    shape = batch + (m_r, n_r)
    if a_vec:
        shape = shape[:-2] + shape[-1:]
    if b_vec:
        shape = shape[:-1]
    res = cp.empty(batch + (m_r, n_r), dt)
    count = math.prod(batch)
    if res.size:
        if k == 0:
            res.fill(0)
        elif count == 1 or (a2.ndim > 2 and b2.ndim == 2 and a2.flags.c_contiguous):
            if count > 1:  # batch @ matrix: one GEMM over all rows
                a2 = a2.reshape(-1, k)
            else:
                a2 = a2.reshape(a2.shape[-2:])
            _gemm(cp, a2, b2.reshape(b2.shape[-2:]), res.reshape(-1, n_r))
        else:
            _batched(cp, a2, b2, batch, res)
    res = res.reshape(shape)
    if out is not None:
        out[...] = res
        return out
    return res


def c_order(cp, x):
    """A C-contiguous copy of ``x``: whole rows at a time where its last axis is contiguous
    (``row_copy.py``: attention's heads, split or broadcast), else CuPy's copy.

    >>> c_order(np, np.ones((2, 3)).T).flags.c_contiguous
    True
    """
    out = row_copy.c_order(cp, x)
    return cp.ascontiguousarray(x) if out is NotImplemented else out


def _operand(cp, x):
    """``x`` (2-D) as an operand cuBLAS can read: as it is, or a C-contiguous copy."""
    if _layout(x.shape, x.strides, x.dtype.itemsize) is None:
        x = c_order(cp, x)
    return x


def _gemm(cp, a, b, c) -> None:
    a, b = _operand(cp, a), _operand(cp, b)
    p = gemm_plan(a.shape, a.strides, b.shape, b.strides, a.dtype.itemsize)
    lib = _cublas(cp)
    compute, scalar = _compute(a.dtype)
    alpha, beta = scalar(1), scalar(0)
    handle = _handle(cp)
    t = _CUDA_R[a.dtype]
    _check(
        lib.cublasGemmEx(
            ctypes.c_void_p(handle), p.transa, p.transb, p.m, p.n, p.k,
            ctypes.byref(alpha), ctypes.c_void_p(b.data.ptr), t, p.lda,
            ctypes.c_void_p(a.data.ptr), t, p.ldb, ctypes.byref(beta),
            ctypes.c_void_p(c.data.ptr), t, p.ldc, compute, _GEMM_DEFAULT,
        ),
        "cublasGemmEx",
    )  # fmt: skip


def _batched(cp, a, b, batch, res) -> None:
    """Broadcast batched product: strided batches (stride 0 where an operand is shared)."""
    nd = len(batch)

    def prep(x):
        if x.ndim - 2 < nd:
            x = x.reshape((1,) * (nd - (x.ndim - 2)) + x.shape)
        lead = x.shape[:-2]
        if all(s == 1 for s in lead):
            x2 = _operand(cp, x.reshape(x.shape[-2:]))
            return x2, 0
        if tuple(lead) != tuple(batch):
            x = cp.broadcast_to(x, tuple(batch) + x.shape[-2:])
        step = batch_stride(x.shape, x.strides, x.dtype.itemsize)
        if step is None:
            x = c_order(cp, x)
            step = x.shape[-2] * x.shape[-1]
        return x, step

    a3, sa = prep(a)
    b3, sb = prep(b)
    m_r, k, n_r = res.shape[-2], a3.shape[-1], res.shape[-1]
    a_mat = (m_r, k)
    b_mat = (k, n_r)
    a_str = a3.strides[-2:]
    b_str = b3.strides[-2:]
    p = gemm_plan(a_mat, a_str, b_mat, b_str, a3.dtype.itemsize)
    lib = _cublas(cp)
    compute, scalar = _compute(a3.dtype)
    alpha, beta = scalar(1), scalar(0)
    t = _CUDA_R[a3.dtype]
    count = math.prod(batch)
    _check(
        lib.cublasGemmStridedBatchedEx(
            ctypes.c_void_p(_handle(cp)), p.transa, p.transb, p.m, p.n, p.k,
            ctypes.byref(alpha), ctypes.c_void_p(b3.data.ptr), t, p.lda, ctypes.c_longlong(sb),
            ctypes.c_void_p(a3.data.ptr), t, p.ldb, ctypes.c_longlong(sa),
            ctypes.byref(beta), ctypes.c_void_p(res.data.ptr), t, p.ldc,
            ctypes.c_longlong(m_r * n_r), count, compute, _GEMM_DEFAULT,
        ),
        "cublasGemmStridedBatchedEx",
    )  # fmt: skip


def batch_stride(shape, strides, itemsize) -> int | None:
    """The element stride from one matrix of a stack to the next, where the batch dims nest at
    one uniform stride and each matrix is a cuBLAS operand as it lies; else None (copy first).

    >>> batch_stride((4, 3, 5), (60, 20, 4), 4), batch_stride((4, 5, 3), (60, 4, 20), 4)
    (15, 15)
    >>> batch_stride((2, 4, 3, 5), (240, 20, 80, 4), 4) is None  # heads split from a row
    True
    """
    if _layout(shape[-2:], strides[-2:], itemsize) is None:
        return None
    dims = [(n, s // itemsize) for n, s in zip(shape[:-2], strides[:-2]) if n != 1]
    for (_, outer), (n, inner) in zip(dims, dims[1:]):
        if outer != inner * n:
            return None
    if not dims:
        return 0
    step = dims[-1][1]
    return step if step > 0 else None


def _handle(cp) -> int:
    """CuPy's cuBLAS handle of the current GPU, set to the current (capturing) stream."""
    handle = cp.cuda.device.get_cublas_handle()
    lib = _cublas(cp)
    stream = cp.cuda.get_current_stream().ptr
    _check(lib.cublasSetStream_v2(ctypes.c_void_p(handle), ctypes.c_void_p(stream)), "SetStream")
    _check(lib.cublasSetPointerMode_v2(ctypes.c_void_p(handle), 0), "SetPointerMode")
    return handle
