"""NVIDIA's NVRTC behind the test doubles' kernels: every CUDA source they run must compile.

The fake CuPy (``tests/_fakecupy/_kernels.py``) and the kernel emulator (``_emulator.py``) run
ember's kernel sources through g++, which accepts code NVRTC refuses (host-only functions,
C++ library headers, mistyped intrinsics, a kernel name missing from the source) and refuses
code NVRTC accepts (PTX ``asm``). So each source they compile is also compiled here, the way
CuPy compiles it on a GPU machine, for ``sm_90`` (H100 / H200), with no GPU:

- a ``RawKernel`` source as given, with its options;
- an ``ElementwiseKernel`` as the code CuPy's own generator writes for the call's dtypes,
  dimensions and scalars (``cupy._core._kernel._get_elementwise_kernel_code``), after CuPy's
  headers, as ``compile_with_cache`` prepends them;
- CuPy's compiler options (``assemble_cupy_compiler_options``, ``-ftz=true``,
  ``--device-as-default-execution-space``), CUDA's headers from the ``nvidia-cuda-runtime-cu12``
  wheel, and a cubin whose symbols must name the kernel (``get_function`` on a GPU).

A refused source raises ``CompileError`` with NVRTC's log and the source, at the launch (CuPy
compiles on first use). Sources that compiled are remembered on disk. ``available()`` says
whether the real CuPy, NVRTC and the headers are installed (the ``test`` extra installs them);
without them the doubles skip this check.

>>> src = 'extern "C" __global__ void k(float* x) { x[0] = 1; }'
>>> report = check_raw(src, "k")  # it compiles (None: no NVRTC installed)
>>> report is None or report.shared == 0
True
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import io
import os
import re
import tempfile
import types
from typing import NamedTuple

import numpy as np

ARCH = "90"
_CACHE = os.path.join(tempfile.gettempdir(), f"ember-nvrtc-{os.getuid()}")


class CompileError(RuntimeError):
    """NVRTC refused a kernel source (CuPy raises ``cupy.cuda.compiler.CompileException``)."""


@functools.cache
def _cupy():
    """The real CuPy's code generator and compiler (its modules, the compile options and the
    headers ``compile_with_cache`` prepends), or None where they are not installed."""
    try:
        kernel = importlib.import_module("cupy._core._kernel")
        core = importlib.import_module("cupy._core.core")
        carray = importlib.import_module("cupy._core._carray")
        scalar = importlib.import_module("cupy._core._scalar")
        compiler = importlib.import_module("cupy.cuda.compiler")
        compiler._get_nvrtc_version()  # loads the NVRTC library
        runtime = importlib.import_module("nvidia.cuda_runtime")
    except Exception:  # no CuPy, no NVRTC library, or the fake CuPy in sys.modules
        return None
    include = os.path.join(list(runtime.__path__)[0], "include")
    if not os.path.exists(os.path.join(include, "cuda_bf16.h")):
        return None
    options = tuple(
        o
        for o in core.assemble_cupy_compiler_options(())
        if not (o.startswith("-I") and os.path.exists(os.path.join(o[2:], "cuda_runtime.h")))
    )  # CUDA's headers from the wheel that matches NVRTC, not whichever toolkit is installed
    options += (f"-I{include}", "-ftz=true", "--device-as-default-execution-space")
    headers = "".join(f"#include <{h}>\n" for h in core._cupy_header_list)
    return types.SimpleNamespace(
        kernel=kernel, carray=carray, scalar=scalar, ndarray=core.ndarray, compiler=compiler,
        options=options, headers=headers,
    )  # fmt: skip


def available() -> bool:
    """Whether kernel sources are compiled by the real NVRTC too (CuPy, NVRTC, CUDA headers)."""
    return _cupy() is not None


class Report(NamedTuple):
    """ptxas's report of one kernel: registers a thread, static shared bytes, local-memory
    stack frame bytes and bytes spilled to it (stores + loads)."""

    registers: int
    shared: int
    stack: int
    spills: int


def _compile(source: str, name: str, options: tuple) -> Report:
    """Compile ``source`` to an ``sm_90`` cubin that holds ``name`` (CompileError otherwise);
    ptxas's report of ``name``."""
    cp = _cupy()
    compiler = cp.compiler
    extra = tuple(options)
    options = cp.options + extra + (f"-arch=sm_{ARCH}", "--ptxas-options=-v")
    key = (source, name, options, Report._fields)  # a mark holds the report's fields
    digest = hashlib.sha256(repr(key).encode()).hexdigest()[:24]
    mark = os.path.join(_CACHE, f"nvrtc{digest}.ok")
    if os.path.exists(mark):
        with open(mark) as f:
            return Report(*map(int, f.read().split()))
    log = io.StringIO()
    try:
        cubin, _ = compiler._NVRTCProgram(source, "kern.cu", method="cubin").compile(options, log)
    except compiler.CompileException as e:
        raise CompileError(f"NVRTC refused kernel {name!r}:\n{e}\n{source}") from None
    if b"\0" + name.encode() + b"\0" not in cubin:  # the ELF symbol table's entry
        raise CompileError(f"NVRTC: no kernel named {name!r} in the compiled source\n{source}")
    if not _DOUBLE.search(source) and _F64_MATH.search(ptx(source, extra)):
        raise CompileError(
            f"kernel {name!r} does float64 arithmetic though its source names no double: a "
            "literal without 'f' (0.5 for 0.5f) or a double function on a float? "
            f"(float64 is half speed on an H100, 1/64 on most GPUs)\n{source}"
        )
    report = _report(log.getvalue(), name)
    os.makedirs(_CACHE, exist_ok=True)
    with open(mark, "w") as f:
        f.write(" ".join(map(str, report)))
    return report


