"""Elementwise fusion: chains of elementwise ops become one ``FusedElementwise`` node.

A group is a root elementwise node and the elementwise nodes feeding it whose values nothing
outside the group reads (not an output, not stored, no other consumer), all with the root's
shape and floating dtype. The fused node takes the group's outside inputs (which may broadcast:
a bias row, a 0-d constant) and runs the group's ops as a small program:

- with numba installed (the ``jit`` extra), as one compiled loop over the elements (see
  ``_jit``: compiled in the background and cached on disk; until it is ready, the NumPy path);
- otherwise with NumPy ufuncs writing into preallocated buffers (``out=``), reusing a buffer as
  soon as the value in it is dead, so a chain of *n* ops allocates one array, not *n*;
- on cuda (CuPy), as one ``cupy.ElementwiseKernel`` generated from the same program as CUDA C
  (``cuda_source``): one launch and one pass over memory instead of *n*; CuPy compiles it once
  per source and caches it on disk. Same operations as the NumPy path (NaN-propagating
  max/min/clamp/relu, float constants of the output's type); the GPU may contract a multiply
  and an add into one FMA, so results can differ from NumPy's in the last bit.

Nodes are not moved across an op that writes state while the graph runs (an optimizer update).

>>> import numpy as np
>>> from ember.static import Graph
>>> from ember.ops.elementwise import ADD, Relu
>>> g = Graph("f")
>>> x = g.add_input((2, 3), np.float32, "x")
>>> b = g.add_input((3,), np.float32, "b")
>>> h = g.add_node(ADD, [x, b], (2, 3), np.float32)
>>> g.outputs.append(g.add_node(Relu(), [h], (2, 3), np.float32))
>>> print(elementwise_fusion(g))
graph f(%0: f32[2,3] "x", %1: f32[3] "b") {
  %3: f32[2,3] = FusedElementwise(%0, %1, expr='relu(x0 + x1)')
  return %3
}
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ... import _caches
from ...backend import overrides
from ...backend.arrays import assign, writeable
from ...backend.kernels import fused as _fused
from ...ops import elementwise as ew
from ...ops.base import Op, Spec
from ...ops.linalg import MatMul
from ..dims import has_dims
from ..ir import Assign, Graph
from . import _jit
from ._util import clone, consumers, has_side_effects, is_known_shape, roots, stored

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
SINGLE_MIN = 1 << 16  # with numba, a lone elementwise op this large becomes a kernel too

# op class -> (kernel statement builder, NumPy ``out=`` implementation or None, text form)
# Statement builders get (result name, argument names, constant-name maker) and return code.


def _bin(sym):
    return lambda r, a, c, op: f"{r} = {a[0]} {sym} {a[1]}"


def _call(fn):
    return lambda r, a, c, op: f"{r} = {fn}({a[0]})"


def _relu(r, a, c, op):
    return f"{r} = {a[0]} if not ({a[0]} <= {c(0)}) else {c(0)}"


def _relu_grad(r, a, c, op):
    return f"{r} = {a[0]} * ({c(1)} if {a[1]} > {c(0)} else {c(0)})"


def _max(r, a, c, op):
    return f"{r} = {a[0]} if ({a[0]} >= {a[1]} or {a[0]} != {a[0]}) else {a[1]}"


def _min(r, a, c, op):
    return f"{r} = {a[0]} if ({a[0]} <= {a[1]} or {a[0]} != {a[0]}) else {a[1]}"


def _sigmoid(r, a, c, op):
    return f"{r} = {c(1)} / (np.exp(-{a[0]}) + {c(1)})"


def _where(r, a, c, op):
    return f"{r} = {a[1]} if {a[0]} else {a[2]}"


def _clamp(r, a, c, op):
    lines, x = [], a[0]
    if op.lo is not None:
        lo = c(op.lo)
        lines.append(f"{r} = {x} if ({x} >= {lo} or {x} != {x}) else {lo}")
        x = r
    if op.hi is not None:
        hi = c(op.hi)
        lines.append(f"{r} = {x} if ({x} <= {hi} or {x} != {x}) else {hi}")
        x = r
    if not lines:
        lines.append(f"{r} = {x}")
    return "\n".join(lines)


def _pow_scalar(r, a, c, op):
    e = op.exponent
    if e == 2:
        return f"{r} = {a[0]} * {a[0]}"
    if e == 0.5:
        return f"{r} = np.sqrt({a[0]})"
    if e == -1:
        return f"{r} = {c(1)} / {a[0]}"
    return f"{r} = {a[0]} ** {c(e)}"


def _cast(r, a, c, op):
    return f"{r} = np.{np.dtype(op.dtype.np).name}({a[0]})"


def _np_sigmoid(out, x):
    with np.errstate(over="ignore"):
        np.negative(x, out=out)
        np.exp(out, out=out)
    out += 1
    np.reciprocal(out, out=out)


def _np_clamp(op):
    def run(out, x):
        src = x
        if op.lo is not None:
            np.maximum(src, np.asarray(op.lo, dtype=out.dtype), out=out)
            src = out
        if op.hi is not None:
            np.minimum(src, np.asarray(op.hi, dtype=out.dtype), out=out)
            src = out
        if src is not out:
            np.copyto(out, src)

    return run


def _np_ufunc(uf):
    return lambda op: lambda out, *a: uf(*a, out=out)


def _np_rsqrt(op):
    def run(out, x):
        np.sqrt(x, out=out)
        np.reciprocal(out, out=out)

    return run


_TABLE = {
    ew.Add: (_bin("+"), _np_ufunc(np.add), "{0} + {1}"),
    ew.Sub: (_bin("-"), _np_ufunc(np.subtract), "{0} - {1}"),
    ew.Mul: (_bin("*"), _np_ufunc(np.multiply), "{0} * {1}"),
    ew.Div: (_bin("/"), _np_ufunc(np.divide), "{0} / {1}"),
    ew.Neg: (lambda r, a, c, op: f"{r} = -{a[0]}", _np_ufunc(np.negative), "-{0}"),
    ew.Exp: (_call("np.exp"), _np_ufunc(np.exp), "exp({0})"),
    ew.Log: (_call("np.log"), _np_ufunc(np.log), "log({0})"),
    ew.Sqrt: (_call("np.sqrt"), _np_ufunc(np.sqrt), "sqrt({0})"),
    ew.Tanh: (_call("np.tanh"), _np_ufunc(np.tanh), "tanh({0})"),
    ew.Abs: (_call("np.abs"), _np_ufunc(np.abs), "abs({0})"),
    ew.Reciprocal: (
        lambda r, a, c, op: f"{r} = {c(1)} / {a[0]}",
        _np_ufunc(np.reciprocal),
        "1 / {0}",
    ),
    ew.Rsqrt: (lambda r, a, c, op: f"{r} = {c(1)} / np.sqrt({a[0]})", _np_rsqrt, "rsqrt({0})"),
    ew.Relu: (_relu, lambda op: lambda out, x: np.maximum(x, 0, out=out), "relu({0})"),
    ew.ReluGrad: (
        _relu_grad,
        lambda op: lambda out, g, o: np.multiply(g, o > 0, out=out),
        "relu_grad({0}, {1})",
    ),
    ew.Maximum: (_max, _np_ufunc(np.maximum), "maximum({0}, {1})"),
    ew.Minimum: (_min, _np_ufunc(np.minimum), "minimum({0}, {1})"),
    ew.Sigmoid: (_sigmoid, lambda op: _np_sigmoid, "sigmoid({0})"),
    ew.Where: (_where, None, "where({0}, {1}, {2})"),
    ew.Clamp: (_clamp, _np_clamp, "clamp({0})"),
    ew.PowScalar: (_pow_scalar, None, "{0} ** e"),
    ew.Cast: (
        _cast,
        lambda op: assign,
        "cast({0})",
    ),
}

# -- CUDA C statements (cupy.ElementwiseKernel); ``c(value)`` is a literal of the output type -----


def _cu_bin(sym):
    return lambda r, a, c, op: f"{r} = {a[0]} {sym} {a[1]};"


def _cu_call(fn):
    return lambda r, a, c, op: f"{r} = {fn}({a[0]});"


def _cu_clamp(r, a, c, op):
    lines, x = [], a[0]
    if op.lo is not None:
        lines.append(f"{r} = ({x} >= {c(op.lo)} || {x} != {x}) ? {x} : {c(op.lo)};")
        x = r
    if op.hi is not None:
        lines.append(f"{r} = ({x} <= {c(op.hi)} || {x} != {x}) ? {x} : {c(op.hi)};")
        x = r
    if not lines:
        lines.append(f"{r} = {x};")
    return "\n".join(lines)


def _cu_pow(r, a, c, op):
    e = op.exponent
    if e == 2:
        return f"{r} = {a[0]} * {a[0]};"
    if e == 0.5:
        return f"{r} = sqrt({a[0]});"
    if e == -1:
        return f"{r} = {c(1)} / {a[0]};"
    return f"{r} = pow({a[0]}, {c(e)});"


_CUDA = {
    ew.Add: _cu_bin("+"),
    ew.Sub: _cu_bin("-"),
    ew.Mul: _cu_bin("*"),
    ew.Div: _cu_bin("/"),
    ew.Neg: lambda r, a, c, op: f"{r} = -{a[0]};",
    ew.Exp: _cu_call("exp"),
    ew.Log: _cu_call("log"),
    ew.Sqrt: _cu_call("sqrt"),
    ew.Tanh: _cu_call("tanh"),
    ew.Abs: _cu_call("fabs"),
    ew.Reciprocal: lambda r, a, c, op: f"{r} = {c(1)} / {a[0]};",
    ew.Rsqrt: lambda r, a, c, op: f"{r} = {c(1)} / sqrt({a[0]});",
    ew.Relu: lambda r, a, c, op: f"{r} = !({a[0]} <= {c(0)}) ? {a[0]} : {c(0)};",
    ew.ReluGrad: lambda r, a, c, op: f"{r} = {a[0]} * ({a[1]} > {c(0)} ? {c(1)} : {c(0)});",
    ew.Maximum: lambda r, a, c, op: (
        f"{r} = ({a[0]} >= {a[1]} || {a[0]} != {a[0]}) ? {a[0]} : {a[1]};"
    ),
    ew.Minimum: lambda r, a, c, op: (
        f"{r} = ({a[0]} <= {a[1]} || {a[0]} != {a[0]}) ? {a[0]} : {a[1]};"
    ),
    ew.Sigmoid: lambda r, a, c, op: f"{r} = {c(1)} / (exp(-{a[0]}) + {c(1)});",
    ew.Where: lambda r, a, c, op: f"{r} = {a[0]} ? {a[1]} : {a[2]};",
    ew.Clamp: _cu_clamp,
    ew.PowScalar: _cu_pow,
    ew.Cast: lambda r, a, c, op: f"{r} = ({c.ctype}){a[0]};",
}
_CTYPES = {"float32": "float", "float64": "double"}
_CUDA_INPUTS = {"float32", "float64", "bool"}


def _c_literal(value: float, ctype: str) -> str:
    """``value`` as a CUDA C constant of ``ctype`` (inf and nan from their bit patterns)."""
    v = float(value)
    if math.isfinite(v):
        return f"(({ctype}){v!r})"
    bits = {math.inf: "0x7ff0000000000000ULL", -math.inf: "0xfff0000000000000ULL"}.get(
        v, "0x7ff8000000000000ULL"
    )
    return f"(({ctype})__longlong_as_double((long long){bits}))"


def cuda_source(program: tuple, in_dtypes, dtype: str) -> tuple[str, str, str]:
    """``(in_params, out_params, operation)`` of a ``cupy.ElementwiseKernel`` running
    ``program`` (see ``FusedElementwise``) on inputs of ``in_dtypes`` into an output of
    ``dtype``; the kernel broadcasts its inputs as CuPy does.

    >>> from ember.ops.elementwise import ADD, Relu
    >>> ins, outs, op = cuda_source(((ADD, (0, 1)), (Relu(), (2,))), ["float32"] * 2, "float32")
    >>> ins, outs
    ('float32 x0, float32 x1', 'float32 out')
    >>> print(op)
    float t0 = x0 + x1;
    float t1 = !(t0 <= ((float)0.0)) ? t0 : ((float)0.0);
    out = t1;
    """
    n = len(in_dtypes)
    ctype = _CTYPES[dtype]

    def c(value):
        return _c_literal(value, ctype)

    c.ctype = ctype
    lines = []
    for j, (op, args) in enumerate(program):
        names = [f"x{a}" if a < n else f"t{a - n}" for a in args]
        stmt = _CUDA[type(op)](f"t{j}", names, c, op).split("\n")
        if len(stmt) == 1:
            lines.append(f"{ctype} {stmt[0]}")
        else:
            lines += [f"{ctype} t{j};", *stmt]
    lines.append(f"out = t{len(program) - 1};")
    ins = ", ".join(f"{np.dtype(d).name} x{i}" for i, d in enumerate(in_dtypes))
    return ins, f"{dtype} out", "\n".join(lines)


_CUPY_KERNELS: dict = {}
_caches.register("fused elementwise CUDA kernels", _CUPY_KERNELS.clear, _CUPY_KERNELS.__len__)


# Ops whose forward always returns a new array (never a view or one of its inputs): their
# output's buffer may be overwritten by its last reader (see ``memory.reuse_buffers``).
FRESH = {*_TABLE, MatMul}


def fusable(node) -> bool:
    op, out = node.op, node.output
    t = type(op)
    if t not in _TABLE or out.dtype not in _FLOATS or not is_known_shape(out.shape):
        return False
    if has_dims(op):
        return False
    if t is ew.Cast:  # casts into the float dtype only, from floats or bools
        return node.inputs[0].dtype.kind in "fb"
    return all(x.dtype in _FLOATS or x.dtype.kind == "b" for x in node.inputs)


@dataclasses.dataclass(frozen=True)
class FusedElementwise(Op):
    """Elementwise ``program`` over the node's inputs, in one pass (numba) or into reused
    buffers (NumPy). ``program`` is a tuple of ``(op, args)``: an arg ``i < n_inputs`` is the
    ``i``-th input, a larger one the result of instruction ``i - n_inputs``; the last
    instruction's result is the output (``shape``, ``dtype``). ``reuse`` names an input whose
    buffer may hold the output (set by ``memory.reuse_buffers`` when that input is dead
    after this node). ``expr`` is the program as text, for reading."""

    expr: str
    reuse: int = -1
    program: tuple = dataclasses.field(default=(), init=False)
    n_inputs: int = dataclasses.field(default=0, init=False)
    shape: tuple = dataclasses.field(default=(), init=False)
    dtype: str = dataclasses.field(default="float32", init=False)
    differentiable = False
    serializable = False

    @classmethod
    def make(cls, expr: str, program: tuple, n_inputs: int, shape: tuple, dtype: str, reuse=-1):
        op = cls(expr, reuse)
        for k, v in (("program", program), ("n_inputs", n_inputs), ("shape", shape)):
            object.__setattr__(op, k, v)
        object.__setattr__(op, "dtype", dtype)
        return op

    def with_reuse(self, index: int) -> FusedElementwise:
        """The same program, allowed to write its output into input ``index``'s buffer."""
        return FusedElementwise.make(
            self.expr, self.program, self.n_inputs, self.shape, self.dtype, index
        )

    def __post_init__(self) -> None:
        object.__setattr__(self, "_np_steps", None)
        object.__setattr__(self, "_kernel", None)
        object.__setattr__(self, "_kernel_args", None)

    def infer(self, *inputs) -> Spec:
        from ... import dtypes as _dt

        return Spec(self.shape, _dt.from_numpy_dtype(np.dtype(self.dtype)))

    # -- running: the reference, and its overrides (registered below the class) -------------
    def forward(self, xp, *inputs):
        """The reference: the program's ops one at a time (each through its own override)."""
        vals = list(inputs)
        for op, args in self.program:
            vals.append(overrides.run(op, xp, *[vals[a] for a in args]))
        return vals[-1]

    def _run_cupy(self, xp, inputs):
        """One generated ``ElementwiseKernel`` (see ``cuda_source``), or NotImplemented."""
        names = tuple(a.dtype.name for a in inputs)
        if any(d not in _CUDA_INPUTS for d in names):
            return NotImplemented
        key = (id(xp), self.program, names, self.dtype)
        k = _CUPY_KERNELS.get(key)
        if k is None:
            ins, outs, op = cuda_source(self.program, names, self.dtype)
            k = _CUPY_KERNELS[key] = xp.ElementwiseKernel(ins, outs, op, "ember_fused")
        out = None
        if self.reuse >= 0:  # an input that dies here (memory.reuse_buffers): write into it
            a = inputs[self.reuse]
            if (
                a.base is None
                and a.flags.c_contiguous
                and a.shape == self.shape
                and a.dtype == self.dtype
            ):
                out = a
        if out is None:
            out = xp.empty(self.shape, self.dtype)
        k(*inputs, out)
        return out

    def _out_buffer(self, inputs):
        if self.reuse >= 0:
            a = inputs[self.reuse]
            if (
                type(a) is np.ndarray
                and a.base is None
                and a.flags.c_contiguous
                and writeable(a)
                and a.shape == self.shape
                and a.dtype == self.dtype
            ):
                return a
        return None

    def _run_numpy(self, inputs):
        steps = self._np_steps
        if steps is None:
            steps = self._plan_numpy()
        vals = list(inputs)
        pool = []
        reused = self._out_buffer(inputs)
        for impl, op, args, frees in steps:
            for i in frees:
                if i == -1:
                    if reused is not None:
                        pool.append(reused)
                else:
                    pool.append(vals[i])
            arrs = [vals[a] for a in args]
            if impl is None:
                r = overrides.run(op, np, *arrs)
                if type(r) is not np.ndarray:
                    r = np.asarray(r)
            else:
                r = pool.pop() if pool else np.empty(self.shape, self.dtype)
                impl(r, *arrs)
            vals.append(r)
        return vals[-1]

    def _plan_numpy(self):
        """Per instruction: (out= implementation or None, op, args, buffers free before it):
        a buffer is an intermediate written by an implementation (or the reusable input, -1)
        whose last reader is this instruction."""
        n = self.n_inputs
        owned = set()
        last = {}
        for j, (_, args) in enumerate(self.program):
            for a in args:
                last[a] = j
        steps = []
        for j, (op, args) in enumerate(self.program):
            make = _TABLE[type(op)][1]
            impl = None if make is None else make(op)
            frees = [a for a in set(args) if last.get(a) == j and a in owned]
            if self.reuse >= 0 and last.get(self.reuse) == j:
                frees.append(-1)
            if j == len(self.program) - 1:
                frees = [a for a in frees]  # the output may take a dead buffer too
            steps.append((impl, op, args, frees))
            if impl is not None:
                owned.add(n + j)
        steps = tuple(steps)
        object.__setattr__(self, "_np_steps", steps)
        return steps

    # -- numba -----------------------------------------------------------------------------
    def _request_kernel(self, inputs):
        k = False
        if self.dtype in _jit.NUMBA_TYPES and _jit.enabled():
            try:
                src, kinds = self._source([np.dtype(a.dtype).name for a in inputs], inputs)
            except _NoKernel:
                src = None
            if src is not None:
                k = _jit.kernel("fused", src) or False
                object.__setattr__(self, "_kernel_args", kinds)
        object.__setattr__(self, "_kernel", k)
        return k

    def _source(self, dtypes, inputs):
        """The kernel's source, and for each input the shape to view it as: the output's
        dimensions are collapsed where every input agrees on varying or broadcasting, so a
        bias ``(C, 1, 1)`` over ``(N, C, H, W)`` becomes ``(1, C, 1)`` over ``(N, C, H*W)``."""
        for d in dtypes:
            if d not in _jit.NUMBA_TYPES:
                raise _NoKernel
        n = self.n_inputs
        shape = self.shape
        nd = len(shape)
        padded = [(1,) * (nd - len(a.shape)) + tuple(a.shape) for a in inputs]
        dims = []  # (size, flags): flags[k] is whether input k varies along this dimension
        for d, size in enumerate(shape):
            if size == 1:
                continue
            flags = tuple(p[d] != 1 for p in padded)
            if dims and dims[-1][1] == flags:
                dims[-1] = (dims[-1][0] * size, flags)
            else:
                dims.append((size, flags))
        if not dims:
            dims = [(1, tuple(False for _ in inputs))]
        views = []
        for k in range(n):
            views.append(tuple(size if flags[k] else 1 for size, flags in dims))
        out_view = tuple(size for size, _ in dims)
        consts: dict = {}
        nb_dt = self.dtype

        def c(value):
            key = repr(float(value))
            name = consts.get(key)
            if name is None:
                name = consts[key] = f"c{len(consts)}"
            return name

        depth = len(dims)
        idx = [f"i{d}" for d in range(depth)]
        loads: dict = {}  # loop level (0 = before the loops) -> statements
        for k in range(n):
            varying = [d for d, (_, flags) in enumerate(dims) if flags[k]]
            level = varying[-1] + 1 if varying else 0
            ix = ", ".join(idx[d] if dims[d][1][k] else "0" for d in range(depth))
            loads.setdefault(level, []).append(f"a{k} = x{k}[{ix}]")
        body = []
        for j, (op, args) in enumerate(self.program):
            names = [f"a{a}" if a < n else f"t{a - n}" for a in args]
            body += _TABLE[type(op)][0](f"t{j}", names, c, op).split("\n")
        body.append(f"out[{', '.join(idx)}] = t{len(self.program) - 1}")
        sig_in = "".join(f"ro({_jit.NUMBA_TYPES[d]!r}, {depth}), " for d in dtypes)
        sig = f"types.void({sig_in}rw({_jit.NUMBA_TYPES[nb_dt]!r}, {depth}))"
        params = ", ".join([f"x{i}" for i in range(n)] + ["out"])
        lines = [_jit.HEADER]
        for v, name in consts.items():
            lines.append(f"{name} = np.{nb_dt}({v})")
        lines.append(
            f'\n\n@njit({sig}, cache=True, nogil=True, error_model="numpy")\ndef kernel({params}):'
        )
        lines.append(f"    {', '.join(f'n{d}' for d in range(depth))}, = out.shape")
        ind = "    "
        lines += [ind + s for s in loads.get(0, ())]
        for d in range(depth):
            lines.append(f"{ind}for i{d} in range(n{d}):")
            ind += "    "
            lines += [ind + s for s in loads.get(d + 1, ())]
        lines += [ind + s for s in body]
        return "\n".join(lines) + "\n", (tuple(views), out_view)

    def _run_kernel(self, fn, inputs):
        views, out_view = self._kernel_args
        args = []
        for a, v in zip(inputs, views):
            if type(a) is not np.ndarray:
                a = np.asarray(a)
            if not a.flags.c_contiguous:
                a = np.ascontiguousarray(a)
            args.append(a.reshape(v))
        out = self._out_buffer(inputs)
        if out is None:
            out = np.empty(self.shape, self.dtype)
        fn(*args, out.reshape(out_view))
        return out


