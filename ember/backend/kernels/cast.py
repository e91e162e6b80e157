"""float32 <-> bfloat16 / float16 conversion on the GPU, 16 bytes per access.

Mixed precision converts every weight and activation a product reads, and each gradient back:
an eager bfloat16-autocast Transformer step makes about 150 casts. CuPy's ``astype`` is a
generated elementwise copy, one element a thread, with the host cost of CuPy's generic kernel
call. Here a cast of a C-contiguous array is one ``RawKernel`` of ``vectorized.py`` (a thread
converts four values: one 16-byte load of float32s, one 8-byte access of 16-bit values), whose
launch plan is cached per shape.

A float32 value is rounded to the 16-bit type once, to nearest even (``half_io``: NaN stays
NaN, overflow becomes infinity), as CuPy's and NumPy's conversions do; widening is exact.

This is the CUDA override of ``ember.ops.elementwise.cast.Cast`` (registered there); it
returns ``NotImplemented`` for other dtype pairs, other layouts (``astype`` keeps a view's
memory order) and where ``xp`` builds no kernels, and CuPy's ``astype`` runs.

>>> cast(np, np.ones(4, np.float32), np.float16)
NotImplemented
"""

from __future__ import annotations

import numpy as np

from . import _STORAGE, cached, fused, half_io
from .vectorized import Vectorized

_SERVED = {("f32", "bf16"), ("f32", "f16"), ("bf16", "f32"), ("f16", "f32")}


def _kernel(src: str, dst: str) -> Vectorized:
    def build():
        if src == "f32":
            typed = ("float32 x", "uint16 y", f"y = ember_st_{dst}(x);")
        else:
            typed = ("uint16 x", "float32 y", f"y = ember_ld_{src}(x);")
        kind = dst if src == "f32" else src
        return Vectorized(*typed, f"ember_cast_{src}_{dst}", preamble=half_io(kind))

    return cached(("cast", src, dst), build)


def cast(xp, x, dtype, out=None):
    """``x.astype(dtype)`` (a new C-contiguous array, or into ``out``), or NotImplemented."""
    dtype = np.dtype(dtype)
    pair = (_STORAGE.get(x.dtype), _STORAGE.get(dtype))
    if pair not in _SERVED or not x.flags.c_contiguous or x.size == 0 or not fused(xp):
        return NotImplemented
    if out is None:
        out = xp.empty(x.shape, dtype)
    elif out.dtype != dtype or out.shape != x.shape or not out.flags.c_contiguous:
        return NotImplemented
    return out if _kernel(*pair).run(xp, x, out) else NotImplemented


__all__ = ["cast"]