_DOUBLE = re.compile(r"\bdouble\b|float64")
_F64_MATH = re.compile(r"^\s*(?!ld\.|st\.|mov\.)[a-z][\w.]*\.f64\b", re.M)  # PTX arithmetic


def _report(log: str, name: str) -> Report:
    """``name``'s figures in ptxas's ``-v`` log."""
    entry = next((e for e in log.split("Compiling entry function '")[1:]
                  if e.startswith(f"{name}'")), "")  # fmt: skip

    def number(pattern: str) -> int:
        m = re.search(pattern, entry)
        return int(m.group(1)) if m else 0

    spills = number(r"(\d+) bytes spill stores") + number(r"(\d+) bytes spill loads")
    return Report(
        number(r"Used (\d+) registers"),
        number(r"(\d+) bytes smem"),
        number(r"(\d+) bytes stack frame"),
        spills,
    )


def check_raw(code: str, name: str, options: tuple = ()) -> Report | None:
    """A ``RawKernel(code, name, options)`` source must compile (``CompileError`` otherwise);
    ptxas's report of the kernel (None without NVRTC).

    >>> report = check_raw('extern "C" __global__ void k(float* x) { x[0] = 1; }', "k")
    >>> report is None or (report.stack, report.spills) == (0, 0)
    True
    """
    return _compile(code, name, options) if available() else None


def ptx(source: str, options: tuple = ()) -> str:
    """The PTX NVRTC makes of ``source`` for ``compute_90`` (to read which loads and stores
    the compiler emitted), or "" without NVRTC; ``options`` are added to CuPy's.

    >>> text = ptx('extern "C" __global__ void k(float* x) { x[0] = 1; }')
    >>> "st.global" in text or not available()
    True
    """
    if not available():
        return ""
    cp = _cupy()
    text, _ = cp.compiler._NVRTCProgram(source, "kern.cu", method="ptx").compile(
        cp.options + tuple(options) + (f"-arch=compute_{ARCH}",)
    )
    return text.decode() if isinstance(text, bytes) else text


# one 16-byte global access in PTX, after ``ld`` / ``st``: four 32-bit values or two 64-bit ones
SIXTEEN_BYTES = r"\.global(\.nc)?\.(v4\.[fub]32|v2\.[fub]64) "


# What one launch may ask of an sm_90 GPU (CUDA's programming guide, compute capability 9.0);
# beyond it the driver refuses the launch.
MAX_THREADS = 1024
MAX_BLOCK = (1024, 1024, 64)
MAX_GRID = (2**31 - 1, 65535, 65535)
REGISTERS = 65536  # per block, allocated per warp in steps of 256
SHARED = 48 * 1024  # static + dynamic bytes per block, without the opt-in attribute


