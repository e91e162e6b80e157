"""Renderers of a fused elementwise program (see ``fuse.FusedElementwise``): numba source, CUDA C
source, the NumPy ``out=`` step plan, and the program as readable text.

Nothing here knows an op: each op's scalar expression (``op.scalar``, Python syntax over the
inputs ``x``, ``y``, ``z``; see ``ember.ops.elementwise.kinds``) is parsed once and printed in
either language, and the NumPy steps run the op's own ``forward`` into a buffer. Where numba
and CUDA C spell a function differently, ``FUNCTIONS`` holds both spellings.

Dtypes: numba kernels are made for the dtypes numba has (``_jit.NUMBA_TYPES``: no float16 or
bfloat16; those programs take the NumPy steps, op by op as unfused, each rounding to the
dtype). CUDA kernels take float16, bfloat16, float32, float64 and bool inputs into a float
output: float64 programs compute in double, the others in float; 16-bit values travel as their
``uint16`` bits, are widened to float on load and rounded once at the store (``cuda_source``,
with the conversions of ``ember.backend.kernels.half_io`` as the kernel's preamble), so a
fused bfloat16 chain keeps float intermediates, as PyTorch's inductor does.

>>> from ember.ops.elementwise import ADD, Relu
>>> numba_expression(Relu(), ["a0"], lambda v: "c0", "float32")
'c0 if (a0 <= c0) else a0'
>>> c_expression(Relu(), ["t0"], lambda v: "0.0f", "float32")
'(t0 <= 0.0f) ? 0.0f : t0'
>>> text(ADD, ["x0", "relu(x1)"]), text(Relu(), ["x0 + x1"])
('x0 + relu(x1)', 'relu(x0 + x1)')
"""

from __future__ import annotations

import ast
import functools
import math
import re

import numpy as np

from ...backend import jit as _jit
from ...backend.kernels import half_io
from ...ops.elementwise.kinds import substitute

# function in a scalar expression -> (numba spelling, CUDA C spelling); ``cast`` converts to
# the output dtype, whose names are filled in (in CUDA C, a cast to a 16-bit dtype rounds the
# float to it and back: the value a cast gives, in the float arithmetic).
FUNCTIONS = {
    "exp": ("np.exp", "exp"),
    "log": ("np.log", "log"),
    "sqrt": ("np.sqrt", "sqrt"),
    "tanh": ("np.tanh", "tanh"),
    "abs": ("np.abs", "fabs"),
    "cast": ("np.{dtype}", "({ctype})"),
}
# output dtypes a CUDA kernel is made for -> the C type its arithmetic runs in (float for the
# 16-bit ones, as PyTorch's inductor and CuPy's own half-precision ufuncs do)
CTYPES = {"float16": "float", "bfloat16": "float", "float32": "float", "float64": "double"}
CUDA_INPUTS = {"float16", "bfloat16", "float32", "float64", "bool"}
# 16-bit dtypes travel as their uint16 bits (``ember.backend.kernels.raw_view``), converted by
# ``half_io``'s functions of the storage kind
HALF = {"float16": "f16", "bfloat16": "bf16"}
_ARGS = "xyz"
_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
_COMPARE = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_ATOMS = (ast.Name, ast.Constant, ast.Call)


@functools.cache
def _parse(expression: str) -> ast.expr:
    return ast.parse(expression, mode="eval").body


