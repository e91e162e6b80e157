"""The memory plan: value lifetimes, buffer reuse, and the peak bytes of a run.

``memory_plan(graph)`` walks the nodes in order and gives every array-producing node value a
buffer: a value lives from its node to its last reader (views, ``is_view`` ops and optimizer
updates, share their input's buffer and extend its life; outputs and stored values live to the
end). With ``reuse=True`` a buffer whose value is dead is handed to the next value that fits
(best fit), and a fused elementwise node allowed to overwrite a dying input (``reuse``) writes
its output into that input's buffer. ``plan.peak_bytes`` is the bytes of all buffers the plan
needs; ``plan.live_peak_bytes`` the most bytes live at once (what a run that frees each array
after its last use holds, which is what ``ember.static.executor`` does); with ``reuse=False``
every value keeps its own buffer and ``peak_bytes`` is the sum of all values.

``reuse_buffers(graph)`` is the pass that marks each ``FusedElementwise`` node whose input is
an intermediate read by nothing else, with its shape and dtype and made by an op known to return
a fresh array: at run time the node writes into that array instead of allocating. A fused
node whose result is stored into a state array it reads, read by nothing after it, writes that
array in place (an optimizer's update of a moment or a parameter: no copy at the store); so
does any other op that takes ``out=`` (``writes_out``: a batch norm's running statistics, a
step counter's increment), run as ``InPlace(op, index)``.

>>> import numpy as np
>>> from ember.static import Graph
>>> from ember.ops.elementwise import Exp
>>> g = Graph("chain")
>>> v = g.add_input((1000,), np.float32, "x")
>>> for _ in range(8):
...     v = g.add_node(Exp(), [v], (1000,), np.float32)
>>> g.outputs.append(v)
>>> memory_plan(g, reuse=False).peak_bytes, memory_plan(g).peak_bytes
(32000, 8000)
"""

from __future__ import annotations

from dataclasses import dataclass

from ...backend import overrides
from ...backend.arrays import owner as memory_owner
from ...backend.arrays import writeable
from ...ops.base import Op
from ..ir import Assign, Graph
from ..trace import ArrayRef
from ._util import clone, consumers, has_side_effects, is_known_shape, nbytes, roots, stored
from .fuse import FRESH, FusedElementwise


@dataclass(frozen=True)
class InPlace(Op):
    """``op`` writing its result into its input ``index``: the state array the node updates and
    stores, which nothing reads after it (``reuse_buffers``), so the store finds the value in
    place, with no copy. ``op`` takes ``out=`` (``writes_out``) and, as eager in-place forms
    have it, may be given one of its own inputs there.

    >>> import numpy as np
    >>> from ember.ops.elementwise import ADD
    >>> a = np.ones(2, np.float32)
    >>> InPlace(ADD, 0).forward(np, a, np.ones(2, np.float32)) is a, a
    (True, array([2., 2.], dtype=float32))
    """

    op: Op
    index: int
    differentiable = False

    @property
    def name(self) -> str:
        return f"{self.op.name}[into {self.index}]"

    def forward(self, xp, *arrays):
        return overrides.run(self.op, xp, *arrays, out=arrays[self.index])

    def infer(self, *specs):
        return self.op.infer(*specs)


class MemoryPlan:
    """Buffers for the node values of a graph (see the module docstring).

    ``assignment``: value id -> buffer index (views map to their base's buffer);
    ``buffers``: the size of each buffer in bytes; ``peak_bytes``: their sum;
    ``live_peak_bytes``: the most bytes live at one time; ``unknown``: ids of values whose
    size is not known before the run (not counted)."""

    def __init__(self, graph: Graph, reuse: bool = True) -> None:
        self.graph = graph
        self.reuse = reuse
        nodes = [n for n in graph.nodes if type(n.op) is not Assign]
        base: dict = {}  # value id -> id of the value owning its buffer

        def owner(v):
            return base.get(v.id, v.id)

        for n in nodes:
            op = n.op
            if getattr(op, "is_view", False) and n.inputs:
                base[n.output.id] = owner(n.inputs[0])
            elif type(op) is InPlace:
                base[n.output.id] = owner(n.inputs[op.index])
        end = len(nodes)
        forever = roots(graph) | stored(graph) | {v.id for v in graph.outputs}
        last: dict = {}
        for k, n in enumerate(nodes):
            for x in n.inputs:
                last[owner(x)] = k
            last.setdefault(owner(n.output), k)
        for vid in forever:
            last[base.get(vid, vid)] = end
        for n in graph.nodes:  # Assign: the stored value lives to the end
            if type(n.op) is Assign:
                last[owner(n.inputs[1])] = end
        self.unknown = set()
        self.assignment: dict = {}
        self.buffers: list = []
        free: list = []  # indices of free buffers
        dying: dict = {}  # step -> buffer indices whose value's last reader is that step
        live = 0
        self.live_peak_bytes = 0
        for k, n in enumerate(nodes):
            out = n.output
            if out.id in base:
                b = self.assignment.get(base[out.id])
                if b is not None:
                    self.assignment[out.id] = b
            elif not is_known_shape(out.shape):
                self.unknown.add(out.id)
            else:
                size = nbytes(out)
                b = None
                op = n.op
                if reuse and type(op) is FusedElementwise and op.reuse >= 0:
                    src = owner(n.inputs[op.reuse])
                    sb = self.assignment.get(src)
                    if sb is not None and last.get(src) == k and sb in dying.get(k, ()):
                        b = sb  # written in place: the input's buffer passes to the output
                        dying[k].remove(sb)
                        live -= self.buffers[sb]
                if b is None and reuse:
                    fits = [i for i in free if self.buffers[i] >= size]
                    if fits:
                        b = min(fits, key=lambda i: self.buffers[i])
                        free.remove(b)
                if b is None:
                    b = len(self.buffers)
                    self.buffers.append(size)
                self.assignment[out.id] = b
                live += self.buffers[b]
                self.live_peak_bytes = max(self.live_peak_bytes, live)
                dies = last.get(out.id, k)
                if dies < end:
                    dying.setdefault(dies, []).append(b)
            for i in dying.pop(k, ()):
                live -= self.buffers[i]
                if reuse:
                    free.append(i)
        self.peak_bytes = sum(self.buffers)

    def __repr__(self) -> str:
        return (
            f"<MemoryPlan {self.graph.name}: {len(self.buffers)} buffers, "
            f"peak {self.peak_bytes} bytes, live peak {self.live_peak_bytes} bytes>"
        )


