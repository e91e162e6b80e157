"""A numba kernel for Adam's update on the CPU (``Adam``'s override in ``ember.optim.adam``).

``step(p, g, m, v, c1, b1, c2, b2, s2, eps, k)``: the moments and the parameter in one pass
over the flat arrays, each element's operations those of the override's NumPy steps in their
order and dtype (``m = m * b1 + g * c1``, ``v = v * b2 + (g * g) * c2``, ``p -= m / (sqrt(v) /
s2 + eps) * k``, the scalars rounded to the arrays' dtype first, as NumPy rounds a Python
float against a float32 array), so its results are NumPy's bit for bit. NumPy's steps make ten
passes over memory: the digits model's 14 parameters took about 590 us a step that way.
``step_parallel`` is the same loop over numba's threads, for large parameters.

Where ``kernels`` answers None (no numba, other dtypes, or compiling in the background: see
``ember.backend.jit``) the override's NumPy steps run.
"""

from __future__ import annotations

from ..backend import jit as _jit

SOURCE = (
    _jit.HEADER
    + """from numba import prange

OPTS = dict(cache=True, nogil=True, error_model="numpy")
FLOATS = ("float32", "float64")
SIGS = [types.void(rw(t), ro(t), rw(t), rw(t), *(getattr(types, t),) * 7) for t in FLOATS]


def step(p, g, m, v, c1, b1, c2, b2, s2, eps, k):
    for i in prange(p.size):
        gi = g[i]
        mi = m[i] * b1 + gi * c1
        vi = v[i] * b2 + (gi * gi) * c2
        m[i] = mi
        v[i] = vi
        p[i] = p[i] - mi / (np.sqrt(vi) / s2 + eps) * k


step_parallel = njit(SIGS, parallel=True, **OPTS)(step)
step = njit(SIGS, **OPTS)(step)  # prange runs as range without parallel=True
kernel = step
"""
)

PARALLEL_MIN = 1 << 15  # parameters this large are updated on numba's threads


def kernels(dtype):
    """The compiled module (``step``, ``step_parallel``) when numba serves ``dtype`` and it is
    ready, else None.

    >>> import numpy as np
    >>> kernels(np.dtype(np.int64)) is None
    True
    """
    return _jit.float_module("adam", SOURCE, dtype)


__all__ = ["PARALLEL_MIN", "kernels"]
