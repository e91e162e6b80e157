"""Runs of a compiled plan's steps as one numba function each: no Python between their ops.

The executor's generated loop (``executor._generated``) calls one op at a time; each call costs
a few microseconds of Python, which is most of a small model's step. Where consecutive steps
all have a numba form here (``FORMS``: the op's forward written as numba source, the same
arrays and the same bits), the loop calls them as one function (``Run``): the function is
generated for the run's ops and its inputs' array types, compiled off the caller's thread
(``ember.backend.jit``) and cached on disk. Until it is ready, and wherever numba refuses its
inputs, the run's steps go on as before. Numba forms so far:

- ``MatMul`` of two float32/float64 matrices: OpenBLAS's ``gemm`` split over numba's threads as
  ``ember.backend.blas.matmul`` splits it (``split_of``), so the bits agree (for the thread count
  when the run was made: after ``ember.set_num_threads`` a product split along its inner
  dimension may differ in the last bits);
- ``Permute``, ``Reshape``; ``Add``/``Sub``/``Mul``/``Div`` of one float dtype, smaller than
  the size their CPU overrides split over numba's threads;
- ``FusedElementwise`` once its own kernel is compiled (the run calls that kernel), writing
  into the input it may overwrite (``reuse``) where that input is an array of its own;
- ``Sum`` over all axes or leading ones, and ``SumTo`` (a bias gradient), of an array the run
  made (C-contiguous): NumPy's pairwise sum, and its sum of whole rows, in NumPy's order.

A run reads the values it needs as arguments and returns those read after it (the plan's
outputs and stores among them); it is cut where it would hold too many bytes of inputs past
their last use (``HOLD_BYTES``). Each form gives NumPy's bits for what it takes, so a step's
results do not depend on when a run's compile ends (``tests/static/test_native.py`` holds
them to the steps).

>>> from ember.ops.movement import Permute
>>> Permute((1, 0)).__class__ in FORMS
True
"""

from __future__ import annotations

import os
import re
import weakref
from collections.abc import Callable

import numpy as np

from ..backend import blas as _blas
from ..backend import jit as _jit
from ..ops.broadcast import SumTo, _summed_axes
from ..ops.elementwise.arithmetic import _ARITH_MIN, Add, Div, Mul, Sub
from ..ops.linalg import MatMul
from ..ops.movement import Permute, Reshape
from ..ops.reduce import Sum
from .ir import format_node
from .passes._util import nbytes
from .passes.fuse import FusedElementwise

# A run is compiled once it went this many times: a compile takes about a second (of a
# background thread, then numba's disk cache), a call saves a few microseconds a step.
ASK_AFTER = 100

FORMS: dict[type, Callable] = {}  # op class -> form(op, node, args, out, source) -> lines | None


def form(*classes):
    """Register the numba form of ``classes``' forward: ``f(op, node, args, out, src)`` returns
    source lines that set the variable ``out`` from the variables ``args`` (None: no form for
    this node; ``src`` collects module-level lines and which variables hold arrays of their
    own).

    >>> FORMS[Permute] is _permute
    True
    """

    def deco(f):
        for c in classes:
            FORMS[c] = f
        return f

    return deco


def eligible(node, fresh: set) -> bool:
    """Whether ``node`` may join a run: its op has a form and its values' sizes are known; a
    sum's input must be an array the run made (``fresh``: value ids), so that it is
    C-contiguous and NumPy's order of additions is known.

    >>> from ember.static import Graph
    >>> g = Graph()
    >>> x = g.add_input((4, 3), np.float32)
    >>> t = g.add_node(Permute((1, 0)), [x], (3, 4), np.float32)
    >>> s = g.add_node(Sum(None, False), [t], (), np.float32)
    >>> eligible(t.node, set()), eligible(s.node, set()), eligible(s.node, {t.id})
    (True, False, True)
    """
    f = FORMS.get(type(node.op))
    if f is None or not all(
        isinstance(d, int) for v in (*node.inputs, node.output) for d in v.shape
    ):
        return False
    if type(node.op) in (Sum, SumTo) and node.inputs[0].id not in fresh:
        return False
    src = Source()  # a trial: whether the form takes this node (or waits for its kernel)
    args = [f"x{i}" for i in range(len(node.inputs))]
    return f(node.op, node, args, "out", src) is not None or src.pending