class _Printer:
    """One op's scalar expression in numba Python (``c=False``) or CUDA C (``c=True``)."""

    def __init__(self, c: bool, op, args, const, dtype: str):
        self.c, self.op, self.args, self.const = c, op, args, const
        self.dtype = dtype

    def child(self, node) -> str:
        s = self(node)
        return s if isinstance(node, _ATOMS) else f"({s})"

    def __call__(self, node) -> str:
        c = self.c
        if isinstance(node, ast.Name):
            if node.id in _ARGS:
                return self.args[_ARGS.index(node.id)]
            return self.const(getattr(self.op, node.id))  # one of the op's fields
        if isinstance(node, ast.Constant):
            return self.const(node.value)
        if isinstance(node, ast.UnaryOp):
            sym = {ast.USub: "-", ast.Not: "!" if c else "not "}[type(node.op)]
            return sym + self.child(node.operand)
        if isinstance(node, ast.BinOp):
            left, right = self.child(node.left), self.child(node.right)
            if isinstance(node.op, ast.Pow):
                return f"pow({self(node.left)}, {self(node.right)})" if c else f"{left} ** {right}"
            return f"{left} {_BINARY[type(node.op)]} {right}"
        if isinstance(node, ast.Compare):
            (op,), (right,) = node.ops, node.comparators
            return f"{self.child(node.left)} {_COMPARE[type(op)]} {self.child(right)}"
        if isinstance(node, ast.BoolOp):
            sym = {ast.Or: " || " if c else " or ", ast.And: " && " if c else " and "}
            return sym[type(node.op)].join(self.child(v) for v in node.values)
        if isinstance(node, ast.IfExp):
            test, body, orelse = (self.child(n) for n in (node.test, node.body, node.orelse))
            return f"{test} ? {body} : {orelse}" if c else f"{body} if {test} else {orelse}"
        if isinstance(node, ast.Call):
            fn = FUNCTIONS[node.func.id][c].format(dtype=self.dtype, ctype=CTYPES.get(self.dtype))
            if node.func.id == "cast" and c:
                kind = HALF.get(self.dtype)
                if kind is not None:  # round to the 16-bit dtype, as the cast does (a double
                    # argument is converted to ember_st's float first: through float32, as Cast)
                    return f"ember_ld_{kind}(ember_st_{kind}({self(node.args[0])}))"
                return fn + self.child(node.args[0])
            return f"{fn}({', '.join(self(a) for a in node.args)})"
        raise ValueError(f"{type(self.op).__name__}.scalar: can't render {ast.dump(node)}")


def numba_expression(op, args, const, dtype: str) -> str:
    """``op``'s scalar expression in numba Python over the variables ``args``; ``const(v)``
    names a constant of the output ``dtype``."""
    return _Printer(False, op, args, const, dtype)(_parse(op.scalar))


def c_expression(op, args, const, dtype: str) -> str:
    """``op``'s scalar expression in CUDA C (see ``numba_expression``)."""
    return _Printer(True, op, args, const, dtype)(_parse(op.scalar))


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# binding strength of the operators ``text`` prints (higher binds tighter)
_PRECEDENCE = {ast.Add: 1, ast.Sub: 1, ast.Mult: 2, ast.Div: 2, ast.USub: 3, ast.Pow: 4}


def _strength(expression: str) -> int:
    node = _parse(expression)
    if isinstance(node, (ast.BinOp, ast.UnaryOp)):
        return _PRECEDENCE.get(type(node.op), 0)
    return 9 if isinstance(node, _ATOMS) else 0


def text(op, parts) -> str:
    """``op`` applied to the texts ``parts``, for reading: its scalar expression when that is
    one operator or call on the inputs (``x0 + x1``, ``exp(x0)``), else ``name(parts)``. A
    part is parenthesized where the operator would bind it otherwise (``x0 / (x1 - x2)``).

    >>> from ember.ops.elementwise import DIV, POW, SUB
    >>> text(DIV, ["x0", "x1 - x2"]), text(SUB, ["x0", "x1 ** x2"]), text(POW, ["x0 * x1", "x2"])
    ('x0 / (x1 - x2)', 'x0 - x1 ** x2', '(x0 * x1) ** x2')
    """
    template = type(op).scalar
    if isinstance(template, str):
        node = _parse(template)
        kids = {
            ast.BinOp: lambda n: (n.left, n.right),
            ast.UnaryOp: lambda n: (n.operand,),
            ast.Call: lambda n: n.args,
        }.get(type(node))
        if kids is not None and all(isinstance(k, (ast.Name, ast.Constant)) for k in kids(node)):
            if not isinstance(node, ast.Call):
                parts = [_wrap(node, k, p) for k, p in enumerate(parts)]
            return substitute(template, *parts)
    return f"{_snake(type(op).__name__)}({', '.join(parts)})"


