"""Constant folding: nodes whose inputs are all constants become constants.

Each such node is evaluated once with its op's own ``forward`` and its output value turns into
a constant (same id). Skipped: ops with ``has_side_effects`` (random draws, updates), ops whose
attributes hold unknown sizes, results over ``limit`` bytes (1 MiB: a folded constant is kept
in memory for the graph's lifetime), and nodes whose evaluation fails (left to fail, with the
node named, when the graph runs).

>>> import numpy as np
>>> from ember.static import Graph
>>> from ember.ops.elementwise import ADD, MUL
>>> g = Graph("f")
>>> x = g.add_input((2,), np.float32, "x")
>>> c = g.add_constant(np.float32(2.0) * np.ones((), np.float32))
>>> c2 = g.add_node(MUL, [c, c], (), np.float32)
>>> g.outputs.append(g.add_node(ADD, [x, c2], (2,), np.float32))
>>> print(constant_folding(g))
graph f(%0: f32[2] "x") {
  const %2: f32[] = 4.0
  %3: f32[2] = Add(%0, %2)
  return %3
}
"""

from __future__ import annotations

import numpy as np

from ...backend import overrides, xp_of
from ...backend.arrays import freeze
from ..dims import has_dims
from ..ir import Graph
from ._util import clone, drop_unused, has_side_effects, is_known_shape, nbytes

LIMIT = 1 << 20


def constant_folding(graph: Graph, limit: int = LIMIT) -> Graph:
    """A copy of ``graph`` with every foldable all-constant node replaced by its value."""
    g = clone(graph)
    keep = []
    for n in g.nodes:
        out = n.output
        if (
            not n.inputs
            or any(x.kind != "const" for x in n.inputs)
            or has_side_effects(n.op)
            or not is_known_shape(out.shape)
            or nbytes(out) > limit
            or has_dims(n.op)
        ):
            keep.append(n)
            continue
        datas = [x.data for x in n.inputs]
        try:
            xp = xp_of(datas[0])
            with np.errstate(all="ignore"):
                r = overrides.run(n.op, xp, *datas)
            if xp is np:
                r = np.asarray(r)
            if tuple(r.shape) != out.shape:
                raise ValueError("shape")
            if r.dtype != out.dtype:
                r = r.astype(out.dtype)
        except Exception:  # noqa: BLE001 - not foldable: the run reports it with the node
            keep.append(n)
            continue
        if r.base is not None or not r.flags.c_contiguous:
            # own the memory: a view would keep a large input alive, or alias it
            r = xp.ascontiguousarray(r).copy() if r.size > 1 else r.copy()
        freeze(r)
        out.kind, out.data, out.node = "const", r, None
        g.constants.append(out)
    g.nodes = keep
    drop_unused(g)
    return g


__all__ = ["constant_folding"]
