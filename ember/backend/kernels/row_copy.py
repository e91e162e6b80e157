"""A strided array copied into C order, 16 bytes a thread, where its rows are contiguous.

Attention splits and merges heads by transposing the axes in front of the last one:
``(B, S, H, D) -> (B, H, S, D)``. Each row of ``D`` values stays contiguous, and only the
rows move. CuPy's copy takes one element a thread and works out that element's place from
every axis. Here each thread moves one 16-byte piece of a row (8 bytes or 4 where the rows'
alignment allows no more) and works out the row's place once. The source's axes in front of
its contiguous tail are merged where their strides allow, and up to four remain.

``c_order`` returns ``NotImplemented`` where it does not serve: no kernels in ``xp``, a last
axis that is not contiguous, rows not a multiple of 4 bytes or not aligned to 4, more than
four outer axes after merging. The caller copies with CuPy then.

>>> c_order(np, np.ones((2, 3)).T)
NotImplemented
"""

from __future__ import annotations

import math

import numpy as np

from ... import _caches
from . import address, cached, fused

BLOCK = 256
MAX_BLOCKS = 65535
OUTER = 4  # outer axes the kernel walks
_WORD = {16: "uint4_t", 8: "unsigned long long", 4: "unsigned int"}

_SOURCE = """
struct alignas(16) uint4_t {{ unsigned int w[4]; }};
typedef {word} W;
extern "C" __global__ void ember_row_copy_{width}(long long src_, W* dst, long long n,
    long long per_row, long long d1, long long d2, long long d3,
    long long s0, long long s1, long long s2, long long s3) {{
  const char* src = (const char*)src_;  // a strided array's first element: passed as an address
  long long step = (long long)blockDim.x * gridDim.x;
  for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < n; c += step) {{
    long long r = c / per_row;
    long long off = (c - r * per_row) * {width};
    off += (r % d3) * s3; r /= d3;
    off += (r % d2) * s2; r /= d2;
    off += (r % d1) * s1; r /= d1;
    off += r * s0;
    dst[c] = *(const W*)(src + off);
  }}
}}
"""


def source(width: int) -> str:
    """The kernel moving ``width`` bytes a thread (16, 8 or 4).

    >>> "ember_row_copy_16" in source(16)
    True
    """
    return _SOURCE.format(word=_WORD[width], width=width)


def _layout(shape: tuple, strides: tuple, item: int):
    """``(row bytes, [(size, byte stride)] of the outer axes, merged)`` or None."""
    if not shape or strides[-1] != item:
        return None
    dims = [(n, s) for n, s in zip(shape, strides) if n != 1]
    row = item
    while dims and dims[-1][1] == row:  # the contiguous tail
        row *= dims.pop()[0]
    merged: list = []
    for n, s in dims:
        if merged and merged[-1][1] == s * n:
            merged[-1] = (merged[-1][0] * n, s)
        else:
            merged.append((n, s))
    return row, merged


def _plan(shape: tuple, strides: tuple, itemsize: int, align: int):
    """``(width, pieces, trailing kernel arguments)`` for a layout whose first element is
    aligned to ``align`` bytes, or () where the kernel does not serve it."""
    layout = _layout(shape, strides, itemsize)
    if layout is None or len(layout[1]) > OUTER:
        return ()
    row, outer = layout
    fits = (w for w in (16, 8, 4) if w <= align and row % w == 0)
    width = next((w for w in fits if all(s % w == 0 for _, s in outer)), 0)
    if not width:
        return ()
    outer = [(1, 0)] * (OUTER - len(outer)) + outer
    n = row * math.prod(d for d, _ in outer) // width
    i64 = np.int64
    args = (i64(n), i64(row // width), *[i64(d) for d, _ in outer[1:]], *[i64(s) for _, s in outer])
    return width, n, args


_PLANS: dict = {}  # (shape, strides, itemsize, alignment) -> _plan
_caches.register("row copy plans", _PLANS.clear, _PLANS.__len__)


def c_order(xp, a, shape: tuple | None = None):
    """A C-contiguous copy of ``a``'s values in C order (a new array of ``a``'s dtype and of
    ``shape``, ``a``'s own by default), or NotImplemented."""
    if not fused(xp) or a.size == 0:
        return NotImplemented
    base = address(a)
    key = (a.shape, a.strides, a.itemsize, 16 if base % 16 == 0 else base & -base)
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) >= 4096:
            _PLANS.clear()
        plan = _PLANS[key] = _plan(*key)
    if not plan:
        return NotImplemented
    width, n, args = plan
    out = xp.empty(a.shape if shape is None else shape, a.dtype)
    k = cached(("row_copy", width), lambda: xp.RawKernel(source(width), f"ember_row_copy_{width}"))
    k((max(1, min(-(-n // BLOCK), MAX_BLOCKS)),), (BLOCK,), (np.int64(base), out, *args))
    return out


__all__ = ["c_order", "source"]
