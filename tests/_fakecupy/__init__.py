"""A strict fake CuPy for CPU CI: CuPy's surface, as strict as CuPy, running on NumPy.

The ``fake_cuda`` fixture (``tests/conftest.py``) installs this package as ember's cuda backend
and as ``cupy`` / ``cupyx`` in ``sys.modules``; without a GPU the suite runs its cuda cases on
it. What real CuPy lacks, the fake lacks: its rules come from ``tests/cupy_manifest.json``, made
by ``tools/cupy_manifest.py`` from the installed ``cupy`` package (``tests/test_fakecupy.py``
regenerates and diffs it), so a call that would fail on a GPU fails here first.

What it imitates (where the rule comes from):

- **Names** (manifest ``namespaces``): ``cupy``, ``cupy.linalg``, ``cupy.fft``, ``cupy.random``,
  ``cupy.lib.stride_tricks``, ``cupy.cuda`` (+ ``runtime``, ``device``) and ``cupyx`` have
  exactly CuPy's names; another name raises ``AttributeError``.
- **Signatures** (manifest, read with ``inspect`` or from Cython docstrings): every function and
  ndarray method binds its arguments against CuPy's signature first, so a keyword CuPy lacks
  raises ``TypeError`` (``clip(..., casting=)``, ``as_strided(..., writeable=)``, ``item(0)``).
- **Arrays** (``_array.py``): ``ndarray`` holds a NumPy array by composition (not a subclass);
  its members are CuPy's (``flags`` has only ``c_contiguous`` / ``f_contiguous`` / ``owndata``;
  no ``__index__``, no ``ctypes``); ``np.asarray(x)`` raises CuPy's ``TypeError``; NumPy
  functions and ufuncs on it dispatch to the fake's own (``__array_function__`` /
  ``__array_ufunc__``, CuPy's rules); indexing gives device arrays (0-d, not scalars), and views
  share memory; a function that needs no copy (``asarray``, ``ascontiguousarray`` of a
  contiguous array) returns its input itself; assigning a host array into a slice raises as in
  CuPy.
- **Devices**: ``DEVICE_COUNT`` GPUs; results go to the current GPU; an array from another GPU
  raises (no peer access), so do host arrays in device operations.
- **Ufuncs** (manifest ``ufuncs``): result dtypes from CuPy's loop tables and its resolution
  rule (``_ufunc.py``), CuPy's call keywords only, CuPy's refused loops, and the private
  ufuncs behind public functions (``cupy.where`` has no bfloat16 loop); ``ufunc.at`` /
  ``cupyx.scatter_add`` only for the dtypes CuPy's compiled code accepts (manifest
  ``compiled``: no bfloat16, no int8/int16, ...).
- **Observed on a GPU** (manifest ``observed``): batched bfloat16 ``matmul`` raises; cuBLAS
  calls (``matmul``, ``@``, ``dot``, ``einsum``...) raise while a stream captures.
- **Memory**: a pool per GPU (``used_bytes`` / ``total_bytes`` / ``free_all_blocks``),
  ``cuda.set_allocator`` / ``using_allocator``; pinned host memory from ``cupyx.empty_pinned``
  (``runtime.pointerGetAttributes`` reports it).
- **Streams and graphs** (``_cuda.py``, ``_gpu.py``): stream capture records launches and
  ``Graph.launch()`` replays them; a capture runs nothing (writes to older memory are undone);
  host transfers and synchronizations while capturing raise with CuPy's messages.
- **NCCL** (``_nccl.py``): ``cupy.cuda.nccl`` with CuPy 14's names, constants, signatures
  and errors, for a world of one rank; its calls follow raw pointers to the arrays behind them
  and are recorded into a capture when their stream joined one (an event recorded in the
  capture and waited for), and ``end_capture`` refuses a forked stream's unjoined work.
- **Kernels** (``_kernels.py``): with ``reset(kernels=True)``, ``ElementwiseKernel`` and
  ``RawKernel`` compile ember's CUDA sources with g++ (``tests/backend/_emulator.py``), so the
  fused GPU paths run on the fake; otherwise those two names are absent and ember takes its
  NumPy-style path.

What it cannot catch: GPU numerics beyond dtype rules (NumPy does the arithmetic; cuBLAS,
cuDNN, TF32 and atomics ordering are not modelled), NumPy-backed functions returning NumPy's
dtype where CuPy's function would differ, CuPy functions missing a dtype NumPy supports (other
than those recorded), asynchrony and races, CUDA compile errors of kernel sources (the g++
emulation accepts C++), cuBLAS calls made through ``ctypes`` (``ember.backend.kernels.cublas``),
and signatures CuPy does not expose (``"unknown"`` in the manifest: not checked).
"""

from __future__ import annotations

import functools as _functools
import sys as _sys
import types as _types

import numpy as _np

from . import _cuda, _cupyx, _gpu, _manifest, _methods, _nccl, _random
from ._array import ndarray
from ._gpu import DEVICE_COUNT
from ._gpu import state as _state
from ._namespace import getter as _getter
from ._namespace import module as _module

# Test hooks (not CuPy names): reset, strict_numpy, kernels_on, DEVICE_COUNT, cupyx, _state.
HOOKS = ("reset", "strict_numpy", "kernels_on", "DEVICE_COUNT", "cupyx", "HOOKS")
assert _methods  # imported to complete ndarray

