"""The fake ``cupyx``: scatter ops with CuPy's dtype rules, pinned host memory.

``empty_pinned`` & co. give NumPy arrays whose memory is registered as pinned, so
``cupy.cuda.runtime.pointerGetAttributes`` reports them as page-locked host memory
(``type == 1``) and ``ndarray.set(..., stream=)`` may copy from them while a stream captures.
"""

from __future__ import annotations

import weakref

import numpy as np

from ._ufunc import scatter_op

_pinned: dict = {}  # id(buffer) -> (weak reference, start address, end address)


def _register(a: np.ndarray) -> np.ndarray:
    start = a.__array_interface__["data"][0]
    key = id(a)
    _pinned[key] = (weakref.ref(a, lambda _: _pinned.pop(key, None)), start,
                    start + max(a.nbytes, 1))  # fmt: skip
    return a


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def is_pinned(a: np.ndarray) -> bool:
    root = _root(a)
    entry = _pinned.get(id(root))
    return entry is not None and entry[0]() is root


def pinned_at(ptr: int) -> bool:
    """Whether host address ``ptr`` lies in pinned memory from this module."""
    return any(start <= ptr < end for _, start, end in _pinned.values())


def empty_pinned(shape, dtype=float, order="C") -> np.ndarray:
    return _register(np.empty(shape, dtype, order))


def zeros_pinned(shape, dtype=float, order="C") -> np.ndarray:
    return _register(np.zeros(shape, dtype, order))


def empty_like_pinned(a, dtype=None, order="K", subok=None, shape=None) -> np.ndarray:
    return _register(np.empty_like(a, dtype=dtype, order=order, shape=shape))


def zeros_like_pinned(a, dtype=None, order="K", subok=None, shape=None) -> np.ndarray:
    return _register(np.zeros_like(a, dtype=dtype, order=order, shape=shape))


def scatter_add(a, slices, value) -> None:
    scatter_op(a, slices, value, "add")


def scatter_max(a, slices, value) -> None:
    scatter_op(a, slices, value, "max")


def scatter_min(a, slices, value) -> None:
    scatter_op(a, slices, value, "min")


def reset() -> None:
    _pinned.clear()


CUPYX = {
    "empty_pinned": empty_pinned,
    "zeros_pinned": zeros_pinned,
    "empty_like_pinned": empty_like_pinned,
    "zeros_like_pinned": zeros_like_pinned,
    "scatter_add": scatter_add,
    "scatter_max": scatter_max,
    "scatter_min": scatter_min,
}
