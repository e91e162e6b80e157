"""Elementwise fusion: chains of elementwise ops become one ``FusedElementwise`` node.

A group is a root elementwise node and the elementwise nodes feeding it whose values nothing
outside the group reads (not an output, not stored, no other consumer), all with the root's
shape and floating dtype (float16, bfloat16, float32 or float64); an op fuses when it declares
its scalar expression (``op.scalar``, see ``ember.ops.elementwise.kinds``), its inputs are
floats or bools, and, for a ``Cast``, it converts a float or bool into the float dtype (float64
into a 16-bit one rounds through float32 in the kernel as in ``Cast`` itself). The fused node
takes the group's outside inputs (which may broadcast: a bias row, a 0-d constant) and runs the
group's ops as a small program, each form rendered from the ops' own expressions and forwards
by ``fused_renderers``:

- with numba installed (the ``jit`` extra), as one compiled loop over the elements (see
  ``_jit``: compiled in the background and cached on disk; until it is ready, the NumPy path);
  numba has no float16 / bfloat16, so those programs always take the NumPy path. From
  ``PARALLEL_MIN`` elements the outer loop is split over numba's threads; inputs in another
  memory order (channels-last) run in that order, a few channels' bias over rows of it
  repeated (``_rows``);
- otherwise with each op's forward writing into preallocated buffers (``out=``), reusing a
  buffer as soon as the value in it is dead, so a chain of *n* ops allocates one array, not *n*;
  op by op, so a 16-bit program rounds after each op, as the unfused graph does;
- on cuda (CuPy), as one ``cupy.ElementwiseKernel`` generated from the same program as CUDA C
  (``cuda_source``): one launch and one pass over memory instead of *n*; CuPy compiles it once
  per source and caches it on disk. Same operations as the NumPy path (NaN-propagating
  max/min/clamp/relu, float constants of the output's type); the GPU may contract a multiply
  and an add into one FMA, so results can differ from NumPy's in the last bit. float16 and
  bfloat16 arrays go in and out as their ``uint16`` bits (``raw_view``): the kernel widens them
  to float on load, computes in float and rounds once at the store (as PyTorch's inductor
  does), so a 16-bit result can differ from the op-by-op one by a unit in the last place or
  so (it skips the intermediate roundings). A ``Cast`` into a 16-bit dtype still rounds.

A 0-d fusable value a group reads (an optimizer's hyperparameter cast, Adam's bias correction
``1 - beta2 ** step`` in float64) joins it as a copy, with the 0-d values it is made of,
whatever else reads it: each kernel recomputes it in its own dtype (``FusedElementwise.types``;
numba once before its loops, CUDA a few scalar instructions a thread) instead of a launch per
scalar op. The 0-d node itself stays only while something outside the groups reads it (a stored
step counter, a loss).

With numba, one large float32 / float64 op alone becomes a kernel too (``SINGLE_MIN``), and so
does one of any size whose NumPy body makes several passes (``numpy_passes``: ``ReluGrad``).

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
from ...backend import blas as _blas
from ...backend import jit as _jit
from ...backend import overrides
from ...backend.arrays import writeable
from ...backend.kernels import fused as _fused
from ...backend.kernels import raw_view
from ...backend.kernels.vectorized import Vectorized
from ...dtypes import FLOAT_DTYPES
from ...ops import _layout_sums
from ...ops import elementwise as ew
from ...ops.base import Op, Spec
from ...ops.linalg import MatMul
from ..dims import has_dims
from ..ir import Assign, Graph
from ._util import clone, consumers, has_side_effects, is_known_shape, roots, stored
from .fused_renderers import (
    CTYPES,
    CUDA_INPUTS,
    cuda_preamble,
    cuda_source,
    numba_source,
    numpy_steps,
    text,
)

_FLOATS = frozenset(d.np for d in FLOAT_DTYPES)  # float16, bfloat16, float32, float64
SINGLE_MIN = 1 << 16  # with numba, a lone elementwise op this large becomes a kernel too
PARALLEL_MIN = 1 << 15  # a kernel over this many elements runs on numba's threads


def _parallel(shape: tuple) -> bool:
    """Whether a kernel over ``shape`` splits its loop over numba's threads: it is large and
    ember's kernels have more than one thread (``blas.kernel_threads``)."""
    return math.prod(shape) >= PARALLEL_MIN and _blas.kernel_threads() > 1


