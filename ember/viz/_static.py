"""Pictures of ``ember.static`` graphs: the ops of a ``Graph`` and the values between them.

Which ops belong to the backward pass is read from the graph's structure (the IR does not
mark it): the *forward* ops are those that the forward results depend on, the other
computing ops are *backward* ops (gradients and the arithmetic of updates), and ops with side
effects (``Assign``, random draws) and ``Group`` are drawn as *effects*; an ``Assign``
box names the value it stores into (``→ w``) rather than drawing an edge back up to it. The forward
results are the ``forward`` values when given, else every ``y`` of ``static.gradients(y, ...)``
(found by the ``ZerosLike(y) + 1`` seed it builds), else the values drawn for (the graph's
outputs, or the tensors given).
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..ops.base import Op
from ..ops.elementwise import Add, ZerosLike
from ..static.dims import Dim
from ..static.ir import Assign, Graph, Group, Value, format_literal, format_node, op_fields
from ..static.ir import type_str as _type_str
from ._dot import Dot, shorten

_MAX_FIELDS = 3  # attributes shown under an op's name (the tooltip has them all)


def _is_effect(op: Op) -> bool:
    return getattr(op, "has_side_effects", False) or isinstance(op, Group)


def _reads(node):
    """The inputs a node reads (an ``Assign`` target is a destination, not a read)."""
    return node.inputs[1:] if isinstance(node.op, Assign) else node.inputs


def _seeds(nodes) -> list[Value]:
    """Every ``y`` of ``static.gradients(y, ...)``: the gradient seed is ``ZerosLike(y) + 1``."""
    found = []
    for n in nodes:
        if isinstance(n.op, Add) and len(n.inputs) == 2:
            z, one = n.inputs
            if (
                z.node is not None
                and isinstance(z.node.op, ZerosLike)
                and one.kind == "const"
                and one.data is not None
                and one.data.size == 1
                and float(one.data.reshape(())) == 1.0
            ):
                found.append(z.node.inputs[0])
    return found


def _ancestors(values, *, through_effects: bool = True) -> set[int]:
    """ids of the nodes (keyed by their output value's id) that ``values`` depend on."""
    seen: set[int] = set()
    stack = [v for v in values if v.node is not None]
    while stack:
        v = stack.pop()
        if v.id in seen:
            continue
        node = v.node
        if not through_effects and _is_effect(node.op):
            continue
        seen.add(v.id)
        stack.extend(x for x in _reads(node) if x.node is not None and x.id not in seen)
    return seen


def _attr(x) -> str:
    """An op attribute as in the text form, with unknown sizes by name (``x.shape[0]``)."""
    if isinstance(x, Dim):
        return repr(x)
    if isinstance(x, tuple) and any(isinstance(e, Dim) for e in x):
        inner = ", ".join(_attr(e) for e in x)
        return f"({inner},)" if len(x) == 1 else f"({inner})"
    return format_literal(x)


def _op_lines(op: Op, node, names: dict) -> list[str]:
    lines = [type(op).__name__]
    if isinstance(op, Assign):  # where it stores (an edge back up to the state tangles)
        target = node.inputs[0]
        lines.append("→ " + shorten(names.get(id(target)) or target.name or f"%{target.id}"))
    # attributes without a literal form: a tensor or a dict says nothing; an optimizer does
    fields = [(k, v) for k, v in op_fields(op) if not isinstance(v, (dict, Tensor))]
    for k, v in fields[:_MAX_FIELDS]:
        lines.append(shorten(f"{k}={_attr(v)}", 32))
    if len(fields) > _MAX_FIELDS:
        lines.append("...")
    return lines


def _value_lines(v: Value, names: dict) -> list[str]:
    name = names.get(id(v)) or v.name
    if v.kind == "const":
        data = v.data
        if type(data) is np.ndarray and data.size == 1 and name is None:
            return [str(data.reshape(())[()])]  # the value at its own precision: 0.1, not 0.1000...
        return [name or "const", _type_str(v)]
    return [name or f"%{v.id}", _type_str(v)]


def draw_static(
    dot: Dot,
    graph: Graph,
    targets: list[Value] | None,
    forward: list[Value] | None,
    names: dict,
    shapes: bool,
) -> None:
    """Add ``graph`` (or the part of it that ``targets`` need) to ``dot``."""
    if targets is None:
        nodes = list(graph.nodes)
        outputs = list(graph.outputs)
    else:
        need = _ancestors(targets)
        nodes = [n for n in graph.nodes if n.output.id in need]
        outputs = [v for v in targets if v.node is None or not isinstance(v.node.op, Group)]
    if forward is None:
        # the losses of ``static.gradients`` if it was used, else what the picture ends in
        roots = _seeds(nodes) or outputs
    else:
        roots = list(forward)
    fwd = _ancestors(roots, through_effects=False) if roots else None

    ids: dict[int, str] = {}

    def value_node(v: Value) -> str:
        nid = ids.get(v.id)
        if nid is None:
            nid = dot.node(_value_lines(v, names), v.kind, f"%{v.id}: {_type_str(v)}")
            ids[v.id] = nid
        return nid

    if targets is None:
        for v in graph.inputs:
            value_node(v)
    for n in nodes:
        op = n.op
        if _is_effect(op):
            kind = "effect"
        elif fwd is None or n.output.id in fwd:
            kind = "op"
        else:
            kind = "backward"
        me = dot.node(_op_lines(op, n, names), kind, format_node(n))
        ids[n.output.id] = me
        reads = _reads(n)
        for x in reads:
            src = ids.get(x.id) if x.node is not None else value_node(x)
            if src is None:  # defined by a node outside the picture (cannot happen in order)
                src = value_node(x)
            dot.edge(src, me, _type_str(x) if shapes else None)
    for i, v in enumerate(outputs):
        title = names.get(id(v)) or ("output" if len(outputs) == 1 else f"output {i}")
        out = dot.node([title], "output")
        src = ids.get(v.id) if v.node is not None else value_node(v)
        dot.edge(src, out, _type_str(v) if shapes else None)
