"""``ElementwiseKernel`` and ``RawKernel`` for the fake CuPy: ember's CUDA sources run on the CPU.

g++ compiles the very sources ember hands to CuPy (``tests/backend/_emulator.py`` compiles and
caches them), with CuPy's rules around them:

- ``ElementwiseKernel``: parameters parsed and typed as CuPy's ``_decide_params_type_core``
  does (placeholder types bound from the arrays, output parameters first; a second dtype for a
  bound type raises CuPy's ``Type is mismatched. ...``), non-raw arrays broadcast, outputs
  allocated when not given, scalars cast to the parameter type; the operation runs in a C++ loop
  with ``i`` the element index, in-params ``const T&``, out-params ``T&``, raw params pointers.
  The ``preamble`` is device code, as in a RawKernel (below: ``__device__`` functions, the
  bit-cast intrinsics, the float16 PTX conversions).
  float16 is ``_Float16``, bfloat16 a struct storing the upper half of a float32 (round to
  nearest even), both converting implicitly to and from float, as CuPy's types do.
- ``RawKernel``: 1-D launches; the blocks run in turn, in a scrambled order (a GPU promises
  none), each block's ``blockDim.x`` threads as fibers on one OS thread that meet at
  ``__syncthreads()`` (between barriers in ascending thread order, then descending, every other
  block the other way round, so a missing barrier shows; a barrier some threads skip fails the
  launch), ``__shared__`` memory a static,
  ``atomicAdd`` / ``__threadfence`` C++ atomics; array arguments pass their memory
  address (strides are the kernel's business, as on a GPU). The PTX conversions ember uses for
  float16 (``cvt.f32.f16`` / ``cvt.rn.f16.f32``) are mapped to C++.

A ``RawKernel`` argument must give its parameter the bytes the driver reads (CuPy packs each
argument by its own size: a Python int is 8 bytes, a float a double), and a launch must fit an
sm_90 GPU (``check_launch``). Launches are recorded while a stream captures (``_gpu``). Each
source is compiled by NVIDIA's NVRTC as well, as CuPy compiles it (``tests/backend/_nvrtc.py``):
g++ checks the arithmetic and the Python around it, NVRTC the CUDA.
"""

from __future__ import annotations

import ctypes
import re
import string
import threading

import numpy as np

from tests.backend import _emulator, _nvrtc

from . import _gpu, _manifest
from ._array import check, ndarray
from ._ufunc import _pyscalar

_CTYPES = {
    "bool": "bool",
    "int8": "signed char",
    "uint8": "unsigned char",
    "int16": "short",
    "uint16": "unsigned short",
    "int32": "int",
    "uint32": "unsigned int",
    "int64": "long long",
    "uint64": "unsigned long long",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "float32": "float",
    "float64": "double",
}

_PRELUDE = r"""
#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>
typedef _Float16 float16;
struct bfloat16 {
  unsigned short bits;
  bfloat16() = default;
  bfloat16(float f) {
    unsigned int u; std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) { bits = (unsigned short)((u >> 16) | 0x40u); return; }
    u += 0x7fffu + ((u >> 16) & 1u);
    bits = (unsigned short)(u >> 16);
  }
  bfloat16(double d) : bfloat16((float)d) {}
  bfloat16(int v) : bfloat16((float)v) {}
  bfloat16(long long v) : bfloat16((float)v) {}
  bfloat16(float16 v) : bfloat16((float)v) {}
  operator float() const {
    unsigned int u = ((unsigned int)bits) << 16; float f; std::memcpy(&f, &u, 4); return f;
  }
};
using std::sqrt; using std::exp; using std::log; using std::fabs; using std::fmax;
using std::fmin; using std::pow; using std::tanh; using std::isnan; using std::isinf;
using std::log1p; using std::expm1; using std::floor; using std::ceil; using std::min;
using std::max;
inline float rsqrt(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
"""

# What device code may use in any kernel (a RawKernel's source, an ElementwiseKernel's
# preamble and operation): device-function qualifiers and the bit-cast intrinsics ember uses.
_DEVICE_PRELUDE = r"""
#define __device__
#define __forceinline__ inline
inline float __uint_as_float(unsigned int u) { float f; std::memcpy(&f, &u, 4); return f; }
inline unsigned int __float_as_uint(float f) { unsigned int u; std::memcpy(&u, &f, 4); return u; }
inline double __longlong_as_double(long long b) { double d; std::memcpy(&d, &b, 8); return d; }
inline float ember_h2f(unsigned short h) { float16 v; std::memcpy(&v, &h, 2); return (float)v; }
inline unsigned short ember_f2h(float f) {
  float16 v = (float16)f; unsigned short h; std::memcpy(&h, &v, 2); return h;
}
"""

