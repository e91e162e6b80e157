"""Scheduling: ops that start asynchronous work (``op.schedule_early``, DDP's
``AllReduceStart``) run as soon as the values they read can be made.

A traced backward finishes every weight gradient late: the engine's order runs the nodes that
feed the leaves (a weight's transpose) after the whole input-gradient chain, so a bucket's
all-reduce recorded at its last gradient would start only once backward is over, and nothing
would overlap it. ``start_collectives_early`` moves each such node up, together with the nodes
it needs that are not placed yet (in their original order: a layer's weight-gradient matmul),
so the rest of backward runs while the collective is in flight; its wait stays where it was.

Safety: only pure nodes move, and only earlier. A start moves only once every side-effect node
before it is placed (side effects keep their order: the ranks' collectives pair up), and the
nodes pulled with it must be pure: no side effect, no fused node writing a state array in place
(``reuse`` of a non-node input, ``extra``). Starts keep their order among themselves.

>>> import numpy as np
>>> from ember.static import Graph
>>> from ember.ops.elementwise import Exp, Neg
>>> g = Graph("s")
>>> x = g.add_input((2,), np.float32, "x")
>>> a = g.add_node(Exp(), [x], (2,), np.float32)
>>> b = g.add_node(Neg(), [x], (2,), np.float32)
>>> g.outputs += [a, b]
>>> [type(n.op).__name__ for n in start_collectives_early(g).nodes]
['Exp', 'Neg']
"""

from __future__ import annotations

from ..ir import Graph
from ._util import clone, has_side_effects


def _movable(node) -> bool:
    op = node.op
    if has_side_effects(op) or getattr(op, "extra", ()):
        return False
    r = getattr(op, "reuse", -1)
    return not (isinstance(r, int) and r >= 0 and node.inputs[r].kind != "node")


def start_collectives_early(graph: Graph) -> Graph:
    """A copy of ``graph`` with each ``schedule_early`` node placed as early as the values it
    reads allow (see the module docstring); ``graph`` itself when it has none."""
    if not any(getattr(n.op, "schedule_early", False) for n in graph.nodes):
        return graph  # nothing to move (a graph without collectives: no copy)
    g = clone(graph)
    nodes = g.nodes
    early = [i for i, n in enumerate(nodes) if getattr(n.op, "schedule_early", False)]
    starts = set(early)
    producer = {n.output.id: i for i, n in enumerate(nodes)}
    effects = [i for i, n in enumerate(nodes) if has_side_effects(n.op) and i not in starts]
    placed = [False] * len(nodes)
    order: list = []
    blocked = -1  # an unplaced node the front start waits for

    def place(i: int) -> None:
        placed[i] = True
        order.append(nodes[i])

    def closure(s: int):
        """The unplaced nodes ``s`` needs (indices), or None when one of them cannot move."""
        need, stack = set(), [s]
        while stack:
            for x in nodes[stack.pop()].inputs:
                j = producer.get(x.id)
                if j is None or placed[j] or j in need:
                    continue
                if not _movable(nodes[j]):
                    return None, j
                need.add(j)
                stack.append(j)
        return need, -1

    def pull() -> None:
        nonlocal blocked
        while early:
            s = early[0]
            if placed[s]:
                early.pop(0)
                continue
            if blocked >= 0 and not placed[blocked]:
                return
            first_effect = next((e for e in effects if e < s and not placed[e]), None)
            if first_effect is not None:
                blocked = first_effect
                return
            need, blocked = closure(s)
            if need is None:
                return
            for j in sorted(need):
                place(j)
            place(s)
            early.pop(0)

    pull()
    for i in range(len(nodes)):
        if not placed[i]:
            place(i)
            pull()
    g.nodes[:] = order
    return g


__all__ = ["start_collectives_early"]
