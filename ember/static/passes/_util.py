"""Shared helpers of the graph passes: copying a graph, finding uses, rewiring values."""

from __future__ import annotations

from ...backend.arrays import freeze
from ..ir import Assign, Graph, Value


def clone(graph: Graph) -> Graph:
    """A copy of ``graph`` with new ``Value`` and ``Node`` objects under the same ids (so the
    text of a pass's result lines up with its input); constant data and state refs are shared,
    not copied."""
    from ..ir import Node

    g = type(graph)(graph.name)
    g._next = graph._next
    new: dict = {}

    def copy(v: Value) -> Value:
        c = g.value_type(g, v.id, v.shape, v.dtype, v.kind, v.name)
        c.data, c.ref, c.device = v.data, v.ref, v.device
        new[v.id] = c
        return c

    g.inputs = [copy(v) for v in graph.inputs]
    g.state = [copy(v) for v in graph.state]
    g.constants = [copy(v) for v in graph.constants]
    for n in graph.nodes:
        out = copy(n.output)
        node = Node(n.op, tuple(new[x.id] for x in n.inputs), out)
        out.node = node
        g.nodes.append(node)
    g.outputs = [new[v.id] for v in graph.outputs]
    return g


def has_side_effects(op) -> bool:
    return bool(getattr(op, "has_side_effects", False))


def consumers(graph: Graph) -> dict:
    """``value id -> [node, ...]`` of the nodes reading each value (in graph order)."""
    out: dict = {}
    for n in graph.nodes:
        for x in n.inputs:
            out.setdefault(x.id, []).append(n)
    return out


def roots(graph: Graph) -> set:
    """Ids of the values that must be computed: outputs, and every side-effect node's output."""
    keep = {v.id for v in graph.outputs}
    keep.update(n.output.id for n in graph.nodes if has_side_effects(n.op))
    return keep


def stored(graph: Graph) -> set:
    """Ids of values stored by an ``Assign`` (they outlive the run)."""
    return {n.inputs[1].id for n in graph.nodes if type(n.op) is Assign}


def replace_all_uses(graph: Graph, mapping: dict) -> None:
    """Rewire every read of a value id in ``mapping`` to the mapped value (following chains),
    in node inputs and graph outputs. ``Assign`` targets are left alone (they are places)."""
    if not mapping:
        return

    def resolve(v: Value) -> Value:
        while v.id in mapping:
            v = mapping[v.id]
        return v

    for n in graph.nodes:
        if type(n.op) is Assign:
            t, x = n.inputs
            if x.id in mapping:
                n.inputs = (t, resolve(x))
        elif any(x.id in mapping for x in n.inputs):
            n.inputs = tuple(resolve(x) for x in n.inputs)
    graph.outputs = [resolve(v) for v in graph.outputs]


def drop_unused(graph: Graph) -> None:
    """Forget constants and state values that no node reads and no output names."""
    used = {x.id for n in graph.nodes for x in n.inputs} | {v.id for v in graph.outputs}
    graph.constants = [v for v in graph.constants if v.id in used]
    graph.state = [v for v in graph.state if v.id in used]


def is_known_shape(shape) -> bool:
    return all(type(s) is int for s in shape)


def nbytes(v: Value) -> int:
    n = v.dtype.itemsize
    for s in v.shape:
        n *= s
    return n


def make_node(graph: Graph, op, inputs, like: Value):
    """A new node (not yet placed in ``graph.nodes``) computing ``op(*inputs)``, typed as
    ``like`` unless ``like`` is a ``(shape, dtype)`` pair; returns the node."""
    from ..ir import Node

    shape, dtype = (like.shape, like.dtype) if isinstance(like, Value) else like
    out = graph._value(shape, dtype, "node")
    out.device = inputs[0].device if inputs else None
    node = Node(op, tuple(inputs), out)
    out.node = node
    return node


def scalar_constant(graph: Graph, value, dtype, cache: dict) -> Value:
    """A 0-d constant (one per value and dtype in ``cache``)."""
    import numpy as np

    arr = freeze(np.asarray(value, dtype=dtype))
    key = (arr.tobytes(), arr.dtype.str)
    v = cache.get(key)
    if v is None:
        v = cache[key] = graph.add_constant(arr)
    return v


def uniform_value(v: Value):
    """The single value of a constant whose elements are all equal (NumPy only), else None."""
    import numpy as np

    d = v.data
    if v.kind != "const" or type(d) is not np.ndarray or d.size == 0 or d.size > (1 << 22):
        return None
    first = d.flat[0]
    if d.size > 1 and not (d == first).all():
        return None
    return first
