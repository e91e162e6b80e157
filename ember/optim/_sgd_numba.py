"""A numba kernel for SGD's update on the CPU (``SGD``'s override in ``ember.optim.sgd``).

``step(p, g, b, wd, momentum, damp, lr, decay, with_momentum, nesterov, dampen)``: the weight
decay, the momentum buffer and the parameter in one pass over the flat arrays, each element's
operations those of the override's NumPy steps in their order and dtype (``g + wd * p``, ``b *
momentum + g`` or ``+ damp * g``, ``g + momentum * b`` with Nesterov, ``p - g * lr``), the
scalars rounded to the arrays' dtype first, as NumPy rounds a Python float against a float32
array, so its results are NumPy's bit for bit. NumPy's steps make up to eight passes over
memory and allocate three temporaries: ResNet-18's 11M parameters took about 12 ms a step that
way on this 2-core CPU. ``step_parallel`` is the same loop over numba's threads, for large
parameters.

Where ``kernels`` answers None (no numba, other dtypes, or compiling in the background: see
``ember.backend.jit``) the override's NumPy steps run; so do the first step with momentum (the
buffer starts as a copy of the gradient).
"""

from __future__ import annotations

from ..backend import jit as _jit

SOURCE = (
    _jit.HEADER
    + """from numba import prange

OPTS = dict(cache=True, nogil=True, error_model="numpy")
FLOATS = ("float32", "float64")
SIGS = [
    types.void(rw(t), ro(t), rw(t), *(getattr(types, t),) * 4, *(types.boolean,) * 4)
    for t in FLOATS
]


def step(p, g, b, wd, momentum, damp, lr, decay, with_momentum, nesterov, dampen):
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
    return _jit.float_module("sgd", SOURCE, dtype)


__all__ = ["PARALLEL_MIN", "kernels"]