FRESH = (MatMul, Add, Sub, Mul, Div, FusedElementwise, Sum, SumTo)  # forms that make new arrays


class Source:
    """A run's module being written: module-level lines, and the variables whose arrays are
    the run's own (fresh, C-contiguous: an op may write into them when they die)."""

    def __init__(self) -> None:
        self.head: list[str] = []
        self.owned: set[str] = set()
        self.gemm: set[str] = set()  # the dtypes' letters whose ``cblas_?gemm`` the run calls
        self.pending = False  # a fused kernel it calls is still compiling
        self.flags: dict[str, str] = {}  # input variable -> the argument saying it is its own

    def constant(self, name: str, line: str) -> str:
        self.head.append(f"{name} = {line}")
        return name


_NP = {np.dtype(np.float32): "np.float32", np.dtype(np.float64): "np.float64"}


@form(Permute)
def _permute(op, node, args, out, src):
    (x,) = args
    if op.dims == (1, 0):
        return [f"{out} = {x}.T"]
    return [f"{out} = np.transpose({x}, {op.dims!r})"]


@form(Reshape)
def _reshape(op, node, args, out, src):
    (x,) = args  # a view of C-contiguous memory, else a copy in C order (NumPy's values)
    return [f"{out} = np.ascontiguousarray({x}).reshape({tuple(op.shape)!r})"]


@form(Add, Sub, Mul, Div)
def _binary(op, node, args, out, src):
    a, b = node.inputs
    dt = node.output.dtype
    if dt not in _NP or a.dtype != dt or b.dtype != dt:
        return None
    x, y = args
    if not node.output.shape:  # numba answers a 0-d operation with a scalar
        expr = _scalar(op, f"{x}[()]", f"{y}[()]")
        return [f"{out} = np.asarray({_NP[dt]}({expr}))"]
    if int(np.prod(node.output.shape)) >= _ARITH_MIN:  # the op's own override runs threaded
        return None
    src.owned.add(out)
    return [f"{out} = {_scalar(op, x, y)}"]


def _scalar(op, x: str, y: str) -> str:
    """The op's ``scalar`` expression (``"x + y"``) of the variables ``x`` and ``y``."""
    return re.sub(r"\b[xy]\b", lambda m: x if m.group() == "x" else y, op.scalar)


@form(MatMul)
def _matmul(op, node, args, out, src):
    a, b = node.inputs
    dt = node.output.dtype
    if (
        dt not in _blas.FLOATS
        or a.dtype != dt
        or b.dtype != dt
        or len(a.shape) != 2
        or len(b.shape) != 2
        or a.shape[1] == 1  # the op's outer product
        or _blas.FLOATS[dt] not in _blas.library().gemm
    ):
        return None
    if _blas._kernels() is None:  # the split products' kernels still compile
        src.pending = True
        return None
    letter = _blas.FLOATS[dt]
    src.gemm.add(letter)
    fn = f"gemm_{letter}"
    x, y = args
    m, n = node.output.shape
    split = _blas.split_of(a.shape, n, dt.itemsize)
    if split is None and 1 in (m, n):  # NumPy's product of a vector is gemv's, not gemm's
        return None
    src.owned.add(out)
    lines = [f"{out} = np.empty(({m}, {n}), {_NP[dt]})"]
    if split is not None and split[0] == "inner":
        parts = split[1]
        lines += [
            f"p_{out} = np.empty(({parts}, {m}, {n}), {_NP[dt]})",
            f"if BLAS.gemm_inner({fn}, {x}[None], {y}[None], p_{out}, {parts}):",
            f"    {out}[...] = p_{out}[0]",
            f"    for i in range(1, {parts}):",
            f"        {out} += p_{out}[i]",
            "else:",
            f"    gemm({fn}, {x}, {y}, {out}, {min(parts, max(m, n))})",
        ]
    else:
        lines.append(f"gemm({fn}, {x}, {y}, {out}, {1 if split is None else split[1]})")
    return lines


