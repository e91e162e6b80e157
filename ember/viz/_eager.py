"""Pictures of eager autograd history: a Tensor's ``grad_fn`` and everything that feeds it.

Each recorded op is one grey box named as PyTorch names it (``MmBackward0``); each leaf
that requires grad is a blue ``AccumulateGrad`` box with its name (from ``params``) and type;
edges go the way data flowed in the forward pass, labelled with the tensor that flowed.
"""

from __future__ import annotations

import numpy as np

from .._node import Node
from .._tensor import Tensor
from ..static.ir import type_str_of
from ._dot import Dot


def tensor_type(t: Tensor) -> str:
    """``f32[5,3]`` for a tensor (the type notation of ``ember.static`` graphs)."""
    return type_str_of(tuple(t.shape), np.dtype(t.dtype.np))


def draw_eager(dot: Dot, roots: list, names: dict, shapes: bool) -> None:
    """Add the history of ``roots`` (Tensors or autograd Nodes) to ``dot``."""
    ids: dict[int, str] = {}  # id(Node) or id(leaf Tensor) -> DOT node id
    keep: list = []  # keep what is keyed by id alive while drawing
    stack: list[Node] = []

    def visit(x) -> str:
        key = id(x)
        nid = ids.get(key)
        if nid is None:
            keep.append(x)
            if isinstance(x, Node):
                nid = dot.node([x.name()], "grad_fn")
                stack.append(x)
            else:  # a leaf that requires grad
                lines = ["AccumulateGrad"]
                if key in names:
                    lines.append(names[key])
                lines.append(tensor_type(x))
                nid = dot.node(lines, "leaf")
            ids[key] = nid
        return nid

    outputs = []
    for r in roots:
        if isinstance(r, Node):
            visit(r)
            continue
        src = r._node if r._node is not None else (r if r._requires_grad else None)
        if src is not None:
            src = visit(src)
        outputs.append((r, src))
    for i, (t, src) in enumerate(outputs):
        title = names.get(id(t)) or ("output" if len(outputs) == 1 else f"output {i}")
        lines = [title, tensor_type(t)]
        if src is None:
            lines.append("(no autograd history)")
        out = dot.node(lines, "output")
        if src is not None:
            dot.edge(src, out)

    while stack:  # iterative: RNN histories thousands of nodes deep are fine
        node = stack.pop()
        me = ids[id(node)]
        slot = getattr(node.op, "index", None) if type(node.op).__name__ == "_OutputSlot" else None
        for inp, e in zip(node.inputs, node.edges):
            if e is None:
                continue
            src = visit(e)
            if not shapes:
                text = None
            elif slot is not None:  # one output of a user Function with several
                text = f"output {slot}"
            else:
                text = tensor_type(inp)
            dot.edge(src, me, text)
