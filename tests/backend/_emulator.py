"""Run ember's CUDA kernel sources on the CPU, to test them on machines without a GPU.

``emulated_xp()`` is NumPy plus CuPy's kernel classes, implemented by compiling the very
source strings ember hands to CuPy with g++:

- ``ElementwiseKernel(in_params, out_params, operation, name)``: the operation becomes the body
  of a C++ loop over the elements, with in-params as ``const`` values and out-params as
  references, the way CuPy's generated kernel declares them (placeholder types such as ``T``
  bound from the arrays' dtypes; float32 / float64 only);
- ``RawKernel(code, name)``: compiled and launched as the fake CuPy's (``_fakecupy._kernels``):
  a prelude maps CUDA's built-ins to C++ (``__syncthreads()`` a barrier of the block's
  threads, which are fibers on one OS thread, ``__shared__`` a static, ``atomicAdd`` /
  ``__threadfence`` C++ atomics, float16's PTX conversions C++'s ``_Float16``), and each launch
  runs the blocks one after another in a scrambled order (a GPU promises none). Only the
  features ember's kernels use are mapped.

This checks the kernels' arithmetic, indexing and the Python glue that launches them, and each
``RawKernel`` argument against its parameter's size and kind; NVRTC compiles every source too
(``_nvrtc``). It says nothing about speed, memory coalescing or warp behaviour.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import types

import numpy as np

from . import _nvrtc

CXX = shutil.which("g++")
_CACHE = os.path.join(tempfile.gettempdir(), f"ember-cuda-emu-{os.getuid()}")
_libs: dict = {}

_ARRAY_CTYPES = {  # element types of ElementwiseKernel arrays (ember's kernels use these)
    np.float32: "float",
    np.float64: "double",
    np.uint16: "unsigned short",
    np.uint32: "unsigned int",
    np.uint64: "unsigned long long",
}
_CTYPES = {"float32": "float", "float64": "double", "int32": "int", "int64": "long long"}
_CTYPE_OF = {
    np.dtype(np.uint64): ctypes.c_ulonglong,
    np.dtype(np.int64): ctypes.c_longlong,
    np.dtype(np.int32): ctypes.c_int,
    np.dtype(np.float32): ctypes.c_float,
    np.dtype(np.float64): ctypes.c_double,
}


def _compile(source: str) -> ctypes.CDLL:
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    lib = _libs.get(digest)
    if lib is not None:
        return lib
    os.makedirs(_CACHE, exist_ok=True)
    so = os.path.join(_CACHE, f"k{digest}.so")
    if not os.path.exists(so):
        src = os.path.join(_CACHE, f"k{digest}.cpp")
        with open(src, "w") as f:
            f.write(source)
        tmp = f"{so}.{os.getpid()}.tmp"
        cmd = [CXX, "-std=c++20", "-O1", "-shared", "-fPIC", "-pthread", src, "-o", tmp]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode:
            raise RuntimeError(f"g++ failed on kernel source:\n{run.stderr}\n{source}")
        os.replace(tmp, so)
    lib = _libs[digest] = ctypes.CDLL(so)
    return lib


def _params(spec: str) -> list:
    out = []
    for p in filter(None, (s.strip() for s in spec.split(","))):
        words = p.split()
        raw = words[0] == "raw"
        if raw:
            words = words[1:]
        out.append((words[0], words[1], raw))
    return out


class ElementwiseKernel:
    """CuPy's ElementwiseKernel, compiled for the CPU (same-shape arrays, float32/float64)."""

    def __init__(self, in_params, out_params, operation, name="kernel", **kwargs) -> None:
        self.ins, self.outs = _params(in_params), _params(out_params)
        self.operation, self.name = operation, name
        self.spec = (in_params, out_params, operation, name, kwargs.get("preamble", ""))
        self.kwargs = kwargs
        self.calls = 0

    def _source(self, types_: dict) -> str:
        lines = ["#include <cmath>", "using std::sqrt; using std::exp; using std::log;"]
        lines += [f"typedef {c} {t};" for t, c in types_.items()]
        lines.append('extern "C" void ember_kernel(long long n, void** a, const double* s) {')
        lines.append("  for (long long i_ = 0; i_ < n; ++i_) {")
        ai = si = 0
        for typ, name, _ in self.ins:
            c = types_.get(typ, _CTYPES.get(typ))
            if typ in types_:
                lines.append(f"    const {c} {name} = (({c}*)a[{ai}])[i_];")
                ai += 1
            else:
                lines.append(f"    const {c} {name} = ({c})s[{si}];")
                si += 1
        for typ, name, _ in self.outs:
            c = types_[typ]
            lines.append(f"    {c}& {name} = (({c}*)a[{ai}])[i_];")
            ai += 1
        lines += ["    {", self.operation + ";", "    }", "  }", "}"]
        return "\n".join(lines)

    def __call__(self, *args):
        assert len(args) == len(self.ins) + len(self.outs), "wrong number of arguments"
        types_: dict = {}
        arrays, scalars, writeback = [], [], []
        shape = None
        for (typ, name, _), arg in zip(self.ins + self.outs, args):
            if isinstance(arg, np.ndarray):
                c = _ARRAY_CTYPES[arg.dtype.type]
                if types_.setdefault(typ, c) != c:
                    raise TypeError(f"{self.name}: type {typ} bound to two dtypes")
                if shape is None:
                    shape = arg.shape
                assert arg.shape == shape, f"{self.name}: {name} has shape {arg.shape} != {shape}"
                flat = np.ascontiguousarray(arg)
                if flat is not arg and (typ, name, False) in self.outs:
                    writeback.append((arg, flat))
                arrays.append(flat)
            else:
                assert typ in _CTYPES, f"{self.name}: scalar for {typ} {name}"
                scalars.append(float(arg))
        dtypes = [a.dtype if isinstance(a, np.ndarray) else np.dtype(t)
                  for (t, _, _), a in zip(self.ins + self.outs, args)]  # fmt: skip
        ndim = min(len(shape), 1)  # CuPy folds same-shape contiguous arrays to one dimension
        layouts = [(ndim, True) if isinstance(a, np.ndarray) else None for a in args]
        _nvrtc.check_elementwise(self.spec, tuple(dtypes), tuple(layouts), ndim, self.kwargs)
        lib = _compile(self._source(types_))
        ptrs = (ctypes.c_void_p * max(len(arrays), 1))(*[a.ctypes.data for a in arrays])
        vals = (ctypes.c_double * max(len(scalars), 1))(*scalars)
        lib.ember_kernel(ctypes.c_longlong(int(np.prod(shape))), ptrs, vals)
        for dst, src in writeback:
            dst[...] = src
        self.calls += 1