@form(FusedElementwise)
def _fused(op, node, args, out, src):
    k = op._kernel
    if k is None or op._way != "direct":  # never run yet, or its inputs needed copies
        return None
    if k is False or k.error is not None:
        return None
    if k.fn is None:
        src.pending = True
        return None
    name = src.constant(f"K_{out}", f'sys.modules["ember_jit_{k.name}"].kernel')
    dims = src.constant(f"D_{out}", f"np.array({list(map(int, op._kernel_args))}, np.int64)")
    dt = _NP.get(np.dtype(op.dtype))
    if dt is None:
        return None
    shape = tuple(op.shape)
    lines = []
    r = op.reuse
    written = {i for _, i in op.extra}
    if r >= 0 and (node.inputs[r].shape, node.inputs[r].dtype) != (shape, np.dtype(op.dtype)):
        r = -1  # (the memory pass picks an input of the output's shape and dtype)
    target = f"o_{out}"
    fresh = [f"{target} = np.empty({shape!r}, {dt})"]
    if r >= 0 and op._kernel_reads_out:
        fresh.append(f"{target}[...] = {args[r]}")
    if r >= 0 and args[r] in src.owned:
        target = args[r]
    elif r >= 0 and args[r] in src.flags:  # a run's input: the caller says if it is its own
        lines += [f"if {src.flags[args[r]]}:", f"    {target} = {args[r]}", "else:"]
        lines += [f"    {ln}" for ln in fresh]
    else:
        lines += fresh
    ins = []
    for i, (x, v) in enumerate(zip(args, node.inputs)):
        if i in written or not v.shape:
            ins.append(x)  # written in place (numba refuses a copy's type) / 0-d
        else:
            ins.append(x if x in src.owned else f"np.ascontiguousarray({x})")
    lines.append(f"{name}({', '.join(ins)}, {target}, {dims})")
    lines.append(f"{out} = {target}")
    src.owned.add(out)
    return lines


@form(Sum, SumTo)
def _sum(op, node, args, out, src):
    (x,) = args
    shape, to = node.inputs[0].shape, node.output.shape
    dt = node.output.dtype
    if dt not in _NP or node.inputs[0].dtype != dt:
        return None
    axes = _summed_axes(shape, to) if isinstance(op, SumTo) else op.axis
    if axes is None or sorted(axes) == list(range(len(shape))):  # all: NumPy's pairwise sum
        src.owned.add(out)
        return [f"{out} = np.asarray({_NP[dt]}(sum_all({x}))).reshape({to!r})"]
    if tuple(axes) == tuple(range(len(axes))):  # leading axes: whole rows added in order
        rows = int(np.prod(shape[: len(axes)]))
        src.owned.add(out)
        return [f"{out} = sum_rows({x}.reshape(({rows}, -1))).reshape({to!r})"]
    return None


HEADER = """import sys

import numpy as np
from numba import njit, types
from numba.core.typing.ctypes_utils import make_function_type

from ember.backend import blas as _blas

BLAS = _blas._kernels()


@njit(cache=True, nogil=True)
def gemm(fn, a, b, c, parts):
    # c = a @ b (2-D), split over ``parts`` threads as ember.backend.blas.matmul splits it
    if not BLAS.gemm(fn, a[None], b[None], c[None], parts):  # a layout cblas cannot take
        BLAS.gemm(fn, np.ascontiguousarray(a)[None], np.ascontiguousarray(b)[None], c[None], parts)
"""