_RAW_PRELUDE = r"""
struct ember_dim3 { unsigned x = 0, y = 0, z = 0; };
static ember_dim3 threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __shared__ static
#define __restrict__
// A block's threads are fibers on one OS thread: each runs until its __syncthreads() or its
// end, then the next; a barrier is passed when every thread of the block has reached it.
#if !defined(__x86_64__)
#error "the fake CuPy switches a block's fibers with x86-64 assembly (ember_switch)"
#endif
struct ember_fiber { void* sp; int state; };  // state: 0 runnable, 1 at the barrier, 2 ended
static void* ember_sched_sp;
static ember_fiber* ember_cur;
extern "C" void ember_switch(void** save, void* to) __attribute__((visibility("hidden")));
asm(".text\n.globl ember_switch\n.hidden ember_switch\n.type ember_switch,@function\n"
    "ember_switch:\n pushq %rbp\n pushq %rbx\n pushq %r12\n pushq %r13\n pushq %r14\n"
    " pushq %r15\n movq %rsp, (%rdi)\n movq %rsi, %rsp\n popq %r15\n popq %r14\n popq %r13\n"
    " popq %r12\n popq %rbx\n popq %rbp\n ret\n");
inline void ember_yield(int state) {
  ember_cur->state = state;
  ember_switch(&ember_cur->sp, ember_sched_sp);
}
inline void __syncthreads() { ember_yield(1); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline unsigned int atomicAdd(unsigned int* p, unsigned int v) {
  return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
"""

# The launch: a block at a time, in a scrambled order (a GPU promises none); its threads as
# fibers (``_RAW_PRELUDE``), run in ascending order between barriers, then descending (every
# other block starts descending), so a read of another thread's write that lacks a barrier
# sees the wrong value one way or the other. Returns 1 (and stops) when some threads of a block
# end while others wait at a barrier.
_LAUNCHER = string.Template(r"""
static void** ember_args;
static void ember_entry() {
  $name($call);
  ember_yield(2);
  __builtin_trap();
}
extern "C" int ember_launch(unsigned grid, unsigned block, void** args) {
  const size_t stack = 256 * 1024;  // a thread's stack (reserved; pages are touched as used)
  static char* stacks = nullptr;
  static unsigned have = 0;
  static std::vector<ember_fiber> fibers;
  if (block > have) {
    std::free(stacks);
    stacks = (char*)std::aligned_alloc(64, stack * block);
    have = block;
  }
  fibers.resize(block);
  ember_args = args; gridDim.x = grid; blockDim.x = block;
  for (unsigned b = 0; b < grid; ++b) {
    blockIdx.x = grid % 7919 ? (unsigned)((7919ull * b + 13) % grid) : grid - 1 - b;
    for (unsigned t = 0; t < block; ++t) {
      void** sp = (void**)(stacks + stack * (t + 1)) - 8;  // six registers, entry, a return slot
      for (int r = 0; r < 6; ++r) sp[r] = nullptr;
      sp[6] = (void*)&ember_entry; sp[7] = nullptr;
      fibers[t] = {(void*)sp, 0};
    }
    for (unsigned phase = 0, alive = block; alive; ++phase) {
      unsigned waiting = 0, ended = 0;
      for (unsigned k = 0; k < block; ++k) {
        unsigned t = (phase + b) % 2 ? block - 1 - k : k;
        if (fibers[t].state != 0) continue;
        threadIdx.x = t; ember_cur = &fibers[t];
        ember_switch(&ember_sched_sp, fibers[t].sp);
        if (fibers[t].state == 1) ++waiting; else ++ended;
      }
      if (waiting && ended) return 1;
      alive -= ended;
      for (auto& f : fibers) if (f.state == 1) f.state = 0;
    }
  }
  return 0;
}
""")