class LaunchError(RuntimeError):
    """The driver refused a launch (CuPy raises ``cupy.cuda.driver.CUDADriverError``)."""


def check_launch(name: str, grid: tuple, block: tuple, shared_mem: int, resources) -> None:
    """A RawKernel launch must fit an sm_90 GPU: its grid and block sizes, and, with
    ``resources`` (``check_raw``'s report), the block's registers and shared memory.

    >>> check_launch("k", (1,), (2048,), 0, None)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    LaunchError: CUDA_ERROR_INVALID_VALUE: invalid argument (kernel k: block (2048,) has 2048 ...
    """
    given = tuple(block)
    grid, block = tuple(grid) + (1,) * (3 - len(grid)), given + (1,) * (3 - len(given))
    threads = block[0] * block[1] * block[2]
    bad = None
    if threads > MAX_THREADS or any(not 1 <= b <= m for b, m in zip(block, MAX_BLOCK)):
        bad = f"block {given} has {threads} threads (an sm_90 block: {MAX_BLOCK}, {MAX_THREADS})"
    elif any(not 1 <= g <= m for g, m in zip(grid, MAX_GRID)):
        bad = f"grid {grid} is outside 1..{MAX_GRID}"
    elif resources is not None and resources.shared + shared_mem > SHARED:
        bad = f"{resources.shared} + {shared_mem} bytes of shared memory, at most {SHARED}"
    if bad is not None:
        raise LaunchError(f"CUDA_ERROR_INVALID_VALUE: invalid argument (kernel {name}: {bad})")
    if resources is not None:
        per_warp = -(-max(resources.registers, 1) * 32 // 256) * 256
        if per_warp * -(-threads // 32) > REGISTERS:
            raise LaunchError(
                "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many resources requested for launch "
                f"(kernel {name}: {resources.registers} registers a thread x {threads} threads, "
                f"{REGISTERS} registers a block)"
            )


def check_elementwise(
    spec: tuple, types: tuple, layouts: tuple, loop_ndim: int, kwargs: dict
) -> None:
    """An ``ElementwiseKernel`` launch's generated source must compile (``CompileError``).

    ``spec`` is the kernel's ``(in_params, out_params, operation, name, preamble)``, ``types``
    each parameter's dtype as CuPy decided it, ``layouts`` each argument's ``(ndim,
    c_contiguous)`` as the kernel indexes it (None for a scalar), ``loop_ndim`` the indexer's
    dimensions and ``kwargs`` the kernel's ``loop_prep``, ``after_loop`` and ``options``.

    >>> import numpy as np
    >>> f32 = np.dtype(np.float32)
    >>> check_elementwise(("T x", "T y", "y = x * 2", "twice", ""), (f32, f32),
    ...                   ((1, True), (1, True)), 1, {})
    """
    if not available():
        return
    cp = _cupy()
    kernel = cp.kernel
    in_params, out_params, operation, name, preamble = spec
    ins = kernel._get_param_info(in_params, True)
    outs = kernel._get_param_info(out_params, False)
    dtypes = tuple(np.dtype(t).type for t in types)
    _, _, type_map = kernel._decide_params_type(ins, outs, dtypes[: len(ins)], dtypes[len(ins) :])
    infos = []
    for t, layout in zip(dtypes, layouts):
        if layout is None:
            infos.append(kernel._ArgInfo(3, cp.scalar.CScalar, t, 0, True, True))
        else:
            infos.append(kernel._ArgInfo(1, cp.ndarray, t, layout[0], layout[1], True))
    infos.append(kernel._ArgInfo(2, cp.carray.Indexer, None, loop_ndim, True, True))
    params = ins + outs + (kernel.ParameterInfo("CIndexer _ind", False),)
    code = kernel._get_elementwise_kernel_code(
        tuple(infos), type_map, params, operation, name, preamble,
        kwargs.get("loop_prep", ""), kwargs.get("after_loop", ""),
    )  # fmt: skip
    _compile(cp.headers + code, name, tuple(kwargs.get("options", ())))