class RawKernel:
    """CuPy's RawKernel, compiled for the CPU as the fake CuPy's is (``_fakecupy._kernels``: a
    block at a time, its ``blockDim.x`` threads fibers that meet at ``__syncthreads()``)."""

    def __init__(self, code: str, name: str, **kwargs) -> None:
        from tests._fakecupy import _kernels

        self.code, self.name, self.options = code, name, tuple(kwargs.get("options", ()))
        self.types = _kernels._kernel_params(code, name)
        self.lib = _compile(_kernels.raw_source(code, name, self.types))
        self.params = _kernels.param_infos(self.lib, len(self.types))
        self.calls = 0

    def __call__(self, grid, block, args, shared_mem: int = 0) -> None:
        from tests._fakecupy._kernels import check_arguments, launch_blocks

        assert len(grid) == 1 and len(block) == 1, "1-D launches only"
        if not self.calls:  # CuPy compiles on the first launch
            self.resources = _nvrtc.check_raw(self.code, self.name, self.options)
        _nvrtc.check_launch(self.name, grid, block, shared_mem, self.resources)
        cargs = []
        for a in args:
            if isinstance(a, np.ndarray):
                assert a.flags.c_contiguous, f"{self.name}: non-contiguous array argument"
                cargs.append(ctypes.c_void_p(a.ctypes.data))
            else:
                cargs.append(_CTYPE_OF[np.asarray(a).dtype](a))
        check_arguments(self.name, self.types, self.params, args, cargs)
        ptrs = (ctypes.c_void_p * max(len(cargs), 1))(*[ctypes.addressof(c) for c in cargs])
        launch_blocks(self.lib, self.name, int(grid[0]), int(block[0]), ptrs)
        self.calls += 1


class _LinalgRecorder(types.SimpleNamespace):
    """Stands in for ``cupy._core._routines_linalg``: records ``set_compute_type`` calls."""

    COMPUTE_TYPE_DEFAULT = 1
    COMPUTE_TYPE_TF32 = 7

    def __init__(self) -> None:
        super().__init__(calls=[])

    def set_compute_type(self, dtype, compute_type) -> None:
        self.calls.append((np.dtype(dtype), compute_type))


def emulated_xp() -> types.ModuleType:
    """A module that is NumPy plus emulated ``ElementwiseKernel`` / ``RawKernel`` (and a
    recording ``_core._routines_linalg.set_compute_type``)."""
    mod = types.ModuleType("emulated_cupy")
    mod.__getattr__ = lambda name: getattr(np, name)
    mod.ElementwiseKernel = ElementwiseKernel
    mod.RawKernel = RawKernel
    mod._core = types.SimpleNamespace(_routines_linalg=_LinalgRecorder())
    mod.cuda = types.SimpleNamespace(
        Device=lambda index=0: contextlib.nullcontext(),
        get_current_stream=lambda: types.SimpleNamespace(ptr=0),
    )
    return mod


def available() -> bool:
    return CXX is not None