SUMS = """

@njit(cache=True, nogil=True)
def block(a, lo, n):
    # NumPy's pairwise_sum of a[lo:lo + n] for n <= 128: eight partial sums, then the rest
    if n < 8:
        res = a.dtype.type(0.0)
        for i in range(n):
            res += a[lo + i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - n % 8:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True, nogil=True)
def pairwise(a, n):
    # NumPy's pairwise sum of a[:n]: blocks of up to 128 (``block``), longer runs split in
    # halves (rounded down to eights) and their sums added, in NumPy's order (the same bits).
    # NumPy recurses; numba's disk cache cannot hold a recursive function, so this walks the
    # tree with a stack: (start, length, halves done) per pending run, and their sums.
    starts = np.empty(64, np.int64)
    lengths = np.empty(64, np.int64)
    done = np.zeros(64, np.int64)
    sums = np.empty(64, a.dtype)
    top, held = 0, 0
    starts[0], lengths[0] = 0, n
    while top >= 0:
        lo, m = starts[top], lengths[top]
        if m <= 128:
            sums[held] = block(a, lo, m)
            held += 1
            top -= 1
            continue
        half = m // 2
        half -= half % 8
        if done[top] == 2:  # both halves summed: add them
            held -= 1
            sums[held - 1] = sums[held - 1] + sums[held]
            top -= 1
            continue
        done[top] += 1
        first = done[top] == 1
        top += 1
        starts[top] = lo if first else lo + half
        lengths[top] = half if first else m - half
        done[top] = 0
    return sums[0]


@njit(cache=True, nogil=True)
def sum_all(x):
    # x.sum() of a C-contiguous array, as NumPy adds it (from -0.0: the sign of a sum of -0.0s)
    flat = x.reshape(x.size)
    return -x.dtype.type(0.0) + pairwise(flat, flat.size)


@njit(cache=True, nogil=True)
def sum_rows(x):
    # x.sum(axis=0) of a C-contiguous matrix: NumPy adds whole rows, first to last
    out = x[0].copy()
    for i in range(1, x.shape[0]):
        out += x[i]
    return out
"""


class Run:
    """Steps ``first`` to ``first + len(nodes) - 1`` of a plan as one numba function:
    ``fn(*gemms, *inputs, *owns)`` returns the values of the slots ``outs`` (a tuple), from the
    arrays of the slots ``ins``; ``owns`` says, for each input in ``reused`` (one an op may
    write into), whether the caller's array is its own (``owns``). ``fn`` is None until ``ask``
    has it compiled, and again once numba refused the inputs (``refused``)."""

    def __init__(self, first: int, nodes: list, steps: list, keep: set) -> None:
        self.first = first
        self.nodes = nodes
        self.steps = [(ins, out) for _, ins, out, _ in steps]
        made = [out for _, out in self.steps]
        self.ins: list[int] = []
        for ins, _ in self.steps:
            for i in ins:
                if i not in made and i not in self.ins:
                    self.ins.append(i)
        self.outs = [o for o in made if o in keep]
        self.reused = []
        for node, (ins, _) in zip(nodes, self.steps):
            r = node.op.reuse if isinstance(node.op, FusedElementwise) else -1
            if r >= 0 and ins[r] in self.ins and ins[r] not in self.reused:
                self.reused.append(ins[r])
        self.fn = None
        self.asks = 0
        self.gemms: tuple = ()
        self.done = False  # compiled, or never will be
        self.kernel = None
        self.error: str | None = None

    def ask(self, *arrays) -> None:
        """Have the function compiled for the types of ``arrays`` (the inputs) once the run went
        ``ASK_AFTER`` times and the kernels it calls are ready; the loop calls this while the
        run's steps go one at a time."""
        k = self.kernel
        if k is None:
            self.asks += 1
            if self.asks < ASK_AFTER:
                return
            made = self.source(arrays)
            if made is None:  # a kernel it calls still compiles: ask again ten calls later
                self.asks = ASK_AFTER - 10
                return
            k = self.kernel = _jit.kernel("run", made)
            if k is None:
                self.done = True
                return
        if k.fn is not None:
            self.gemms = tuple(_blas.library().gemm[c] for c in self._letters)
            self.fn = k.fn
            self.done = True
            _READY.add(self)
        elif k.error is not None:
            self.error, self.done = k.error, True

    def refused(self, error: TypeError) -> None:
        """numba refused the inputs' types (``error``): the steps go one at a time from now on.
        Any other ``TypeError`` came from inside the run, after it may have written state in
        place: it is raised again, not hidden by running the steps a second time."""
        if not str(error).startswith("No matching definition"):
            raise error
        self.fn = None
        self.error = f"numba refused the inputs' types: {error}"

    def source(self, arrays) -> str | None:
        """The run's module for inputs like ``arrays``; None while a kernel it calls compiles
        (``done`` set, with ``error``, where it cannot be made)."""
        from numba import typeof

        src = Source()
        names = {i: f"a{i}" for i in self.ins}
        src.flags = {names[i]: f"own{i}" for i in self.reused}
        body = []
        for node, (ins, out) in zip(self.nodes, self.steps):
            args = [names.get(i, f"v{i}") for i in ins]
            lines = FORMS[type(node.op)](node.op, node, args, f"v{out}", src)
            if lines is None:
                if not src.pending:
                    self.done = True
                    self.error = f"no numba form for {format_node(node)}"
                return None
            body += lines
        self._letters = sorted(src.gemm)
        params = [f"gemm_{c}" for c in self._letters] + [names[i] for i in self.ins]
        params += [f"own{i}" for i in self.reused]
        sig = [f"make_function_type(_blas.library().gemm[{c!r}])" for c in self._letters]
        sig += [_type_source(typeof(a)) for a in arrays]
        sig += ["types.boolean"] * len(self.reused)
        outs = "".join(f"v{o}, " for o in self.outs)
        lines = [HEADER, SUMS, *src.head, "", ""]
        lines.append(f"@njit(({', '.join(sig)},), cache=True, nogil=True)")
        lines.append(f"def kernel({', '.join(params)}):")
        lines += [f"    {ln}" for ln in body]
        lines.append(f"    return ({outs})")
        return "\n".join(lines) + "\n"


