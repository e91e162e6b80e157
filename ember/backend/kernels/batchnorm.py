"""Batch normalization's two elementwise passes as one CUDA kernel each.

``ember.ops.norm.BatchNormalize`` is ``y = x * scale[c] + shift[c]`` and
``BatchNormGradInput`` is ``dx = k1[c] * g + k2[c] * (x - mean[c]) + k3[c]`` once the op has
computed the per-channel coefficients (``coefficients``, C values, in ``xp``). NumPy / CuPy
code makes three to five passes over memory for these; the kernels here read each input once
and write once, in the accumulation type (float32 for float16 / bfloat16 / float32, float64
for float64). The channel of element ``i`` (C-order index over the logical shape, whatever the
contiguous copies) is ``(i / inner) % C``, ``inner`` the product of the sizes after dim 1. The
per-channel reductions (``BatchMoments``, ``BatchNormSums``) stay ``xp`` code (cuBLAS
matrix-vector products and ``einsum``).

These are the CUDA overrides of those ops (registered in ``ember/ops/norm.py``); each returns
``NotImplemented`` where it does not serve (no kernels in ``xp``, an empty array, a dtype other
than the four floating-point ones), and the op's ``forward`` runs.

>>> channel_affine(np, np.ones((2, 3), np.float32), np.ones(3), np.zeros(3))
NotImplemented
"""

from __future__ import annotations

import numpy as np

from . import acc_dtype, cached, fused, raw_view, served, storage_kind
from .rows import _IO

BLOCK = 256  # threads per block; a grid-stride loop covers any size

_AFFINE = """
extern "C" __global__ void ember_bn_affine(const ST* x, ST* y, const A* scale, const A* shift,
                                           long long n, long long inner, long long nc) {
  long long step = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    long long c = (i / inner) % nc;
    y[i] = st(ld(x[i]) * scale[c] + shift[c]);
  }
}
"""

_GRAD_INPUT = """
extern "C" __global__ void ember_bn_grad_input(const ST* g, const ST* x, ST* dx, const A* mean,
                                               const A* k1, const A* k2, const A* k3,
                                               long long n, long long inner, long long nc) {
  long long step = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    long long c = (i / inner) % nc;
    dx[i] = st(k1[c] * ld(g[i]) + k2[c] * (ld(x[i]) - mean[c]) + k3[c]);
  }
}
"""

_BODIES = {"affine": _AFFINE, "grad_input": _GRAD_INPUT}


def source(kind: str, storage: str) -> str:
    """The CUDA source of ``kind`` ('affine' or 'grad_input') for a storage kind.

    >>> "ember_bn_affine" in source("affine", "f16")
    True
    """
    acc, io = _IO[storage]
    return f"typedef {acc} A;\n" + io + _BODIES[kind]


def _launch(xp, kind: str, out, arrays, coefficients, x):
    storage = storage_kind(x.dtype)
    k = cached(
        ("batchnorm", kind, storage),
        lambda: xp.RawKernel(source(kind, storage), f"ember_bn_{kind}"),
    )
    acc = acc_dtype(x.dtype)
    coef = [xp.ascontiguousarray(a, dtype=acc) for a in coefficients]
    inner = 1
    for s in x.shape[2:]:
        inner *= s
    n = x.size
    grid = min((n + BLOCK - 1) // BLOCK, 65535)
    args = [raw_view(xp, a) for a in arrays] + [raw_view(xp, out)] + coef
    k((grid,), (BLOCK,), tuple(args) + (np.int64(n), np.int64(inner), np.int64(x.shape[1])))
    return out


def _serves(xp, x) -> bool:
    return fused(xp) and x.size > 0 and x.ndim >= 2 and served(x.dtype)


def channel_affine(xp, x, scale, shift):
    """``x * scale + shift`` with ``scale`` / ``shift`` (C,) along dim 1, in one kernel."""
    if not _serves(xp, x):
        return NotImplemented
    x = xp.ascontiguousarray(x)
    return _launch(xp, "affine", xp.empty(x.shape, x.dtype), [x], [scale, shift], x)


def grad_input(xp, g, x, mean, k1, k2, k3):
    """``k1 * g + k2 * (x - mean) + k3`` with per-channel (C,) coefficients, in one kernel."""
    if not _serves(xp, x) or g.dtype != x.dtype:
        return NotImplemented
    g, x = xp.ascontiguousarray(g), xp.ascontiguousarray(x)
    dx = xp.empty(x.shape, x.dtype)
    return _launch(xp, "grad_input", dx, [g, x], [mean, k1, k2, k3], x)