_PTX = [
    (
        re.compile(
            r'asm\(\s*"\{\s*cvt\.f32\.f16 %0, %1;\s*\}"\s*:\s*"=f"\((\w+)\)\s*:\s*"h"\((\w+)\)'
            r"\s*\);"
        ),
        r"\1 = ember_h2f(\2);",
    ),  # fmt: skip
    (
        re.compile(
            r'asm\(\s*"\{\s*cvt\.rn\.f16\.f32 %0, %1;\s*\}"\s*:\s*"=h"\((\w+)\)\s*:\s*"f"\('
            r"(\w+)\)\s*\);"
        ),
        r"\1 = ember_f2h(\2);",
    ),  # fmt: skip
]


def _ptx(src: str) -> str:
    """``src`` with the PTX conversions ember uses mapped to C++."""
    for pat, rep in _PTX:
        src = pat.sub(rep, src)
    return src


def _ctype(dt: np.dtype) -> str:
    name = np.dtype(dt).name
    if name not in _CTYPES:
        raise TypeError(f"fakecupy kernels: dtype {name} is not emulated")
    return _CTYPES[name]


class _Param:
    """CuPy's ``ParameterInfo``: ``[raw] type name``; one-letter types are placeholders."""

    def __init__(self, text: str, is_const: bool) -> None:
        words = text.split()
        if len(words) < 2:
            raise Exception(f"Syntax error: {text}")
        t, self.name = words[-2:]
        self.raw = False
        for w in words[:-2]:
            if w == "raw":
                self.raw = True
            elif w != "_non_const":
                raise Exception(f'Unknown keyword "{w}"')
        self.is_const = is_const and "_non_const" not in words
        self.ctype = t if len(t) == 1 else None
        self.dtype = None if len(t) == 1 else np.dtype(t if t != "bool" else np.bool_)


def _params(spec: str, is_const: bool) -> list:
    return [_Param(p, is_const) for p in spec.strip().split(",") if p.strip()] if spec else []


def _decide(ins, outs, in_dtypes, out_dtypes):
    """CuPy's ``_decide_params_type_core``: ``(in types, out types, placeholder map)``."""
    types: dict = {}

    def bind(p, a) -> None:  # a parameter's dtype, or its placeholder's binding, must agree
        if p.dtype is not None:
            if np.dtype(a) != p.dtype:
                raise TypeError(f"Type is mismatched. {p.name} {a} {p.dtype}")
        elif p.ctype in types:
            if types[p.ctype] != np.dtype(a):
                raise TypeError(f"Type is mismatched. {p.name} {a} {types[p.ctype]} {p.ctype}")
        else:
            types[p.ctype] = np.dtype(a)

    for p, a in zip(outs, out_dtypes):
        if a is None:
            raise TypeError("Output arguments must be cupy.ndarray")
        bind(p, a)
    for p, a in zip(ins, in_dtypes):
        if a is not None:
            bind(p, a)
    in_types = tuple(types[p.ctype] if p.dtype is None else p.dtype for p in ins)
    out_types = tuple(types[p.ctype] if p.dtype is None else p.dtype for p in outs)
    return in_types, out_types, types