_READY: weakref.WeakSet = weakref.WeakSet()  # runs whose function is set


def _after_fork_in_child() -> None:
    """A forked child whose numba kernels are off (``ember.backend.jit``: GNU OpenMP's threads
    do not survive ``fork``) runs every run's steps one at a time."""
    if not _jit.enabled():
        for run in list(_READY):
            run.fn = None
            run.error = "numba's kernels are off in a forked child"


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _type_source(t) -> str:
    """numba's type of an argument as source (arrays and scalars)."""
    from numba import types

    if isinstance(t, types.Array):
        return f"types.Array(types.{t.dtype}, {t.ndim}, {t.layout!r}, readonly={not t.mutable})"
    return f"types.{t}"


def runs(nodes: list, steps: list, keep: set, least: int = 2) -> list:
    """The plan's runs of at least ``least`` consecutive eligible steps (``Run``s); ``keep``:
    the slots the plan returns or stores. A run is cut where the arrays it would hold past
    their last use pass ``HOLD_BYTES`` (``_held``).

    >>> from ember.static import Graph
    >>> from ember.static.executor import Plan
    >>> g = Graph()
    >>> x = g.add_input((4, 3), np.float32)
    >>> y = g.add_node(Mul(), [x, x], (4, 3), np.float32)
    >>> z = g.add_node(Sum(None, False), [y], (), np.float32)
    >>> plan = Plan(g, [z])
    >>> [len(r.nodes) for r in runs(plan.nodes, plan.steps, set(plan.out_slots))]
    [2]
    """
    made = {out: (k, nbytes(n.output)) for k, (n, (_, _, out, _)) in enumerate(zip(nodes, steps))}
    out = []
    k = 0
    while k < len(nodes):
        fresh: set = set()
        j, held = k, 0
        while j < len(nodes) and eligible(nodes[j], fresh):
            held += _held(steps, k, j, made)
            if held > HOLD_BYTES and j > k:
                break
            if isinstance(nodes[j].op, FRESH):
                fresh.add(nodes[j].output.id)
            j += 1
        if j - k >= least:
            later = set(keep)
            for _, ins, _, _ in steps[j:]:
                later.update(ins)
            out.append(Run(k, nodes[k:j], steps[k:j], later))
        k = max(j, k + 1)
    return out


# The bytes of arrays made before a run and dead within it that a run may hold: its caller keeps
# its inputs until it returns, where steps one at a time free each after its last use. A 32-layer
# MLP's backward as one run held all its activations (a step's peak 8.0 -> 9.9 MiB); cut at
# 256 KiB it is a dozen runs, at 8.04 MiB, in the same time within this machine's noise.
HOLD_BYTES = 1 << 18


def _held(steps: list, first: int, j: int, made: dict) -> int:
    """The bytes step ``j`` frees of arrays made before step ``first`` (a run from ``first``
    would hold them until it returns); ``made``: slot -> (step that made it, bytes)."""
    return sum(made[i][1] for i in steps[j][3] if i in made and made[i][0] < first)