def memory_plan(graph: Graph, reuse: bool = True) -> MemoryPlan:
    """The buffers a run of ``graph`` needs, with or without reuse (see the module docstring)."""
    return MemoryPlan(graph, reuse)


def reuse_buffers(graph: Graph) -> Graph:
    """A copy of ``graph`` where each fused elementwise node may write its output into an
    input that dies there (see the module docstring)."""
    g = clone(graph)
    uses = consumers(g)
    keep = roots(g) | stored(g) | {v.id for v in g.outputs}
    into, sink = _stores_in_place(g, uses)
    for n, last in sink:  # after the old value's last reader, its stores after it
        g.nodes.remove(n)
        g.nodes.insert(g.nodes.index(last) + 1, n)
        for a in [a for a in uses.get(n.output.id, ()) if g.nodes.index(a) < g.nodes.index(n)]:
            g.nodes.remove(a)
            g.nodes.insert(g.nodes.index(n) + 1, a)
    for n in g.nodes:
        op = n.op
        if n.output.id in into:
            i = into[n.output.id]
            n.op = op.with_reuse(i) if type(op) is FusedElementwise else InPlace(op, i)
            continue
        if type(op) is not FusedElementwise:
            continue
        for i, x in enumerate(n.inputs):
            if (
                x.kind == "node"
                and type(x.node.op) in FRESH | {FusedElementwise}
                and x.shape == op.shape
                and x.dtype.name == op.dtype
                and x.id not in keep
                and len(uses.get(x.id, ())) == 1
            ):
                n.op = op.with_reuse(i)
                break
    return g


def _stores_in_place(g: Graph, uses: dict) -> tuple[dict, list]:
    """``({node output id: input index}, moves)``: where a fused node's, or an ``out=``-taking op's,
    result is stored (``Assign``) into a state array it reads itself, and nothing reads that
    array's old value later: the node may write there directly (an optimizer's moment and
    parameter updates, running statistics), and the store finds its value already in place.
    A node that later nodes' reads of the old value would forbid, but that only computes the
    stored value from that state and constants (a step counter's ``+ 1``, which the fused
    updates recompute from the old count), is in ``moves`` with the last of those readers, to
    be moved after it."""
    targets: dict = {}  # value id -> the state values it is stored into
    for n in g.nodes:
        if type(n.op) is Assign:
            targets.setdefault(n.inputs[1].id, []).append(n.inputs[0])
    shared: dict = {}  # id of a state array's root -> how many state values read it
    for v in g.state:
        if isinstance(v.ref, ArrayRef):
            r = memory_owner(v.ref.array)
            shared[id(r)] = shared.get(id(r), 0) + 1
    outputs = {v.id for v in g.outputs}
    pos = {id(n): i for i, n in enumerate(g.nodes)}
    into, sink = {}, []
    for n in g.nodes:
        op = n.op
        stores = targets.get(n.output.id, ())
        fused = type(op) is FusedElementwise
        if not (fused or getattr(op, "writes_out", False)) or len(stores) != 1:
            continue
        (s,) = stores
        if (
            s.kind != "state"
            or not isinstance(s.ref, ArrayRef)
            or s.id in outputs
            or s.shape != n.output.shape
            or s.dtype != n.output.dtype
            or shared.get(id(memory_owner(s.ref.array))) != 1  # another state value aliases it
            or not writeable(s.ref.array)
            or s not in n.inputs
        ):
            continue
        later = [
            u
            for u in uses.get(s.id, ())
            if u is not n and type(u.op) is not Assign and pos[id(u)] > pos[id(n)]
        ]
        last = max(later, key=lambda u: pos[id(u)]) if later else None
        if (
            later
            and (
                any(type(u.op) is not Assign for u in uses.get(n.output.id, ()))
                or any(x is not s and x.kind != "const" for x in n.inputs)
                or any(  # a write while the graph runs: the node would read after it
                    has_side_effects(m.op) and type(m.op) is not Assign
                    for m in g.nodes[pos[id(n)] + 1 : pos[id(last)] + 1]
                )
            )
        ):
            continue
        if later:  # only stored, of the state and constants: it runs after the old value's
            sink.append((n, last))  # readers (a step counter)
        into[n.output.id] = n.inputs.index(s)
    return into, sink


__all__ = ["InPlace", "MemoryPlan", "memory_plan", "reuse_buffers"]
