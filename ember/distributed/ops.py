"""Collectives as graph ops: what ``ember.compile`` and static graphs record.

Each op reads its input array and returns a new one, and ``has_side_effects`` keeps graph
passes from merging, folding, dropping or reordering it past another side effect (every rank
must run its collectives in the same order). ``replayable = False``: a CUDA graph cannot
capture an MPI call, so a step holding one runs op by op. The ops are not differentiable (as
PyTorch's ``torch.distributed`` collectives are not). Eager code reaches the same
``_arrays`` functions without building an op (the ops would add a copy).

>>> import ember
>>> from ember.distributed.ops import AllReduce
>>> AllReduce(None, 0).name
'AllReduce'
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ops.base import Op, Spec
from . import _arrays
from .reduce_op import ReduceOp


class _Collective(Op):
    has_side_effects = True
    replayable = False
    differentiable = False


class _InPlaceShape(_Collective):
    """A collective whose result has its input's shape and dtype."""

    def infer(self, x):
        return Spec(tuple(x.shape), x.dtype)


@dataclass(frozen=True, eq=False)
class AllReduce(_InPlaceShape):
    """``x`` reduced over ``group`` with ``ReduceOp(op)``."""

    group: object
    op: int

    def forward(self, xp, x):
        out = x.copy()
        _arrays.all_reduce(self.group, out, ReduceOp(self.op), wait=True).wait()
        return out


@dataclass(frozen=True, eq=False)
class Broadcast(_InPlaceShape):
    """Group rank ``root``'s ``x`` on every rank."""

    group: object
    root: int

    def forward(self, xp, x):
        out = x.copy()
        _arrays.broadcast(self.group, out, self.root).wait()
        return out


@dataclass(frozen=True, eq=False)
class AllGather(_Collective):
    """Every rank's ``x`` stacked along a new leading axis of the group's size."""

    group: object

    def forward(self, xp, x):
        out = xp.empty((self.group.size(), *x.shape), x.dtype)
        _arrays.all_gather(self.group, out, x).wait()
        return out

    def infer(self, x):
        return Spec((self.group.size(), *x.shape), x.dtype)


@dataclass(frozen=True, eq=False)
class ReduceScatter(_Collective):
    """``x`` (leading axis = the group's size) reduced over ranks; rank i keeps row i."""

    group: object
    op: int

    def forward(self, xp, x):
        out = xp.empty(x.shape[1:], x.dtype)
        _arrays.reduce_scatter(self.group, out, x, ReduceOp(self.op)).wait()
        return out

    def infer(self, x):
        return Spec(tuple(x.shape[1:]), x.dtype)


__all__ = ["AllGather", "AllReduce", "Broadcast", "ReduceScatter"]