@overrides.register(FusedElementwise, "cpu")
def _fused_cpu(op: FusedElementwise, xp, *inputs):
    """One numba loop once its kernel is compiled; meanwhile NumPy ``out=`` steps into buffers
    that die within the program (and the reusable input's)."""
    k = op._kernel
    if k is None:
        k = op._request_kernel(inputs)
    if k is not False and k.fn is not None:
        return op._run_kernel(k.fn, inputs)
    return op._run_numpy(inputs)


@overrides.register(FusedElementwise, "cuda")
def _fused_cuda(op: FusedElementwise, xp, *inputs):
    """One generated CUDA ``ElementwiseKernel`` for the whole program."""
    if op.dtype not in _CTYPES or not _fused(xp):
        return NotImplemented
    return op._run_cupy(xp, inputs)


class _NoKernel(Exception):
    pass


def elementwise_fusion(graph: Graph) -> Graph:
    """A copy of ``graph`` where each group of two or more elementwise nodes (see above) is
    one ``FusedElementwise`` node, defining the group's root value."""
    g = clone(graph)
    uses = consumers(g)
    keep = roots(g) | stored(g) | {v.id for v in g.outputs}
    pos = {n.output.id: i for i, n in enumerate(g.nodes)}
    barrier_before = []  # index of the last state-writing node before each position
    last = -1
    for i, n in enumerate(g.nodes):
        barrier_before.append(last)
        if has_side_effects(n.op) and type(n.op) is not Assign:
            last = i
    assigned: set = set()
    groups = []
    big = _jit.enabled()  # one large op alone is worth a kernel too (one pass, no temporaries)
    for i in range(len(g.nodes) - 1, -1, -1):
        root = g.nodes[i]
        if root.output.id in assigned or not fusable(root):
            continue
        out = root.output
        members = {out.id: root}
        barrier = barrier_before[i]
        grew = True
        while grew:
            grew = False
            for m in list(members.values()):
                for x in m.inputs:
                    if (
                        x.kind != "node"
                        or x.id in members
                        or x.id in assigned
                        or x.id in keep
                        or x.shape != out.shape
                        or x.dtype != out.dtype
                        or pos[x.id] <= barrier
                        or not fusable(x.node)
                        or any(u.output.id not in members for u in uses.get(x.id, ()))
                    ):
                        continue
                    members[x.id] = x.node
                    grew = True
        if len(members) < 2 and not (big and math.prod(out.shape) >= SINGLE_MIN):
            continue
        assigned.update(members)
        groups.append((root, sorted(members.values(), key=lambda n: pos[n.output.id])))
    if not groups:
        return g
    drop = set()
    for root, members in groups:
        ids = {n.output.id for n in members}
        ext, ext_index = [], {}
        index = {}
        program = []
        texts = {}
        for k, n in enumerate(members):
            args = []
            for x in n.inputs:
                if x.id in ids:
                    args.append(index[x.id])
                else:
                    if x.id not in ext_index:
                        ext_index[x.id] = len(ext)
                        ext.append(x)
                    args.append(("x", ext_index[x.id]))
            program.append((n.op, args))
            index[n.output.id] = ("t", k)
        n_in = len(ext)
        prog = tuple(
            (op, tuple(a[1] if a[0] == "x" else n_in + a[1] for a in args)) for op, args in program
        )
        for k, (op, args) in enumerate(prog):
            parts = [f"x{a}" if a < n_in else texts[a - n_in] for a in args]
            fmt = _TABLE[type(op)][2]
            texts[k] = fmt.format(*parts)
        out = root.output
        root.op = FusedElementwise.make(texts[len(prog) - 1], prog, n_in, out.shape, out.dtype.name)
        root.inputs = tuple(ext)
        drop.update(n.output.id for n in members if n is not root)
    g.nodes = [n for n in g.nodes if n.output.id not in drop]
    return g


__all__ = ["FusedElementwise", "elementwise_fusion"]
