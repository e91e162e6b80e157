"""Autograd for in-place writes through views: the base tensor takes the new history.

A view Tensor carries ``_base`` (the tensor that owns the storage) and ``_view_ops`` (the view
ops that lead from the base to it). When an in-place op writes ``result`` through the view, the
base's history becomes ``CopySlices(base_old, result)`` (PyTorch's idea of the same name): its
gradient flows to ``result`` through the same view ops and to the old base everywhere else. The
view's own history becomes those view ops replayed on the new base.

Ops recorded before the write keep the gradient edges they were recorded with (``Node.edges``),
so they still see the old history, as in PyTorch.

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
    # Nodes keep the gradient edges they were recorded with, so consumers of the base or the
    # view from before the write keep the old history; only the base and the views on the
    # chain to ``view`` take the new one.
    stale = []
    src = view
    while src is not base and src._node is not None and src._base is base:
        stale.append(src)
        src = src._node.inputs[0]
    # The base's data already holds the write, so the node is recorded without running the op.
    base._node = Node(CopySlices(ops), (old, result), base)
    base._requires_grad = True
    for t in stale:
        t._node = replay(t._view_ops, base)._node
        t._requires_grad = True
