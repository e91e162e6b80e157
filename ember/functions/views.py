"""Autograd for in-place writes through views: the base tensor takes the new history.

A view Tensor carries ``_base`` (the tensor that owns the storage) and ``_view_ops`` (the view
ops that lead from the base to it). When an in-place op writes ``result`` through the view, the
base's history becomes ``CopySlices(base_old, result)`` (PyTorch's idea of the same name): its
gradient flows to ``result`` through the same view ops and to the old base everywhere else. The
view's own history becomes those view ops replayed on the new base.

Limitation (the engine's, not this module's): a node finds its inputs' history through the input
Tensors when backward runs, so an op recorded *before* an in-place write to one of its inputs
sees the history the write gave it. ``rebase_view`` and ``setitem`` repair the places where
that always happens (the view chain the write hangs from, and a few nodes of the written value's
graph); other earlier consumers of the written tensor still see the new history.

>>> import ember
>>> x = ember.ones(3, requires_grad=True)
>>> y = x * 1
>>> y[1:].add_(x[1:] * 2)
tensor([3., 3.], grad_fn=<SliceBackward0>)
>>> y.sum().backward(); x.grad
tensor([1., 3., 3.])
"""

from __future__ import annotations

from .._errors import AutogradError
from .._node import Node
from .._tensor import Tensor
from ..ops.indexing import CopySlices, replay


def check_rebase(view: Tensor) -> None:
    """Raise, before anything is written, if a write through ``view`` cannot be recorded."""
    for op in view._view_ops or ():
        if not op.is_view:
            raise AutogradError(
                f"in-place write through a view made by {op.name}, which cannot be replayed on "
                f"the base (base shape {tuple(view._base.shape)}); clone() the view first"
            )


def rebase_view(view: Tensor, result: Tensor) -> None:
    """After ``view``'s storage was overwritten with ``result``, rebuild the histories.

    ``view._base`` gets a ``CopySlices`` node over its old history and ``result``; ``view``
    gets its view ops replayed on the base, so later uses of either see the write.
    """
    base = view._base
    ops = view._view_ops
    old = Tensor._make(base._data, base._requires_grad)
    old._node = base._node
    old._version = [base._version[0]]  # CopySlices reads neither value: only history matters
    # Nodes recorded before the write (the view's chain, which the in-place op's result hangs
    # from, and anything computed from the view earlier) must keep the pre-write history: each
    # level of the chain gets a frozen stand-in for its input, and the bottom one ``old``.
    # The intermediate views themselves then take the new history, like the view.
    stale = []
    node = view._node
    while node is not None:
        src = node.inputs[0]
        if src is base:
            node.inputs = (old,) + tuple(node.inputs[1:])
            break
        if src._base is not base:
            break
        frozen = Tensor._make(src._data, src._requires_grad)
        frozen._node = src._node
        frozen._version = [src._version[0]]
        node.inputs = (frozen,) + tuple(node.inputs[1:])
        stale.append(src)
        node = frozen._node
    for t in (base, view, *stale):  # other uses in the written value: ``v.add_(v * y[1])``
        freeze_refs(t, result._node)
    # The base's data already holds the write, so the node is recorded without running the op.
    base._node = Node(CopySlices(ops), (old, result), base)
    base._requires_grad = True
    for t in (view, *stale):
        t._node = replay(t._view_ops, base)._node
        t._requires_grad = True


def freeze_refs(x: Tensor, start, limit: int = 16) -> None:
    """Make nodes near ``start`` that took ``x`` as input keep ``x``'s current history.

    The engine looks an input's history up when backward runs, so a node recorded before an
    in-place write to ``x`` would see the history the write gives ``x``. ``x[i] += v`` with an
    index tensor records ``x[i]`` (a copy), then writes it back: the value's graph holds ``x`` a
    few nodes down. This bounded walk swaps ``x`` there for a stand-in with the current history
    (and ``x``'s version counter, so saved-tensor checks still fire).
    """
    if start is None or x._node is None and not x._requires_grad:
        return
    frozen = None
    todo, seen = [start], set()
    while todo and len(seen) < limit:
        node = todo.pop(0)
        if id(node) in seen or node.inputs is None:
            continue
        seen.add(id(node))
        inputs = node.inputs
        if any(t is x for t in inputs):
            if frozen is None:
                frozen = Tensor._make(x._data, x._requires_grad)
                frozen._node = x._node
                frozen._version = x._version
                frozen._base, frozen._view_ops = x._base, x._view_ops
            node.inputs = tuple(frozen if t is x else t for t in inputs)
        for t in inputs:
            if t is not x and t._node is not None:
                todo.append(t._node)
