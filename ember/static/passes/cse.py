"""Common-subexpression elimination: one node per distinct ``(op, inputs)``.

Ops are frozen dataclasses, so two nodes applying equal ops to the same input values compute
the same array and the later one is replaced by the earlier. Small unnamed constants of equal
dtype, shape and bytes are one value first (``-0.0`` is not ``0.0``). Ops with
``has_side_effects`` are never merged, and an optimizer update (which writes state in place
while the graph runs) ends every merge across it: a read of a parameter after its update is
not the read before it.

>>> import numpy as np
>>> from ember.static import Graph
>>> from ember.ops.elementwise import ADD, MUL
>>> g = Graph("f")
>>> x = g.add_input((2,), np.float32, "x")
>>> a = g.add_node(MUL, [x, x], (2,), np.float32)
>>> b = g.add_node(MUL, [x, x], (2,), np.float32)
>>> g.outputs.append(g.add_node(ADD, [a, b], (2,), np.float32))
>>> print(common_subexpression_elimination(g))
graph f(%0: f32[2] "x") {
  %1: f32[2] = Mul(%0, %0)
  %3: f32[2] = Add(%1, %1)
  return %3
}
"""

from __future__ import annotations

from ..ir import Assign, Graph
from ._util import clone, has_side_effects, replace_all_uses


def common_subexpression_elimination(graph: Graph) -> Graph:
    """A copy of ``graph`` where each repeated ``(op, inputs)`` is computed once."""
    g = clone(graph)
    seen: dict = {}
    mapping = _equal_constants(g)
    keep = []
    for n in g.nodes:
        if mapping and any(x.id in mapping for x in n.inputs):
            replace_all_uses_node(n, mapping)
        op = n.op
        if has_side_effects(op):
            keep.append(n)
            if type(op) is not Assign:
                seen.clear()  # it writes state while the graph runs: later reads differ
            continue
        try:
            key = (op, tuple(x.id for x in n.inputs))
            hash(key)
            prev = seen.get(key)
        except Exception:  # noqa: BLE001 - an op with unhashable or odd attributes: keep it
            keep.append(n)
            continue
        out = n.output
        if prev is not None and prev.shape == out.shape and prev.dtype == out.dtype:
            mapping[out.id] = prev
            continue
        seen[key] = out
        keep.append(n)
    g.nodes = keep
    replace_all_uses(g, mapping)
    return g


SMALL = 16  # constants up to this many elements are compared by value


def _equal_constants(g: Graph) -> dict:
    """``{id: first}`` for each small unnamed constant equal (dtype, shape, bytes) to an
    earlier one, which are dropped from ``g.constants``: the ``1.0`` that each parameter's
    optimizer rule traces becomes one value, so what is computed from it merges too."""
    first: dict = {}
    mapping: dict = {}
    for c in g.constants:
        if c.name is not None or c.data.size > SMALL:
            continue
        key = (c.data.dtype.str, c.data.shape, c.data.tobytes())
        if key in first:
            mapping[c.id] = first[key]
        else:
            first[key] = c
    if mapping:
        g.constants = [c for c in g.constants if c.id not in mapping]
    return mapping


def replace_all_uses_node(n, mapping: dict) -> None:
    if type(n.op) is Assign:
        t, x = n.inputs
        n.inputs = (t, mapping.get(x.id, x))
    else:
        n.inputs = tuple(mapping.get(x.id, x) for x in n.inputs)


__all__ = ["common_subexpression_elimination"]
