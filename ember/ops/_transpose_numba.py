"""A numba kernel for the transposing copy of a large matrix on the CPU.

NumPy copies ``a.T`` into C order element by element along the output's rows, reading ``a``
down its columns: on a (512, 4608) float32 matrix (a 512x512 3x3 convolution's weight as
(O, C * 9)) that took 5.2-5.4 ms on this 2-core CPU, 1.8 GB/s. ``transposed`` copies it in
16x16 blocks, bands of the output over numba's threads: 1.3 ms (256x256 3x3: 0.49 -> 0.28). It
serves Winograd's weight transform (``ember.ops._winograd``), which wants the weight with its
output channels last.

Where the kernel does not serve (numba off or compiling, other dtypes, small matrices: under
``MIN_SIZE`` values NumPy's copy is as fast) ``transposed`` answers None and NumPy copies.

>>> a = np.arange(6.0).reshape(2, 3)
>>> t = transposed(a)
>>> t is None or (t == a.T).all()
True
"""

from __future__ import annotations

import numpy as np

from ..backend import jit as _jit

SOURCE = (
    _jit.HEADER
    + """from numba import prange

OPTS = dict(cache=True, nogil=True, error_model="numpy", parallel=True)
SIGS = [types.void(ro(t, 2), rw(t, 2)) for t in ("float32", "float64")]
BLOCK = 16  # (512, 4608) float32: 1.3 ms; 8, 32 and 64, or the loops the other way: 1.4-2.3


@njit(SIGS, **OPTS)
def transpose(a, out):
    # out[j, i] = a[i, j] in BLOCK x BLOCK blocks; each thread writes whole block rows of out
    rows, cols = a.shape
    for b in prange((cols + BLOCK - 1) // BLOCK):
        j0 = b * BLOCK
        j1 = min(j0 + BLOCK, cols)
        for i0 in range(0, rows, BLOCK):
            i1 = min(i0 + BLOCK, rows)
            for i in range(i0, i1):
                for j in range(j0, j1):
                    out[j, i] = a[i, j]


kernel = transpose
"""
)

MIN_SIZE = 1 << 16  # below this NumPy's copy is about as fast (the weight of 64x64 3x3: 12 us)


def transposed(a):
    """``np.ascontiguousarray(a.T)`` for a C-contiguous 2-D float32 / float64 host array of at
    least ``MIN_SIZE`` values, copied in blocks on numba's threads; None where the kernel does
    not serve."""
    if type(a) is not np.ndarray or a.ndim != 2 or a.size < MIN_SIZE or not a.flags.c_contiguous:
        return None
    mod = _jit.float_module("transpose", SOURCE, a.dtype)
    if mod is None:
        return None
    out = np.empty((a.shape[1], a.shape[0]), a.dtype)
    mod.transpose(a, out)
    return out
