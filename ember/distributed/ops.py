"""Collectives as graph ops: what ``ember.compile`` and static graphs record.

Each op reads its input array and returns a new one, and ``has_side_effects`` keeps graph
passes from merging, folding, dropping or reordering it past another side effect (every rank
must run its collectives in the same order). ``replayable`` only on an nccl group: a CUDA graph
cannot capture an MPI call, so a step holding one runs op by op, while NCCL calls are stream
work a graph captures and replays. ``AllReduce`` blocks where it sits;
``AllReduceStart`` / ``AllReduceWait`` (DDP's buckets) split one all-reduce in two, joined by
a token, so the graph computes between them. The ops are not differentiable (as
PyTorch's ``torch.distributed`` collectives are not). Eager code reaches the same
``_arrays`` functions without building an op (the ops would add a copy).

>>> import ember
>>> from ember.distributed.ops import AllReduce
>>> AllReduce(None, 0).name
'AllReduce'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import dtypes as _dt
from ..ops.base import Op, Spec
from . import _arrays
from ._mpi import DistributedError
from .reduce_op import ReduceOp


def _on_nccl(group) -> bool:
    return getattr(group, "nccl", None) is not None


class _Collective(Op):
    has_side_effects = True
    differentiable = False

    @property
    def replayable(self) -> bool:
        """Whether a CUDA graph can replay it: NCCL launches are stream work, MPI is not."""
        return _on_nccl(getattr(self, "group", None))


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


_PENDING: dict = {}  # token -> (Work, flat buffer) of the AllReduceStart ops in flight


@dataclass(frozen=True, eq=False)
class AllReduceStart(_Collective):
    """Start reducing the concatenation of the inputs (flattened) over ``group`` with
    ``ReduceOp(op)``; the result is a token (a 0-d int64) that ``AllReduceWait`` turns into
    the reduced flat array. DDP's bucket under ``ember.compile``: the start sits where the
    bucket's last gradient is made, the wait where the average is first read (after
    backward), so the rest of backward runs while the collective is in flight (on the group's
    communication thread, ``_thread``). The concatenation is this op's own fresh buffer: no
    graph value is written behind the executor's back.

    On an nccl group the same pair is stream work (``_nccl``): the start records an event on
    the compute stream and launches ``ncclAllReduce`` on the group's communication stream after
    it, the wait makes the compute stream wait for that stream's end event; a CUDA graph
    captures both (``replayable``), and no step waits for the host. On MPI (through the host)
    both run op by op."""

    group: object
    op: int
    schedule_early = True  # passes.start_collectives_early: placed as soon as xs can be made

    def forward(self, xp, *xs):
        flat = xp.concatenate([x.reshape(-1) for x in xs])
        work = _arrays.all_reduce(self.group, flat, ReduceOp(self.op))
        # the token's identity is what counts: no value is written, so no host-to-device copy
        token = xp.empty((), np.int64)
        _PENDING[id(token)] = (work, flat, token)
        return token

    def infer(self, *xs):
        return Spec((), _dt.int64)


@dataclass(frozen=True, eq=False)
class AllReduceWait(_Collective):
    """The flat result (``numel`` elements of ``dtype``) of the ``AllReduceStart`` whose token
    it reads, once the collective has completed (``DistributedError`` naming it after the
    group's timeout)."""

    numel: int
    dtype: object
    group: object = None  # the start's group (on nccl, the pair replays in a CUDA graph)

    def forward(self, xp, token):
        entry = _PENDING.pop(id(token), None)
        if entry is None:
            raise DistributedError(
                "AllReduceWait: its token names no all-reduce in flight (each AllReduceStart's "
                "token is waited for once)"
            )
        work, flat, _ = entry
        work.wait()
        return flat

    def infer(self, token):
        return Spec((self.numel,), self.dtype)


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


__all__ = [
    "AllGather",
    "AllReduce",
    "AllReduceStart",
    "AllReduceWait",
    "Broadcast",
    "ReduceScatter",
]