class ElementwiseKernel:
    """``cupy.ElementwiseKernel`` compiled with g++ (see the module docstring)."""

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True,
                 preamble="", no_return=False, return_tuple=False, **kwargs):  # fmt: skip
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise ValueError(f'Invalid kernel name: "{name}"')
        self.in_params = _params(in_params, True)
        self.out_params = _params(out_params, False)
        self.nin, self.nout = len(self.in_params), len(self.out_params)
        self.nargs = self.nin + self.nout
        if "i" in [p.name for p in self.in_params + self.out_params]:
            raise ValueError("Can not use 'i' as a parameter name")
        self.operation, self.name, self.preamble = operation, name, preamble
        self.no_return, self.return_tuple = no_return, return_tuple
        self.kwargs = kwargs
        self._spec = (in_params, out_params, operation, name, preamble)
        self.__name__ = name
        self.calls = 0

    def _source(self, in_types, out_types, types, scalar_in) -> str:
        lines = [_PRELUDE, _DEVICE_PRELUDE]
        lines += [f"typedef {_ctype(dt)} {c};" for c, dt in sorted(types.items())]
        lines.append(_ptx(self.preamble))
        lines.append(
            'extern "C" void ember_kernel(long long n, void** a, const double* sf, '
            "const long long* si) {"
        )
        body, ai, fi, ii = [], 0, 0, 0
        for p, t, scalar in zip(self.in_params, in_types, scalar_in):
            c = p.ctype or _ctype(t)
            if scalar:
                src = f"sf[{fi}]" if t.kind in "fcV" else f"si[{ii}]"
                fi, ii = (fi + 1, ii) if t.kind in "fcV" else (fi, ii + 1)
                lines.append(f"  const {c} {p.name} = ({c}){src};")
            elif p.raw:
                lines.append(f"  const {c}* {p.name} = (const {c}*)a[{ai}];")
                ai += 1
            else:
                body.append(f"    const {c}& {p.name} = ((const {c}*)a[{ai}])[i];")
                ai += 1
        for p, t in zip(self.out_params, out_types):
            c = p.ctype or _ctype(t)
            if p.raw:
                lines.append(f"  {c}* {p.name} = ({c}*)a[{ai}];")
            else:
                body.append(f"    {c}& {p.name} = (({c}*)a[{ai}])[i];")
            ai += 1
        lines.append("  for (long long i = 0; i < n; ++i) {")
        lines += body
        lines += ["    {", self.operation + ";", "    }", "  }", "}"]  # CuPy ends it with ";"
        return "\n".join(lines)

    def __call__(self, *args, **kwargs):
        size = kwargs.pop("size", -1)
        kwargs.pop("stream", None)
        block_size = kwargs.pop("block_size", 128)
        if kwargs:
            raise TypeError(f"Wrong arguments {kwargs}")
        if block_size <= 0:
            raise ValueError("block_size must be greater than zero")
        n = len(args)
        if n != self.nin and n != self.nargs:
            raise TypeError(
                f"Wrong number of arguments for {self.name!r}. It must be either {self.nin} or "
                f"{self.nargs} (with outputs), but given {n}."
            )
        check(args)
        in_args, out_args = list(args[: self.nin]), list(args[self.nin :])
        in_dtypes = []
        for a in in_args:
            if type(a) is ndarray:
                in_dtypes.append(a.dtype)
            else:
                _pyscalar(a)  # CuPy's CScalar: host arrays and other objects raise TypeError
                in_dtypes.append(None)
        for o in out_args:
            if type(o) is not ndarray:
                raise TypeError("Output arguments type must be cupy.ndarray")
        params = self.in_params + self.out_params
        nonraw = [a for a, p in zip(args, params) if type(a) is ndarray and not p.raw]
        if size != -1:
            if nonraw:
                raise ValueError("Specified 'size' can be used only if all of the ndarray are "
                                 "'raw'.")  # fmt: skip
            shape = (int(size),)
        elif not nonraw:
            raise ValueError("Loop size is undecided.")
        else:
            shape = np.broadcast_shapes(*(a.shape for a in nonraw))
        in_types, out_types, types = _decide(
            self.in_params, self.out_params, in_dtypes, [o.dtype for o in out_args]
        )
        if not out_args:
            if any(p.raw for p in self.out_params) and size == -1:
                raise ValueError("Output array size is Undecided")
            out_args = [ndarray._own(np.empty(shape, t), _gpu.state["device"]) for t in out_types]
        for p, o in zip(self.out_params, out_args):
            if not p.raw and o.shape != shape:
                raise ValueError("Out shape is mismatched")
        scalar_in = [type(a) is not ndarray for a in in_args]
        layouts, ndim = _layouts(in_args + out_args, params, shape)
        _nvrtc.check_elementwise(self._spec, in_types + out_types, layouts, ndim, self.kwargs)
        lib = _emulator._compile(self._source(in_types, out_types, types, scalar_in))

        def launch():
            self._run(lib, shape, in_args, out_args, in_types, scalar_in)

        for o in out_args:
            _gpu.before_write(o)
        launch()
        _gpu.record(launch)
        self.calls += 1
        if self.no_return:
            return None
        if not self.return_tuple and self.nout == 1:
            return out_args[0]
        return tuple(out_args)

    def _run(self, lib, shape, in_args, out_args, in_types, scalar_in) -> None:
        bufs, floats, ints, back = [], [], [], []
        for p, a, t, scalar in zip(self.in_params, in_args, in_types, scalar_in):
            if scalar:
                v = np.asarray(a).astype(t)
                (floats if t.kind in "fcV" else ints).append(float(v) if t.kind in "fcV"
                                                            else int(v))  # fmt: skip
            elif p.raw:
                bufs.append(np.ascontiguousarray(a._a))
            else:
                bufs.append(np.ascontiguousarray(np.broadcast_to(a._a, shape)))
        for o in out_args:
            buf = o._a if o._a.flags.c_contiguous else np.ascontiguousarray(o._a)
            if buf is not o._a:
                back.append((o._a, buf))
            bufs.append(buf)
        ptrs = (ctypes.c_void_p * max(len(bufs), 1))(*[b.ctypes.data for b in bufs])
        fs = (ctypes.c_double * max(len(floats), 1))(*floats)
        is_ = (ctypes.c_longlong * max(len(ints), 1))(*ints)
        lib.ember_kernel(ctypes.c_longlong(int(np.prod(shape))), ptrs, fs, is_)
        for dst, src in back:
            dst[...] = src