def has_scalar(op_class) -> bool:
    """Whether elementwise fusion takes ops of this class: those that declare their scalar
    expression (``ember.ops.elementwise.kinds``)."""
    return getattr(op_class, "scalar", None) is not None


FUSABLE = frozenset(
    c for c in vars(ew).values() if isinstance(c, type) and issubclass(c, Op) and has_scalar(c)
)

_CUPY_KERNELS: dict = {}
_caches.register("fused elementwise CUDA kernels", _CUPY_KERNELS.clear, _CUPY_KERNELS.__len__)


# Ops whose forward always returns a new array (never a view or one of its inputs): their
# output's buffer may be overwritten by its last reader (see ``memory.reuse_buffers``).
FRESH = {*FUSABLE, MatMul}


def fusable(node) -> bool:
    op, out = node.op, node.output
    t = type(op)
    if not has_scalar(t) or out.dtype not in _FLOATS or not is_known_shape(out.shape):
        return False
    if has_dims(op):
        return False
    if t is ew.Cast:  # casts into the float dtype only, from floats or bools (float64 into a
        src = node.inputs[0].dtype  # 16-bit float rounds through float, in Cast and a kernel)
        return src in _FLOATS or src.kind == "b"
    return all(x.dtype in _FLOATS or x.dtype.kind == "b" for x in node.inputs)


