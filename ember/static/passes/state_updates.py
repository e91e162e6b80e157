"""One kernel per parameter: a fused update that reads other fused updates of state writes them.

After ``reuse_buffers``, an optimizer step is a few fused nodes per parameter: Adam's moments
``m`` and ``v``, each written in place into its state array, then the parameter's update, which
reads the new moments. ``merge_state_updates`` folds such a moment node into the node that reads
it: the reader's program computes the moment too and writes it into the moment's state array
(``FusedElementwise.extra``), so one pass over memory reads ``p``, ``g``, ``m`` and ``v`` once and
writes the three, instead of three kernels re-reading the gradient and the moments. The store of
the folded moment (its ``Assign``) goes: the kernel has written it in place.

A node folds into its reader when it writes a state array in place (``reuse_buffers`` allowed
it: nothing reads that array after it), its result has the reader's shape and dtype, only the
reader and its store read it, and no node between the two writes anything or overwrites a value
it reads. The reader's own result must be stored (so it runs whenever the step runs).

>>> import ember
>>> from ember.static import passes
>>> w = ember.nn.Parameter(ember.ones(3))
>>> opt = ember.optim.Adam([w], lr=0.1)
>>> @ember.compile
... def step():
...     opt.zero_grad()
...     (w * w).sum().backward()
...     opt.step()
>>> step()
>>> fused = [n for n in step.optimized_graph.nodes if type(n.op) is passes.FusedElementwise]
>>> [len(n.op.extra) for n in fused if n.op.extra]
[2]
"""

from __future__ import annotations

import re

from ..ir import Assign, Graph
from ..trace import ArrayRef
from ._util import clone, consumers, has_side_effects
from .fuse import FusedElementwise


def merge_state_updates(graph: Graph) -> Graph:
    """A copy of ``graph`` where each fused in-place state update read by one other stored
    fused node is computed by that node (see the module docstring)."""
    g = clone(graph)
    uses = consumers(g)
    stores: dict = {}  # value id -> the Assign nodes storing it
    for n in g.nodes:
        if type(n.op) is Assign:
            stores.setdefault(n.inputs[1].id, []).append(n)
    outputs = {v.id for v in g.outputs}
    pos = {id(n): i for i, n in enumerate(g.nodes)}
    gone: set = set()  # ids of the folded nodes and of their stores
    for n in g.nodes:
        if type(n.op) is not FusedElementwise or n.output.id not in stores:
            continue
        parts = [
            x.node
            for x in dict.fromkeys(n.inputs)
            if x.kind == "node" and _folds(x.node, n, g, uses, stores, outputs, pos)
        ]
        if not parts:
            continue
        n.op, n.inputs = _merged(parts, n)
        for a in parts:
            gone.add(a.output.id)
            gone.update(s.output.id for s in stores[a.output.id])
    g.nodes = [n for n in g.nodes if n.output.id not in gone]
    return g


def _folds(a, reader, g: Graph, uses: dict, stores: dict, outputs: set, pos: dict) -> bool:
    """Whether node ``a`` may be computed by ``reader`` (see the module docstring)."""
    op = a.op
    if type(op) is not FusedElementwise or op.reuse < 0:
        return False
    out = a.output
    if out.id in outputs or out.shape != reader.output.shape or out.dtype != reader.output.dtype:
        return False
    mine = stores.get(out.id, ())
    if len(mine) != 1 or mine[0].inputs[0] is not a.inputs[op.reuse]:
        return False
    target = mine[0].inputs[0]
    if target.kind != "state" or not isinstance(target.ref, ArrayRef) or target.id in outputs:
        return False
    if any(u is not reader and u is not mine[0] for u in uses.get(out.id, ())):
        return False
    read = {x.id for x in a.inputs}
    for m in g.nodes[pos[id(a)] + 1 : pos[id(reader)]]:
        if has_side_effects(m.op):
            return False
        mop = m.op
        if type(mop) is FusedElementwise and mop.reuse >= 0 and m.inputs[mop.reuse].id in read:
            return False
    return True


def _merged(parts: list, node) -> tuple:
    """``(op, inputs)`` of ``node`` computing ``parts`` too, each written into its state."""
    folded = {a.output.id for a in parts}
    inputs: list = []
    where: dict = {}

    def slot(v) -> int:
        i = where.get(v.id)
        if i is None:
            i = where[v.id] = len(inputs)
            inputs.append(v)
        return i

    for a in parts:
        for x in a.inputs:
            slot(x)
    for x in node.inputs:
        if x.id not in folded:
            slot(x)
    n_in = len(inputs)
    program: list = []
    types: list = []
    result: dict = {}  # folded value id -> its instruction in the merged program
    extra = []
    texts = []
    names: dict = {}  # instruction -> how the text names its result (``x3'``: x3's new value)
    for a in parts + [node]:
        op = a.op
        local = [where[x.id] if x.id not in folded else n_in + result[x.id] for x in a.inputs]
        base = len(program)
        for iop, args in op.program:
            program.append(
                (
                    iop,
                    tuple(
                        local[k] if k < op.n_inputs else n_in + base + k - op.n_inputs for k in args
                    ),
                )
            )
        types.extend(op.types or [(op.dtype, tuple(op.shape))] * len(op.program))
        extra += [(base + j, local[i]) for j, i in op.extra]  # what ``a`` folded before
        expr = _renumber(op.expr, local, n_in, names)
        if a is node:
            texts.append(expr)
        else:
            result[a.output.id] = len(program) - 1
            target = where[a.inputs[op.reuse].id]
            extra.append((len(program) - 1, target))
            names[len(program) - 1] = f"x{target}'"
            *before, last = expr.split("; ")
            texts += [*before, f"x{target}' = {last}"]
    out = node.op
    if all(t == (out.dtype, tuple(out.shape)) for t in types):
        types = []
    reuse = where[node.inputs[out.reuse].id] if out.reuse >= 0 else -1
    op = FusedElementwise.make(
        "; ".join(texts), tuple(program), n_in, out.shape, out.dtype, reuse, tuple(types),
        tuple(extra),
    )  # fmt: skip
    return op, tuple(inputs)


def _renumber(expr: str, local: list, n_in: int, names: dict) -> str:
    """``expr`` (over its node's ``x0, x1...``) over the merged node's inputs; a folded value
    reads as its state's new value (``x3'``)."""

    def sub(m):
        k = local[int(m.group(1))]
        return f"x{k}" if k < n_in else names[k - n_in]

    return re.sub(r"\bx(\d+)\b", sub, expr)


__all__ = ["merge_state_updates"]
