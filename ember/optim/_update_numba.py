"""numba kernels for the optimizers' CPU updates (the overrides of ``Adam`` in
``ember.optim.adam`` and ``SGD`` in ``ember.optim.sgd``): each a parameter's whole update in one
pass over the flat arrays, each element's operations those of the override's NumPy steps in
their order and dtype, the scalars rounded to the arrays' dtype first (as NumPy rounds a Python
float against a float32 array), so the results are NumPy's bit for bit.

- ``adam(p, g, m, v, c1, b1, c2, b2, s2, eps, k)``: ``m = m * b1 + g * c1``, ``v = v * b2 +
  (g * g) * c2``, ``p -= m / (sqrt(v) / s2 + eps) * k``. NumPy's steps make ten passes over
  memory: the digits model's 14 parameters took about 590 us a step that way.
- ``sgd(p, g, b, wd, momentum, damp, lr, decay, with_momentum, nesterov, dampen)``: ``g + wd *
  p``, ``b * momentum + g`` (or ``+ damp * g``), ``g + momentum * b`` with Nesterov, ``p - g *
  lr``. NumPy's steps make up to eight passes and three temporaries: ResNet-18's 11M parameters
  took about 12 ms a step that way on this 2-core CPU.

Each has a ``_parallel`` form, the same loop over numba's threads, for parameters of
``PARALLEL_MIN`` values or more. Where ``kernels`` answers None (no numba, other dtypes, or
compiling in the background: see ``ember.backend.jit``) the overrides' NumPy steps run.
"""

from __future__ import annotations

from ..backend import jit as _jit

SOURCE = (
    _jit.HEADER
    + """from numba import prange

OPTS = dict(cache=True, nogil=True, error_model="numpy")
FLOATS = ("float32", "float64")
ADAM = [types.void(rw(t), ro(t), rw(t), rw(t), *(getattr(types, t),) * 7) for t in FLOATS]
SGD = [
    types.void(rw(t), ro(t), rw(t), *(getattr(types, t),) * 4, *(types.boolean,) * 4)
    for t in FLOATS
]


def adam(p, g, m, v, c1, b1, c2, b2, s2, eps, k):
    for i in prange(p.size):
        gi = g[i]
        mi = m[i] * b1 + gi * c1
        vi = v[i] * b2 + (gi * gi) * c2
        m[i] = mi
        v[i] = vi
        p[i] = p[i] - mi / (np.sqrt(vi) / s2 + eps) * k


def sgd(p, g, b, wd, momentum, damp, lr, decay, with_momentum, nesterov, dampen):
    for i in prange(p.size):
        gi = g[i]
        if decay:
            gi = gi + wd * p[i]
        if with_momentum:
            bi = b[i] * momentum
            bi = bi + (damp * gi if dampen else gi)
            b[i] = bi
            gi = gi + momentum * bi if nesterov else bi
        p[i] = p[i] - gi * lr


# over numba's threads, and (prange runs as range without parallel=True) on the caller's
adam_parallel = njit(ADAM, parallel=True, **OPTS)(adam)
adam = njit(ADAM, **OPTS)(adam)
sgd_parallel = njit(SGD, parallel=True, **OPTS)(sgd)
sgd = njit(SGD, **OPTS)(sgd)
kernel = adam
"""
)

PARALLEL_MIN = 1 << 15  # parameters this large are updated on numba's threads


def kernels(dtype):
    """The compiled module (``adam``, ``sgd``, each with a ``_parallel`` form) when numba serves
    ``dtype`` and it is ready, else None.

    >>> import numpy as np
    >>> kernels(np.dtype(np.int64)) is None
    True
    """
    return _jit.float_module("optim_updates", SOURCE, dtype)


__all__ = ["PARALLEL_MIN", "kernels"]