def _layouts(args, params, shape) -> tuple:
    """Each argument's ``(ndim, c_contiguous)`` in CuPy's generated kernel (None: a scalar), and
    the loop's ndim: CuPy folds the non-raw arrays to one dimension when all are contiguous and
    of the loop's shape (``_reduce_dims``); raw arrays keep theirs."""
    nonraw = [a for a, p in zip(args, params) if type(a) is ndarray and not p.raw]
    folded = all(a.shape == shape and a._a.flags.c_contiguous for a in nonraw)
    ndim = 1 if folded and len(shape) > 1 else len(shape)
    layouts = tuple(
        None if type(a) is not ndarray
        else (a.ndim, a._a.flags.c_contiguous) if p.raw
        else (ndim, folded)
        for a, p in zip(args, params)
    )  # fmt: skip
    return layouts, ndim


_ARG = {
    np.dtype(np.bool_): ctypes.c_bool,
    np.dtype(np.int8): ctypes.c_int8,
    np.dtype(np.uint8): ctypes.c_uint8,
    np.dtype(np.int16): ctypes.c_int16,
    np.dtype(np.uint16): ctypes.c_uint16,
    np.dtype(np.int32): ctypes.c_int32,
    np.dtype(np.uint32): ctypes.c_uint32,
    np.dtype(np.int64): ctypes.c_int64,
    np.dtype(np.uint64): ctypes.c_uint64,
    np.dtype(np.float32): ctypes.c_float,
    np.dtype(np.float64): ctypes.c_double,
}


def param_table(types: list[str]) -> str:
    """C++ source of ``ember_params``: each kernel parameter's bytes * 4 + pointer * 2 +
    floating point, as the compiler sees the types (typedefs and macros resolved; the source
    includes ``<type_traits>`` first)."""
    rows = "".join(
        f"sizeof({t}) * 4 + std::is_pointer<{t}>::value * 2 + std::is_floating_point<{t}>::value, "
        for t in types
    )
    return f'extern "C" const unsigned long long ember_params[] = {{{rows}0}};\n'


def param_infos(lib, n: int) -> list[int]:
    """The ``ember_params`` table of a library compiled with ``param_table``."""
    return list((ctypes.c_ulonglong * n).in_dll(lib, "ember_params"))


def check_arguments(name: str, types: list[str], infos: list[int], args, holders) -> None:
    """Each launch argument must give its parameter the right bytes. CuPy passes each argument
    by its own size and kind (a Python int or bool as 8 bytes, a float as a double) and the
    driver reads the parameter's size from there: a float parameter needs a float32, a double a
    float64, an integer parameter an integer at least as wide (it reads the low bytes) whose
    value fits. On a GPU a mismatch reads the wrong bytes, silently, where the emulators' C++
    casts might not."""
    for k, (param, info, a, held) in enumerate(zip(types, infos, args, holders)):
        size, pointer, floating = info >> 2, bool(info & 2), bool(info & 1)
        array = hasattr(a, "shape") and not isinstance(a, np.generic)
        if pointer or array:
            same = pointer == array
        elif floating or isinstance(held, ctypes.c_float | ctypes.c_double):
            same = (
                floating
                and ctypes.sizeof(held) == size
                and isinstance(held, ctypes.c_float | ctypes.c_double)
            )
        else:
            bits = 8 * size
            same = ctypes.sizeof(held) >= size and -(2 ** (bits - 1)) <= held.value < 2**bits
        if not same:
            given = "an array" if array else f"{type(held).__name__} ({ctypes.sizeof(held)} bytes)"
            raise TypeError(
                f"fakecupy RawKernel {name}: argument {k} is {given}, but the parameter is "
                f"'{param}' ({size} bytes{', a pointer' if pointer else ''}); on a GPU the "
                "kernel would read the wrong bytes"
            )


