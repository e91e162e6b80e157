"""Dead-code elimination: drop the nodes that neither an output nor a side effect needs.

Kept: every node whose value a graph output reads (transitively), and every node with
``has_side_effects`` (``Assign``, optimizer updates, random draws) with all it reads. A node
that only feeds a ``Group`` nobody returns is dead. Constants and state values that nothing
reads any more are dropped too.

>>> import numpy as np
>>> from ember.static import Graph
>>> from ember.ops.elementwise import Exp, Neg
>>> g = Graph("f")
>>> x = g.add_input((2,), np.float32, "x")
>>> unused = g.add_node(Exp(), [x], (2,), np.float32)
>>> y = g.add_node(Neg(), [x], (2,), np.float32)
>>> g.outputs.append(y)
>>> print(dead_code_elimination(g))
graph f(%0: f32[2] "x") {
  %2: f32[2] = Neg(%0)
  return %2
}
"""

from __future__ import annotations

from ..ir import Assign, Graph
from ._util import clone, drop_unused, roots


def dead_code_elimination(graph: Graph) -> Graph:
    """A copy of ``graph`` without the nodes no output or side effect needs."""
    g = clone(graph)
    live = roots(g)
    keep = []
    for n in reversed(g.nodes):
        if n.output.id not in live:
            continue
        keep.append(n)
        ins = n.inputs[1:] if type(n.op) is Assign else n.inputs
        live.update(x.id for x in ins)
    g.nodes = keep[::-1]
    drop_unused(g)
    return g


__all__ = ["dead_code_elimination"]