@dataclasses.dataclass(frozen=True)
class FusedElementwise(Op):
    """Elementwise ``program`` over the node's inputs, in one pass (numba) or into reused
    buffers (NumPy). ``program`` is a tuple of ``(op, args)``: an arg ``i < n_inputs`` is the
    ``i``-th input, a larger one the result of instruction ``i - n_inputs``; the last
    instruction's result is the output (``shape``, ``dtype``). ``types`` gives each
    instruction's ``(dtype name, shape)``: the output's, or ``()`` and any float dtype for a
    0-d value the program recomputes (a hyperparameter's cast, a bias correction); empty when
    every instruction has the output's. ``reuse`` names an input whose buffer may hold the
    output (set by ``memory.reuse_buffers`` when that input is dead after this node). ``expr``
    is the program as text, for reading. ``extra`` lists ``(instruction, input)`` pairs: the
    result of each such instruction is also written into that input, in place (a state array of
    the output's shape and dtype; see ``state_updates``), after every read of the element."""

    expr: str
    reuse: int = -1
    program: tuple = dataclasses.field(default=(), init=False)
    extra: tuple = dataclasses.field(default=(), init=False)
    n_inputs: int = dataclasses.field(default=0, init=False)
    shape: tuple = dataclasses.field(default=(), init=False)
    dtype: str = dataclasses.field(default="float32", init=False)
    types: tuple = dataclasses.field(default=(), init=False)
    differentiable = False
    serializable = False

    @classmethod
    def make(
        cls,
        expr: str,
        program: tuple,
        n_inputs: int,
        shape: tuple,
        dtype: str,
        reuse=-1,
        types: tuple = (),
        extra: tuple = (),
    ):
        op = cls(expr, reuse)
        for k, v in (("program", program), ("n_inputs", n_inputs), ("shape", shape)):
            object.__setattr__(op, k, v)
        object.__setattr__(op, "dtype", dtype)
        object.__setattr__(op, "types", types)
        object.__setattr__(op, "extra", extra)
        return op

    def with_reuse(self, index: int) -> FusedElementwise:
        """The same program, allowed to write its output into input ``index``'s buffer."""
        return FusedElementwise.make(
            self.expr,
            self.program,
            self.n_inputs,
            self.shape,
            self.dtype,
            index,
            self.types,
            self.extra,
        )

    def __post_init__(self) -> None:
        object.__setattr__(self, "_np_steps", None)
        object.__setattr__(self, "_kernel", None)
        object.__setattr__(self, "_kernel_args", None)
        object.__setattr__(self, "_kernel_reads_out", False)
        object.__setattr__(self, "_layouts", {})  # axis order -> (kernel, views' sizes, shapes)
        object.__setattr__(self, "_way", "direct")  # how the kernel took the last call's inputs

    def infer(self, *inputs) -> Spec:
        from ... import dtypes as _dt

        return Spec(self.shape, _dt.from_numpy_dtype(np.dtype(self.dtype)))

    # -- running: the reference, and its overrides (registered below the class) -------------
    def forward(self, xp, *inputs):
        """The reference: the program's ops one at a time (each through its own override)."""
        vals = list(inputs)
        for op, args in self.program:
            vals.append(overrides.run(op, xp, *[vals[a] for a in args]))
        self._write_extra(inputs, vals)
        return vals[-1]

    def _write_extra(self, inputs, vals) -> None:
        for j, i in self.extra:
            inputs[i][...] = vals[self.n_inputs + j]

    def _run_cupy(self, xp, inputs):
        """One generated ``ElementwiseKernel`` (see ``cuda_source``), or NotImplemented.
        float16 / bfloat16 arrays are passed as their ``uint16`` bits (``raw_view``); a reused
        input's view is passed as the output too, so the kernel writes that array's memory."""
        names = tuple(a.dtype.name for a in inputs)
        if any(d not in CUDA_INPUTS for d in names):
            return NotImplemented
        key = (id(xp), self.program, names, self.dtype, self.types, self.extra)
        kernels = _CUPY_KERNELS.get(key)
        if kernels is None:
            ins, outs, op = cuda_source(self.program, names, self.dtype, self.types, self.extra)
            pre = cuda_preamble(names, self.dtype, self.types)
            kernels = _CUPY_KERNELS[key] = (
                _vectorized(ins, outs, op, pre),
                xp.ElementwiseKernel(ins, outs, op, "ember_fused", preamble=pre),
            )
        vec, k = kernels
        targets = {i for _, i in self.extra}
        args = [raw_view(xp, a) for a in inputs]
        written = [args[i] for _, i in self.extra]  # out parameters after ``out``
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
        ins = [a for i, a in enumerate(args) if i not in targets]
        if out is None:
            out = xp.empty(self.shape, self.dtype)
            dest = raw_view(xp, out)
        else:  # the reused input's own view is the output: one array, the same memory
            dest = args[self.reuse]
        if vec is None or not vec.run(xp, *ins, dest, *written):
            k(*ins, dest, *written)
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

    def _full_steps(self) -> tuple | None:
        """Per instruction, whether its result has the output's shape and dtype (so it may be
        written into an output-sized buffer); None when all do."""
        if not self.types:
            return None
        return tuple(t == (self.dtype, self.shape) for t in self.types)

    def _run_numpy(self, inputs):
        steps = self._np_steps
        if steps is None:
            pinned = [j for j, _ in self.extra]
            steps = numpy_steps(self.program, self.n_inputs, self.reuse, self._full_steps(), pinned)
            object.__setattr__(self, "_np_steps", steps)
        vals = list(inputs)
        pool = []
        reused = self._out_buffer(inputs)
        for op, args, frees, writes in steps:
            for i in frees:
                if i == -1:
                    if reused is not None:
                        pool.append(reused)
                else:
                    pool.append(vals[i])
            arrs = [vals[a] for a in args]
            if writes:
                r = pool.pop() if pool else np.empty(self.shape, self.dtype)
                op.forward(np, *arrs, out=r)
            else:
                r = overrides.run(op, np, *arrs)
                if type(r) is not np.ndarray:
                    r = np.asarray(r)
            vals.append(r)
        self._write_extra(inputs, vals)
        return vals[-1]

    # -- numba -----------------------------------------------------------------------------
    def _request_kernel(self, inputs):
        k = False
        if _jit.enabled():
            made = numba_source(
                self.program,
                self.shape,
                self.dtype,
                [np.dtype(a.dtype).name for a in inputs],
                [a.shape for a in inputs],
                self.reuse if self._reads_out(inputs) else -1,
                self.types,
                self.extra,
                _parallel(self.shape),
            )
            if made is not None:
                src, dims = made
                k = _jit.kernel("fused", src) or False
                object.__setattr__(self, "_kernel_args", dims)
        object.__setattr__(self, "_kernel", k)
        return k

    def _run_kernel(self, fn, inputs):
        """The numba kernel's result, or NotImplemented where an ``extra`` input cannot be
        written in place. Inputs go to the kernel as they are; when numba refuses one (not a
        C-contiguous NumPy array), the output-shaped inputs' memory order is kept if they have
        one (``_run_in_layout``), else the inputs go as contiguous copies (a broadcast view). The
        way that worked is taken first on the next call (a refused call costs a ``TypeError``).
        """
        way = self._way
        if way == "layout":
            kept = self._run_in_layout(inputs)
            if kept is not None and kept is not _PENDING:
                return kept
        out = self._out_buffer(inputs)
        if out is None:
            out = np.empty(self.shape, self.dtype)
            if self._kernel_reads_out:  # the kernel reads the reused input from out
                out[...] = inputs[self.reuse]
        if way != "copy":
            try:
                fn(*inputs, out, self._kernel_args)
                return out
            except TypeError:  # numba's dispatch refused an argument's type: nothing ran
                pass
        if self.extra and not self._targets_ok(inputs):
            return NotImplemented
        kept = None
        if not self.extra and self.reuse < 0:
            kept = self._run_in_layout(inputs)
            if kept is not None and kept is not _PENDING:
                object.__setattr__(self, "_way", "layout")
                return kept
        if kept is None:  # no layout to keep (while its kernel compiles, ask again next call)
            object.__setattr__(self, "_way", "copy")
        fn(*[np.asarray(a, order="C") for a in inputs], out, self._kernel_args)
        return out

    def _run_in_layout(self, inputs):
        """The result in the memory order of the first output-shaped input not in C order (a
        channels-last convolution's output): a kernel for the axes in that order (compiled once
        per order), the other inputs viewed, or copied, in it, and an output in it returned as a
        view in this op's axis order, as NumPy's ufuncs keep their input's layout. Where the
        other inputs vary only along the fastest axes in that order and those hold few values
        (a bias over channels-last memory: 6 in LeNet's first layer), the kernel runs over rows
        of them repeated (``_rows``), so that its inner loop is long. None when no input has
        such an order, ``_PENDING`` while the kernel compiles."""
        order = None
        for a in inputs:
            if a.shape == self.shape and type(a) is np.ndarray and not a.flags.c_contiguous:
                order = tuple(sorted(range(a.ndim), key=lambda i: -a.strides[i]))
                if a.transpose(order).flags.c_contiguous:
                    break
                order = None
        if order is None:
            return None
        made = self._layouts.get(order)
        if made is None:
            nd = len(self.shape)
            shapes = [(1,) * (nd - a.ndim) + tuple(a.shape) for a in inputs]
            shape = tuple(self.shape[i] for i in order)
            ordered = [tuple(s[i] for i in order) for s in shapes]
            rows = _rows(shape, ordered)
            if rows is not None:
                shape, ordered = rows[0], rows[1]
            src, dims = numba_source(
                self.program,
                shape,
                self.dtype,
                [np.dtype(a.dtype).name for a in inputs],
                ordered,
                -1,
                self.types,
                (),
                _parallel(self.shape),
            )
            made = self._layouts[order] = (_jit.kernel("fused", src), dims, shapes, rows)
        k, dims, shapes, rows = made
        if k is None or k.fn is None:
            return _PENDING
        args = [np.asarray(a).reshape(s).transpose(order) for a, s in zip(inputs, shapes)]
        args = [a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in args]
        if rows is None:
            out = np.empty(tuple(self.shape[i] for i in order), self.dtype)
            k.fn(*args, out, dims)
            return out.transpose(np.argsort(order))
        shape, ordered, repeats = rows
        args = [
            a.reshape(s) if r == 1 else np.tile(a.reshape(-1), r).reshape(s)
            for a, s, r in zip(args, ordered, repeats)
        ]
        out = np.empty(shape, self.dtype)
        k.fn(*args, out, dims)
        return out.reshape([self.shape[i] for i in order]).transpose(np.argsort(order))

    def _targets_ok(self, inputs) -> bool:
        """Whether the kernel can write each ``extra`` input in place: a writeable C-contiguous
        NumPy array (the kernel gets a reshaped view of it, the same memory)."""
        for _, i in self.extra:
            a = inputs[i]
            if type(a) is not np.ndarray or not a.flags.c_contiguous or not writeable(a):
                return False
        return True

    def _reads_out(self, inputs) -> bool:
        """Whether the kernel reads the reused input from ``out`` (it has the output's shape
        and dtype, so its values can stand there); remembered for ``_run_kernel``."""
        r = self.reuse
        ok = (
            r >= 0
            and tuple(inputs[r].shape) == tuple(self.shape)
            and np.dtype(inputs[r].dtype) == np.dtype(self.dtype)
        )
        object.__setattr__(self, "_kernel_reads_out", ok)
        return ok