def _kernel_params(code: str, name: str) -> list[str]:
    m = re.search(r"__global__\s+void\s+" + re.escape(name) + r"\s*\(([^)]*)\)", code)
    if m is None:
        raise ValueError(f"fakecupy RawKernel: no __global__ function {name} in the source")
    params = [p.strip() for p in m.group(1).split(",") if p.strip()]
    return [p.rsplit(None, 1)[0].rstrip("*& ").strip() + ("*" if "*" in p else "") for p in params]


class RawKernel:
    """``cupy.RawKernel`` compiled with g++ (see the module docstring)."""

    def __init__(self, code, name, options=(), backend="nvrtc", translate_cucomplex=False, *,
                 enable_cooperative_groups=False, jitify=False):  # fmt: skip
        self.code, self.name, self.options, self.backend = code, name, tuple(options), backend
        self.enable_cooperative_groups = enable_cooperative_groups
        self._types = _kernel_params(code, name)
        self._lib = _emulator._compile(raw_source(code, name, self._types))
        self._params = param_infos(self._lib, len(self._types))
        self.calls = 0

    def __call__(self, grid, block, args, **kwargs):
        shared_mem = kwargs.pop("shared_mem", 0)
        kwargs.pop("stream", None)
        if kwargs:
            raise TypeError(f"fakecupy RawKernel: unexpected keywords {sorted(kwargs)}")
        grid = (grid,) if isinstance(grid, int) else tuple(grid)
        block = (block,) if isinstance(block, int) else tuple(block)
        if any(int(d) != 1 for d in grid[1:] + block[1:]):
            raise NotImplementedError("fakecupy RawKernel: 1-D launches only")
        if len(args) != len(self._types):
            raise TypeError(f"{self.name}: {len(self._types)} arguments expected, got {len(args)}")
        check(tuple(args))
        if not self.calls:  # CuPy compiles on the first launch: ptxas's report (``_nvrtc``)
            self._resources = _nvrtc.check_raw(self.code, self.name, self.options)
        _nvrtc.check_launch(self.name, grid, block, shared_mem, self._resources)
        holders = []
        for a in args:
            if type(a) is ndarray:
                holders.append(ctypes.c_void_p(a._a.__array_interface__["data"][0]))
            elif isinstance(a, np.generic):
                holders.append(_ARG[a.dtype](a.item()))
            elif isinstance(a, int):  # a bool too, as CuPy's ``_pointer`` has it
                holders.append(ctypes.c_longlong(a))
            elif isinstance(a, float):
                holders.append(ctypes.c_double(a))
            else:
                raise TypeError(f"Unsupported type {type(a)}")
        check_arguments(self.name, self._types, self._params, args, holders)
        ptrs = (ctypes.c_void_p * max(len(holders), 1))(*[ctypes.addressof(h) for h in holders])
        g, b = int(grid[0]), int(block[0])

        def launch(keep=holders):  # a replay reads the arguments again: keep them alive
            launch_blocks(self._lib, self.name, g, b, ptrs)

        for a in args:
            if type(a) is ndarray:
                _gpu.before_write(a)
        launch()
        _gpu.record(launch)
        self.calls += 1


def raw_source(code: str, name: str, types: list[str]) -> str:
    """The C++ of a RawKernel: the preludes, ``code`` (its PTX mapped), its parameter table and
    the launcher of kernel ``name`` with parameter ``types``."""
    call = ", ".join(f"*({t}*)ember_args[{k}]" for k, t in enumerate(types))
    launcher = _LAUNCHER.substitute(name=name, call=call)
    return _PRELUDE + _DEVICE_PRELUDE + _RAW_PRELUDE + _ptx(code) + param_table(types) + launcher


_LAUNCHING = threading.Lock()


def launch_blocks(lib, name: str, grid: int, block: int, args) -> None:
    """Run a library compiled with ``_RAW_PRELUDE`` and ``_LAUNCHER``: ``grid`` blocks of
    ``block`` threads on the argument pointers ``args``. One launch at a time (ctypes lets go of
    the GIL): a library's fibers, stacks and ``__shared__`` memory are its statics."""
    with _LAUNCHING:
        failed = lib.ember_launch(ctypes.c_uint(grid), ctypes.c_uint(block), args)
    if failed:
        raise RuntimeError(
            f"{name}: some threads of a block ended while others waited at __syncthreads(); "
            "on a GPU the block hangs or reads unsynchronized memory"
        )


assert _manifest.CLASSES["cupy.RawKernel"]  # the surface imitated (see the manifest)