_flags = {"kernels": False}


def kernels_on() -> bool:
    """Whether ``ElementwiseKernel`` / ``RawKernel`` (g++-emulated) are offered."""
    return _flags["kernels"]


@_functools.cache
def _sub(path: str) -> _types.ModuleType:
    if path == "cupy.cuda":
        over = dict(_cuda.CUDA, runtime=_sub("cupy.cuda.runtime"), device=_sub("cupy.cuda.device"))
        mod = _module(path, over, _SUBMODULES)
        names = mod.__getattr__

        def cuda_getattr(name: str):  # nccl: a submodule CuPy loads on request (no manifest name)
            return _nccl if name == "nccl" else names(name)

        mod.__getattr__ = cuda_getattr
        return mod
    if path == "cupy.cuda.runtime":
        return _module(path, _cuda.RUNTIME, _SUBMODULES)
    if path == "cupy.cuda.device":
        return _module(path, _cuda.DEVICE, _SUBMODULES)
    if path == "cupy.random":
        return _module(path, _random.RANDOM, _SUBMODULES)
    if path == "cupyx":
        return _module(path, _cupyx.CUPYX, _SUBMODULES)
    if path == "cupy.lib":
        return _module(path, {"stride_tricks": _sub("cupy.lib.stride_tricks")}, _SUBMODULES)
    return _module(path, {}, _SUBMODULES)


_SUBMODULES = {
    p: _functools.partial(_sub, p)
    for p in (
        "cupy.cuda",
        "cupy.cuda.runtime",
        "cupy.cuda.device",
        "cupy.random",
        "cupy.linalg",
        "cupy.fft",
        "cupy.lib",
        "cupy.lib.stride_tricks",
        "cupyx",
    )  # fmt: skip
}


class _ComputeTypes:
    """``cupy._core._routines_linalg``: records ``set_compute_type`` calls."""

    def __init__(self) -> None:
        self._mod = _module("cupy._core._routines_linalg", {
            "set_compute_type": self.set_compute_type,
            "get_compute_type": self.get_compute_type,
        }, _SUBMODULES)  # fmt: skip
        self.calls: list = []
        self._types: dict = {}

    def set_compute_type(self, dtype, compute_type) -> None:
        self.calls.append((_np.dtype(dtype), compute_type))
        self._types[_np.dtype(dtype)] = compute_type

    def get_compute_type(self, dtype):
        return self._types.get(_np.dtype(dtype), self._mod.COMPUTE_TYPE_DEFAULT)

    def __getattr__(self, name):
        return getattr(self._mod, name)


_core = _types.SimpleNamespace(_routines_linalg=_ComputeTypes())


def _kernel_classes() -> dict:
    from . import _kernels

    return {"ElementwiseKernel": _kernels.ElementwiseKernel, "RawKernel": _kernels.RawKernel}


_OVERRIDES = {"ndarray": ndarray, "get_default_memory_pool": lambda: _gpu.pool}
_names = _getter("cupy", _OVERRIDES, _SUBMODULES)


def __getattr__(name: str):
    if name in ("ElementwiseKernel", "RawKernel"):
        if not _flags["kernels"]:
            raise AttributeError(
                f"fakecupy: {name} is offered only with reset(kernels=True) (see the docstring)"
            )
        return _kernel_classes()[name]
    return _names(name)


def __dir__():
    return sorted(_manifest.NAMESPACES["cupy"])


cupyx = _sub("cupyx")
cuda = _sub("cupy.cuda")


def reset(kernels: bool = False) -> _types.ModuleType:
    """Fresh state (current GPU 0, empty pool, default allocator, no capture, no pinned
    buffers); ``kernels`` offers the g++-emulated kernel classes. Returns this module."""
    mod = _sys.modules[__name__]
    for name in [n for n in vars(mod) if not n.startswith("_")]:
        if name not in HOOKS and name not in _manifest.NAMESPACES["cupy"]:
            delattr(mod, name)  # left by a test (``fake_cuda.graphs = ...``)
    _gpu.reset()
    _cupyx.reset()
    _random._global.clear()
    _cuda.Stream._current.clear()
    _nccl._group.update(depth=0, calls=[])
    _flags["kernels"] = bool(kernels)
    _core._routines_linalg.calls.clear()
    return mod


_IMPLICIT = _manifest.MESSAGES["implicit_conversion"]


def _holds_device_array(obj) -> bool:
    if type(obj) is ndarray:
        return True
    return type(obj) in (list, tuple) and any(_holds_device_array(e) for e in obj)


def _strict(fn):
    @_functools.wraps(fn)
    def call(obj, *args, **kwargs):
        if _holds_device_array(obj):
            raise TypeError(_IMPLICIT)
        return fn(obj, *args, **kwargs)

    return call


def strict_numpy(monkeypatch) -> None:
    """Make ``numpy.asarray`` & co. refuse device arrays on lists too (NumPy would call
    ``__array__``, which raises, for an array; a list of them it would turn into objects)."""
    for name in ("array", "asarray", "asanyarray", "ascontiguousarray"):
        monkeypatch.setattr(_np, name, _strict(getattr(_np, name)))


__all__ = ["DEVICE_COUNT", "cupyx", "kernels_on", "reset", "strict_numpy"]