def _wrap(node, k: int, part: str) -> str:
    """``part`` as operand ``k`` of the operator ``node``, parenthesized where needed."""
    mine, theirs = _PRECEDENCE[type(node.op)], _strength(part)
    right = k == 1 or isinstance(node, ast.UnaryOp)
    pow_ = isinstance(node.op, ast.Pow)
    # equal strength: wrap the right operand (a - (b - c)), but the left one of ** (which
    # groups to the right) and a unary minus's operand (-(-a))
    tight = theirs < mine or (theirs == mine and (right != pow_ or isinstance(node, ast.UnaryOp)))
    return f"({part})" if tight else part


# -- CUDA C ---------------------------------------------------------------------------------


def _c_literal(value: float, ctype: str) -> str:
    """``value`` as a CUDA C constant of ``ctype`` (inf and nan from their bit patterns)."""
    v = float(value)
    if math.isfinite(v):
        return f"(({ctype}){v!r})"
    bits = {math.inf: "0x7ff0000000000000ULL", -math.inf: "0xfff0000000000000ULL"}.get(
        v, "0x7ff8000000000000ULL"
    )
    return f"(({ctype})__longlong_as_double((long long){bits}))"


def cuda_source(
    program: tuple, in_dtypes, dtype: str, types: tuple = (), extra: tuple = ()
) -> tuple[str, str, str]:
    """``(in_params, out_params, operation)`` of a ``cupy.ElementwiseKernel`` running
    ``program`` (see ``FusedElementwise``) on inputs of ``in_dtypes`` into an output of
    ``dtype``; the kernel broadcasts its inputs as CuPy does. Each instruction's arithmetic runs
    in ``CTYPES`` of its dtype (``types``, see ``FusedElementwise``; ``dtype`` when empty): a
    0-d float64 value the program recomputes (a bias correction) stays in double. A float16 /
    bfloat16 input or output is a ``uint16`` parameter (the caller passes ``raw_view``s): each
    such input is converted to float once, at the top, and the result rounded once, at the
    store; the conversions are ``cuda_preamble``'s. Each ``(instruction, input)`` of ``extra``
    makes that input an out parameter after ``out`` (read, then written with the instruction's
    result).

    >>> from ember.ops.elementwise import ADD, Relu
    >>> ins, outs, op = cuda_source(((ADD, (0, 1)), (Relu(), (2,))), ["float32"] * 2, "float32")
    >>> ins, outs
    ('float32 x0, float32 x1', 'float32 out')
    >>> print(op)
    float t0 = x0 + x1;
    float t1 = (t0 <= ((float)0.0)) ? ((float)0.0) : t0;
    out = t1;
    >>> ins, outs, op = cuda_source(((ADD, (0, 1)),), ["bfloat16", "float32"], "bfloat16")
    >>> ins, outs
    ('uint16 x0, float32 x1', 'uint16 out')
    >>> print(op)
    float a0 = ember_ld_bf16(x0);
    float t0 = a0 + x1;
    out = ember_st_bf16(t0);
    """
    n = len(in_dtypes)
    names_in = [np.dtype(d).name for d in in_dtypes]
    lines = []
    loaded = {}
    for i, d in enumerate(names_in):
        if d in HALF:
            loaded[i] = f"a{i}"
            lines.append(f"float a{i} = ember_ld_{HALF[d]}(x{i});")
    for j, (op, args) in enumerate(program):
        names = [loaded.get(a, f"x{a}") if a < n else f"t{a - n}" for a in args]
        d = types[j][0] if types else dtype
        ctype = CTYPES[d]
        expr = c_expression(op, names, functools.partial(_c_literal, ctype=ctype), d)
        lines.append(f"{ctype} t{j} = {expr};")
    stores = [("out", len(program) - 1)] + [(f"x{i}", j) for j, i in extra]
    for name, j in stores:
        lines.append(
            f"{name} = ember_st_{HALF[dtype]}(t{j});" if dtype in HALF else f"{name} = t{j};"
        )
    written = {i for _, i in extra}

    def param(name, d):
        return f"{'uint16' if d in HALF else d} {name}"

    ins = ", ".join(param(f"x{i}", d) for i, d in enumerate(names_in) if i not in written)
    outs = [param("out", dtype)] + [param(f"x{i}", names_in[i]) for _, i in extra]
    return ins, ", ".join(outs), "\n".join(lines)


