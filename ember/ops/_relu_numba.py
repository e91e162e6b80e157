"""numba kernels for ``Relu`` and ``ReluGrad`` on the CPU (the ops' overrides in
``ember.ops.elementwise.activations``): one pass over the memory of the arrays in any dense
layout.

- ``relu``: ``0 if x <= 0 else x``, the bits of NumPy's ``maximum(x, 0)`` (NaN stays, -0.0 gives
  +0.0). NumPy's ``maximum`` loop pays for its NaN rules: on 64x32x8x8 float32 it took 100 us
  against the kernel's 19 us (one thread, this 2-core CPU).
- ``relu_grad``: ``0 if y <= 0 else g`` writes +0.0 where masked and ``g`` where ``y`` is NaN,
  the bits of the op's forward, where NumPy's bit-exact body makes three passes (a comparison,
  a widening subtract, a bitwise and).

Each runs on numba's threads from ``PARALLEL_MIN`` values and on the caller's below, where a
parallel launch costs more than the pass (a two-layer net's 64x100 ReLU gradient: 5.7 us on the
threads against 1.5 on one).

numba is optional: ``kernels(dtype)`` is None without it, with ``EMBER_JIT=0``, for dtypes other
than float32 and float64, and while the module compiles in the background
(``ember.backend.jit``); the op's NumPy body runs then.
"""

from __future__ import annotations

import numpy as np

from ..backend import jit as _jit
from ..backend.arrays import writeable

SOURCE = (
    _jit.HEADER
    + """from numba import prange

OPTS = dict(cache=True, nogil=True, error_model="numpy")
SIGS_RELU = [types.void(ro(t), rw(t)) for t in ("float32", "float64")]
SIGS_GRAD = [types.void(ro(t), ro(t), rw(t)) for t in ("float32", "float64")]


def relu(x, out):
    z = x.dtype.type(0)
    for i in prange(x.size):
        out[i] = z if x[i] <= 0 else x[i]


def kernel(g, y, out):
    z = g.dtype.type(0)
    for i in prange(g.size):
        out[i] = z if y[i] <= 0 else g[i]


# over numba's threads from PARALLEL_MIN values; below, prange runs as range (no launch)
relu_parallel = njit(SIGS_RELU, parallel=True, **OPTS)(relu)
relu = njit(SIGS_RELU, **OPTS)(relu)
kernel_parallel = njit(SIGS_GRAD, parallel=True, **OPTS)(kernel)
kernel = njit(SIGS_GRAD, **OPTS)(kernel)
"""
)

# From this many values a kernel runs on numba's threads. Below it the launch costs more than
# the second core gives (this CPU, ReluGrad, parallel / serial / NumPy body: 6400 values 5.7 /
# 1.5 / 6.1 us, 32768 values 6.9 / 3.8 / 15.6, 131072 values 14.4 / 16.9 / 54.2).
PARALLEL_MIN = 1 << 16


def kernels(dtype):
    """The compiled module (``relu``, ``kernel``, each with a ``_parallel`` form) when numba
    serves ``dtype`` and it is ready, else None.

    >>> kernels(np.dtype(np.int64)) is None
    True
    """
    return _jit.float_module("relu", SOURCE, dtype)


def _dense(fn, *arrays, out=None):
    """``fn(*flat inputs, flat out)`` on the arrays' memory, the result in their layout (or in
    ``out``, an array of that layout: the first input itself for an in-place op); None where the
    kernel does not serve (not ready, another dtype, arrays in different or non-dense layouts)."""
    a = arrays[0]
    mod = kernels(a.dtype)
    if mod is None or any(b.dtype != a.dtype or b.strides != a.strides for b in arrays[1:]):
        return None
    if out is None:
        out = np.empty_like(a)  # the same strides for a dense layout (order "K")
    elif type(out) is not np.ndarray or out.dtype != a.dtype or out.shape != a.shape:
        return None
    elif not writeable(out):
        return None
    flat = [b.ravel(order="K") for b in (*arrays, out)]
    if out.strides != a.strides or not np.may_share_memory(flat[-1], out):
        return None  # not dense in any order: ravel copied
    if not all(f.flags.c_contiguous for f in flat):
        return None
    getattr(mod, fn + "_parallel" if a.size >= PARALLEL_MIN else fn)(*flat)
    return out


MIN_SIZE = 8192  # below this NumPy's one-pass maximum is faster, the kernel call's own cost
# counted (this CPU: 1.5 against 4.9 us at 640 values, 4.9 against 7.8 at 4096; 15 against 10
# at 16384, 190 against 42 at 262144)


def relu(x, out=None):
    """``Relu``'s result in ``x``'s memory layout (or written into ``out``, which may be ``x``),
    or None where the kernel does not serve (also below ``MIN_SIZE`` values, where the op's
    NumPy body is faster).

    >>> r = relu(np.array([-1.0, 2.0, np.nan] * MIN_SIZE, np.float32))
    >>> r is None or str(r[:3].tolist()) == "[0.0, 2.0, nan]"
    True
    """
    return _dense("relu", x, out=out) if x.size >= MIN_SIZE else None


def relu_grad(g, y):
    """``ReluGrad``'s result in ``g``'s memory layout, or None where the kernel does not serve.

    >>> g = np.array([1.0, -2.0, 3.0], np.float32)
    >>> r = relu_grad(g, np.array([1.0, 0.0, np.nan], np.float32))
    >>> r is None or r.tolist() == [1.0, 0.0, 3.0]
    True
    """
    return _dense("kernel", g, y)