_PENDING = object()  # _run_in_layout's answer while its kernel compiles


def _rows(shape: tuple, shapes: list):
    """``(rows shape, input shapes, repeats)`` for a kernel over ``shape`` (C order) whose
    inputs (``shapes``, of its rank) are each ``shape`` itself, constant, or vary exactly along
    its fastest axes, those holding fewer than ``SHORT`` values: the kernel runs over rows of
    those values repeated ``r`` times (an input's repeats: 1 for the others), viewed as ``(rows,
    width)``. None where that does not apply or the rows do not divide.

    >>> _rows((50176, 6), [(50176, 6), (1, 6), (1, 1)])
    ((3136, 96), [(3136, 96), (1, 96), (1, 1)], [1, 16, 1])
    """
    nd = len(shape)
    split = nd
    for s in shapes:
        if s != shape and any(v != 1 for v in s):
            split = min(split, next(i for i, v in enumerate(s) if v != 1))
    period = math.prod(shape[split:])
    if split == nd or period >= _layout_sums.SHORT:
        return None
    for s in shapes:
        if s == shape or all(v == 1 for v in s):
            continue
        if s[split:] != shape[split:]:
            return None  # an input that varies along only part of the fast axes
    rows = math.prod(shape[:split])
    repeat = _layout_sums.repeats(rows, period)
    if repeat == 1:
        return None
    width = period * repeat
    ordered, repeats = [], []
    for s in shapes:
        if s == shape:
            ordered.append((rows // repeat, width))
            repeats.append(1)
        elif all(v == 1 for v in s):
            ordered.append((1, 1))
            repeats.append(1)
        else:
            ordered.append((1, width))
            repeats.append(repeat)
    return (rows // repeat, width), ordered, repeats


def _vectorized(ins: str, outs: str, op: str, preamble: str):
    """The program's 16-byte-access kernel, or None for a parameter dtype it does not take."""
    try:
        return Vectorized(ins, outs, op, "ember_fused", preamble=preamble)
    except ValueError:
        return None


@overrides.register(FusedElementwise, "cpu")
def _fused_cpu(op: FusedElementwise, xp, *inputs):
    """One numba loop once its kernel is compiled; meanwhile (and for float16 / bfloat16, which
    numba lacks) NumPy ``out=`` steps into buffers that die within the program (and the
    reusable input's)."""
    k = op._kernel
    if k is None:
        k = op._request_kernel(inputs)
    if k is not False and k.fn is not None:
        out = op._run_kernel(k.fn, inputs)
        if out is not NotImplemented:
            return out
    return op._run_numpy(inputs)


@overrides.register(FusedElementwise, "cuda")
def _fused_cuda(op: FusedElementwise, xp, *inputs):
    """One generated CUDA ``ElementwiseKernel`` for the whole program (float16, bfloat16,
    float32 or float64 output; see ``FusedElementwise._run_cupy``)."""
    if op.dtype not in CTYPES or not _fused(xp):
        return NotImplemented
    return op._run_cupy(xp, inputs)


def elementwise_fusion(graph: Graph) -> Graph:
    """A copy of ``graph`` where each group of two or more elementwise nodes (see above) is
    one ``FusedElementwise`` node, defining the group's root value. A 0-d fusable value a group
    reads is copied into its program (with the 0-d values it is made of); the node stays only
    while something outside a group still reads it."""
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
    assigned: set = set()  # ids of nodes a group owns (dropped with it)
    copied: set = set()  # ids of 0-d nodes some group recomputes
    needed: set = set()  # ids read by a node that stays (set after all its readers are seen)
    dead: set = set()  # copied 0-d nodes nothing outside a group reads: dropped
    groups = []
    drop: set = set()  # the values groups own, other than their roots
    big = _jit.enabled()  # one large op alone is worth a kernel too (one pass, no temporaries)
    for i in range(len(g.nodes) - 1, -1, -1):
        root = g.nodes[i]
        rid = root.output.id
        if rid in assigned:
            continue
        if rid in copied and rid not in needed and rid not in keep:
            dead.add(rid)
            continue
        if not fusable(root):
            needed.update(x.id for x in root.inputs)
            continue
        members, owned = _group(root, uses, keep, pos, barrier_before[i], assigned)
        out = root.output
        if len(members) < 2 and not (
            big
            and out.dtype.name in _jit.NUMBA_TYPES
            and (math.prod(out.shape) >= SINGLE_MIN or root.op.numpy_passes > 1)
        ):
            needed.update(x.id for x in root.inputs)
            continue
        assigned.update(owned)
        copied.update(m for m in members if m not in owned)
        for n in members.values():
            needed.update(x.id for x in n.inputs if x.id not in members)
        groups.append((root, sorted(members.values(), key=lambda n: pos[n.output.id])))
        drop.update(owned - {rid})
    if not groups:
        return g
    assert not drop & needed, "elementwise_fusion: a dropped value is still read"
    drop |= dead
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
            texts[k] = text(op, parts)
        out = root.output
        types = tuple((n.output.dtype.name, tuple(n.output.shape)) for n in members)
        if all(t == (out.dtype.name, tuple(out.shape)) for t in types):
            types = ()
        root.op = FusedElementwise.make(
            texts[len(prog) - 1], prog, n_in, out.shape, out.dtype.name, types=types
        )
        root.inputs = tuple(ext)
    g.nodes = [n for n in g.nodes if n.output.id not in drop]
    return g


def _group(root, uses, keep, pos, barrier, assigned) -> tuple[dict, set]:
    """``({value id: node}, owned ids)`` of the group rooted at ``root``: the nodes it owns
    (the root, and values of its shape and dtype read by nothing outside what it owns) and the
    0-d fusable nodes it recomputes (any float dtype, read by anything). Nothing computed
    before ``barrier`` (a state write) joins."""
    out = root.output
    members = {out.id: root}
    owned = {out.id}
    grew = True
    while grew:
        grew = False
        for m in list(members.values()):
            for x in m.inputs:
                if x.kind != "node" or x.id in members or pos[x.id] <= barrier:
                    continue
                if not fusable(x.node):
                    continue
                if (
                    x.id not in assigned
                    and x.id not in keep
                    and x.shape == out.shape
                    and x.dtype == out.dtype
                    and all(u.output.id in owned for u in uses.get(x.id, ()))
                ):
                    owned.add(x.id)
                elif x.shape != ():
                    continue
                members[x.id] = x.node
                grew = True
    return members, owned


__all__ = ["FusedElementwise", "elementwise_fusion"]
