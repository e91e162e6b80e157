"""Matrix products on the GPU: ``cupy.matmul`` (cuBLAS ``cublasGemmEx``) with ember's TF32
policy applied, and 16-bit products kept on tensor cores.

- TF32: CuPy picks the cuBLAS compute type of float32 GEMMs from a process-wide setting,
  ``cupy._core._routines_linalg.set_compute_type(float32, COMPUTE_TYPE_TF32 or _DEFAULT)``
  (its first default comes from the ``CUPY_TF32`` environment variable). ember sets it from
  ``ember.backends.cuda.matmul.allow_tf32`` / ``set_float32_matmul_precision`` before a float32
  product whenever that setting changed (one integer comparison otherwise), so PyTorch's default
  (no TF32 for matmul) holds whatever ``CUPY_TF32`` says. A CuPy without that setter keeps the
  choice ``CUPY_TF32`` made when it started: ember warns once that its own setting cannot apply,
  and leaves the process environment alone.
- float16 / bfloat16: CuPy's 2-D product calls ``cublasGemmEx`` with 16-bit inputs and outputs
  and ``CUBLAS_COMPUTE_32F`` (float32 accumulation on tensor cores). An N-D @ 2-D product (a
  Linear layer on a sequence) is folded into one 2-D GEMM here, which keeps 16-bit products on
  tensor cores and saves CuPy's pointer-array batched GEMM for broadcast operands in every dtype.
- bfloat16 batches: CuPy 14.2's batched path has no bfloat16 loop; ``xp.matmul`` (ember's
  CuPy surface, ``ember.backend.arrays``) runs them as one ``cublasGemmStridedBatchedEx``
  called directly (``kernels.cublas``). Everything else stays with CuPy's ``matmul``: routing
  all eager products through the direct calls cost more host time per product on an H200
  (76-96 us against CuPy's 30 us for a 64x100 @ 100x10 product, ``dispatch_overhead.py``).
- bfloat16 needs CuPy >= 14 with ``ml_dtypes`` (CuPy's optional bfloat16 support).

This ``matmul`` is the CUDA override of ``ember.ops.linalg.MatMul`` (registered there).

>>> state_applied() is None or isinstance(state_applied(), int)
True
"""

from __future__ import annotations

import warnings

import numpy as np

from ... import _caches
from .. import cuda as _flags
from . import fused

_COMPUTE_TYPE_DEFAULT = 1  # CuPy's enum values (cupy/_core/_routines_linalg.pxd)
_COMPUTE_TYPE_TF32 = 7

_applied: list = [None]  # the _flags.state["version"] last applied to CuPy
_setter: list = []  # [set_compute_type function or None]
_warned: set = set()  # {"no setter"} once that warning was given


def state_applied():
    """The precision-setting version CuPy was last given (None before the first product)."""
    return _applied[0]


def _find_setter(xp):
    """CuPy's ``set_compute_type`` and its enum constants, wherever this version keeps them."""
    core = getattr(xp, "_core", None)
    for mod in (getattr(core, "_routines_linalg", None), core):
        fn = getattr(mod, "set_compute_type", None)
        if fn is not None:
            lin = getattr(core, "_routines_linalg", mod)
            return (
                fn,
                getattr(lin, "COMPUTE_TYPE_DEFAULT", _COMPUTE_TYPE_DEFAULT),
                getattr(lin, "COMPUTE_TYPE_TF32", _COMPUTE_TYPE_TF32),
            )
    return None


def apply_precision(xp) -> None:
    """Give CuPy the current TF32 choice for float32 GEMMs (no-op when it has it already)."""
    version = _flags.state["version"]
    if _applied[0] == version:
        return
    if not _setter:
        _setter.append(_find_setter(xp))
    found = _setter[0]
    tf32 = _flags.matmul_allows_tf32()
    if found is None:  # no setter in this CuPy: its start-up CUPY_TF32 choice stays
        if hasattr(xp, "ElementwiseKernel") and "no setter" not in _warned:
            _warned.add("no setter")
            warnings.warn(
                "ember: this CuPy has no set_compute_type, so ember.backends.cuda.matmul."
                "allow_tf32 and set_float32_matmul_precision do not reach its float32 GEMMs; "
                "they follow the CUPY_TF32 environment variable CuPy started with (set it before "
                "starting Python to choose)",
                RuntimeWarning,
                stacklevel=3,
            )
    else:
        fn, default, tf32_type = found
        with warnings.catch_warnings():  # CuPy warns (and keeps full float32) below sm_80
            warnings.simplefilter("ignore")
            fn(np.float32, tf32_type if tf32 else default)
    _applied[0] = version


def matmul(xp, a, b):
    """``a @ b`` on the GPU with NumPy's semantics (what ``MatMul.forward`` runs there)."""
    if _applied[0] != _flags.state["version"] and fused(xp):
        apply_precision(xp)
    if a.ndim > 2 and b.ndim == 2 and a.shape[-1] == b.shape[0] > 0:
        # batch @ matrix: one 2-D GEMM over all rows (16-bit stays on tensor cores)
        out = xp.matmul(a.reshape(-1, a.shape[-1]), b)
        out = out.reshape(a.shape[:-1] + (b.shape[1],))
    else:
        out = xp.matmul(a, b)
    return out if out.dtype == a.dtype else out.astype(a.dtype)  # MatMul's dtype is a's


def _forget() -> None:
    """Look CuPy's setter up again, and give it the TF32 choice again on the next product."""
    _setter.clear()
    _applied[0] = None


_caches.register("CuPy's TF32 setter", _forget, _setter.__len__)

__all__ = ["matmul", "apply_precision"]