def cuda_preamble(in_dtypes, dtype: str, types: tuple = ()) -> str:
    """The ``preamble`` of ``cuda_source``'s kernel: the conversions of each 16-bit dtype
    among the inputs, the instructions (``types``) and the output
    (``ember.backend.kernels.half_io``); empty without one.

    >>> cuda_preamble(["float32"], "float32")
    ''
    >>> src = cuda_preamble(["float16", "bool"], "bfloat16")
    >>> "ember_ld_f16" in src and "ember_st_bf16" in src and "ember_st_f16" in src
    True
    """
    names = {np.dtype(d).name for d in in_dtypes} | {np.dtype(dtype).name}
    names.update(d for d, _ in types)
    return "".join(half_io(HALF[d]) for d in sorted(HALF) if d in names)


# -- numba --------------------------------------------------------------------------------------


def numba_source(
    program: tuple,
    shape: tuple,
    dtype: str,
    in_dtypes,
    in_shapes,
    reuse: int = -1,
    types=(),
    extra: tuple = (),
    parallel: bool = False,
):
    """The numba kernel's source for ``program`` over inputs of ``in_dtypes`` and
    ``in_shapes`` into an output of ``shape`` and ``dtype``, and for each input the shape to
    view it as: the output's dimensions are collapsed where every input agrees on varying or
    broadcasting, so a bias ``(C, 1, 1)`` over ``(N, C, H, W)`` becomes ``(1, C, 1)`` over
    ``(N, C, H*W)``. None when numba has no type for a dtype. The kernel takes the arrays in
    their own shapes (C-contiguous; numba refuses others with a ``TypeError``) and an int64 array
    of the views' sizes, the second thing returned, and makes the views itself: the source
    depends on the shapes' lengths only, and a call costs no reshaping in Python.

    With ``reuse`` (the index of an input the output overwrites), that input is read from
    ``out`` itself: the caller passes ``out`` holding its values. Reading and writing one
    array, not two that alias, keeps the loop vectorized (LLVM's overlap check between two
    pointers to the same memory fails, and it falls back to one element at a time).

    Each instruction runs in its dtype (``types``, see ``FusedElementwise``; ``dtype`` when
    empty), with constants of that dtype, at the outermost loop level where all its arguments
    are known: a 0-d prologue (a bias correction) runs once, before the loops.

    Each ``(instruction, input)`` of ``extra`` (an input of the output's shape) is written
    with the instruction's result after the element's reads: that input is a writeable
    parameter.

    With ``parallel``, the outermost loop is a ``prange``: numba gives each of its threads one
    run of consecutive indices (so a parallel product's rows are read back by the thread that
    wrote them)."""
    if any(d not in _jit.NUMBA_TYPES for d in (*in_dtypes, dtype, *(d for d, _ in types))):
        return None
    n = len(in_dtypes)
    nd = len(shape)
    padded = [(1,) * (nd - len(s)) + tuple(s) for s in in_shapes]
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
        dims = [(1, tuple(False for _ in in_shapes))]
    views = tuple(tuple(size if flags[k] else 1 for size, flags in dims) for k in range(n))
    out_view = tuple(size for size, _ in dims)
    consts: dict = {}  # (value, dtype) -> name

    def const(d):
        def c(value):
            key = (repr(float(value)), d)
            name = consts.get(key)
            if name is None:
                name = consts[key] = f"c{len(consts)}"
            return name

        return c

    depth = len(dims)
    idx = [f"i{d}" for d in range(depth)]
    loads: dict = {}  # loop level (0 = before the loops) -> statements
    levels = []  # the loop level of each input, then of each instruction
    for k in range(n):
        varying = [d for d, (_, flags) in enumerate(dims) if flags[k]]
        level = varying[-1] + 1 if varying else 0
        levels.append(level)
        ix = ", ".join(idx[d] if dims[d][1][k] else "0" for d in range(depth))
        loads.setdefault(level, []).append(f"a{k} = {'out' if k == reuse else f'x{k}'}[{ix}]")
    for j, (op, args) in enumerate(program):
        names = [f"a{a}" if a < n else f"t{a - n}" for a in args]
        d = types[j][0] if types else dtype
        level = max((levels[a] for a in args), default=0)
        levels.append(level)
        loads.setdefault(level, []).append(f"t{j} = {numba_expression(op, names, const(d), d)}")
    at = ", ".join(idx)
    body = [f"out[{at}] = t{len(program) - 1}"] + [f"x{i}[{at}] = t{j}" for j, i in extra]
    written = {i for _, i in extra}
    sig_in = "".join(
        f"{'rw' if k in written else 'ro'}({_jit.NUMBA_TYPES[d]!r}, {len(in_shapes[k])}), "
        for k, d in enumerate(in_dtypes)
    )
    sig = (
        f"types.void({sig_in}rw({_jit.NUMBA_TYPES[dtype]!r}, {nd}), "
        "types.Array(types.int64, 1, 'C', readonly=True))"
    )
    params = ", ".join([f"x{i}" for i in range(n)] + ["out", "dims"])
    lines = [_jit.HEADER]
    if parallel:
        lines.append("from numba import prange\n")
    for (v, d), name in consts.items():
        lines.append(f"{name} = np.{d}({v if math.isfinite(float(v)) else repr(v)})")
    flags = 'cache=True, nogil=True, error_model="numpy"' + (", parallel=True" if parallel else "")
    lines.append(f"\n\n@njit({sig}, {flags})\ndef kernel({params}):")
    for k, name in enumerate([f"x{i}" for i in range(n)] + ["out"]):  # the views, in the kernel
        view = ", ".join(f"dims[{k * depth + d}]" for d in range(depth))
        lines.append(f"    {name} = {name}.reshape(({view},))")
    lines.append(f"    {', '.join(f'n{d}' for d in range(depth))}, = out.shape")
    ind = "    "
    lines += [ind + s for s in loads.get(0, ())]
    for d in range(depth):
        loop = "prange" if d == 0 and parallel else "range"  # prange: a run of i0 per thread
        lines.append(f"{ind}for i{d} in {loop}(n{d}):")
        ind += "    "
        lines += [ind + s for s in loads.get(d + 1, ())]
    lines += [ind + s for s in body]
    return "\n".join(lines) + "\n", np.array([*sum(views, ()), *out_view], dtype=np.int64)


# -- NumPy out= steps ---------------------------------------------------------------------------


def numpy_steps(program: tuple, n_inputs: int, reuse: int, full=None, pinned=()) -> tuple:
    """Per instruction: ``(op, args, buffers free before it, whether it writes into a
    buffer)``. An op whose forward takes ``out`` writes into a free buffer (or a new one)
    when its result has the output's shape and dtype (``full[j]``; all do when ``full`` is
    None; the others, 0-d values the program recomputes, get a new array); a buffer is an
    intermediate so written (or the reusable input ``reuse``, as -1) whose last reader is
    this instruction. The results of the ``pinned`` instructions are never freed (they are
    read after the program: ``FusedElementwise.extra``)."""
    owned = set()
    last = {}
    for j, (_, args) in enumerate(program):
        for a in args:
            last[a] = j
    for j in pinned:
        last[n_inputs + j] = len(program)
    steps = []
    for j, (op, args) in enumerate(program):
        frees = [a for a in set(args) if last.get(a) == j and a in owned]
        if reuse >= 0 and last.get(reuse) == j:
            frees.append(-1)
        writes = op.writes_out and (full is None or full[j])
        steps.append((op, args, frees, writes))
        if writes:
            owned.add(n_inputs + j)
    return tuple(steps)
