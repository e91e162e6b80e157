"""A numba kernel for ``ReluGrad`` on the CPU (the op's override in
``ember.ops.elementwise.activations``): one pass over the memory of ``g`` and ``y`` in any
dense layout, where NumPy's bit-exact body makes three (a comparison, a widening subtract, a
bitwise and). ``0 if y <= 0 else g`` writes +0.0 where masked and ``g`` where ``y`` is NaN, the
bits of the op's forward.

numba is optional: ``kernels(dtype)`` is None without it, with ``EMBER_JIT=0``, for dtypes other
than float32 and float64, and while the module compiles in the background
(``ember.backend.jit``); the op's NumPy body runs then.
"""

from __future__ import annotations

import numpy as np

from ..backend import jit as _jit

SOURCE = (
    _jit.HEADER
    + """
@njit(
    [types.void(ro(t), ro(t), rw(t)) for t in ("float32", "float64")],
    cache=True,
    nogil=True,
    error_model="numpy",
)
def kernel(g, y, out):
    z = g.dtype.type(0)
    for i in range(g.size):
        out[i] = z if y[i] <= 0 else g[i]
"""
)

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def kernels(dtype):
    """The compiled module (``kernel``) when numba serves ``dtype`` and it is ready, else None.

    >>> kernels(np.dtype(np.int64)) is None
    True
    """
    if dtype not in _DTYPES:
        return None
    return _jit.module("relu_grad", SOURCE)


def relu_grad(g, y):
    """``ReluGrad``'s result in ``g``'s memory layout, or None where the kernel does not serve
    (not ready, another dtype, ``g`` and ``y`` in different or non-dense layouts).

    >>> g = np.array([1.0, -2.0, 3.0], np.float32)
    >>> r = relu_grad(g, np.array([1.0, 0.0, np.nan], np.float32))
    >>> r is None or r.tolist() == [1.0, 0.0, 3.0]
    True
    """
    mod = kernels(g.dtype) if g.dtype == y.dtype and g.strides == y.strides else None
    if mod is None:
        return None
    out = np.empty_like(g)  # the same strides for a dense layout (order "K")
    flat = [a.ravel(order="K") for a in (g, y, out)]
    if out.strides != g.strides or not np.may_share_memory(flat[2], out):
        return None  # not dense in any order: ravel copied
    if not all(f.flags.c_contiguous for f in flat):
        return None
    mod.kernel(*flat)
    return out
