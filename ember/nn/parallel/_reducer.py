"""DDP's gradient reducer: parameters in buckets, each averaged over the ranks as soon as all
its gradients are final, while backward still runs.

- Buckets hold parameters in reverse registration order (roughly the order backward finishes
  them), split by dtype and device and capped at ``bucket_cap_mb``.
- Every parameter has a post-accumulate-grad hook (``Tensor.register_post_accumulate_grad_hook``).
  The first hook of a backward queues ``finalize`` (``ember.autograd.engine.queue_callback``);
  each hook marks its parameter ready, and a bucket whose parameters are all ready is copied
  into one flat array and all-reduced (``ReduceOp.AVG``, ``async_op=True``). Buckets start in
  index order on every rank, so the ranks' collectives always pair up.
- ``finalize`` (once backward has accumulated every gradient) starts what is left, waits, and
  writes the averages back into ``.grad``. With ``find_unused_parameters``, a parameter that
  got no gradient on this rank counts as zeros, and one no rank used keeps ``grad = None``;
  without it, such a parameter is an error naming it.
- Eager buckets run on the group's communication thread (``ember.distributed._thread``: a
  blocking ``Allreduce`` on a second communicator, which moves while backward computes; a
  non-blocking ``Iallreduce`` would move only inside MPI calls).
- Inside ``ember.compile`` (the gradients are symbolic) the same hooks record the buckets as
  graph ops instead: per bucket an ``AllReduceStart`` (it concatenates the gradients and starts
  the average on the communication thread; a side effect: it keeps its place among the graph's
  collectives, so every rank runs them in the same order) and, once backward is traced, an
  ``AllReduceWait`` reading its token and in-place copies back into ``.grad``, which the
  compiled step writes back like any gradient. The optimizer pass
  ``start_collectives_early`` moves each start up to where its gradients can be made (the
  traced backward makes every weight gradient last), so the rest of backward overlaps it. A
  parameter that gets no gradient in the traced step is an error there (which parameters
  every rank used is known only when the graph runs, and ``grad = None`` cannot depend on it).
- ``join()`` (``distributed.py``): a rank out of inputs calls ``shadow`` once per iteration the
  others still take: all-reduces of zeros in the same buckets, with the same op (and the
  used-flags with ``find_unused_parameters``). ``divisor`` (set per forward inside ``join``
  with ``divide_by_initial_world_size=False``) divides the sum by the ranks still training
  instead of averaging over the group.
"""

from __future__ import annotations

import numpy as np

from ... import _config
from ..._tensor import Tensor
from ...autograd.engine import queue_callback
from ...distributed import DistributedError, ReduceOp, all_reduce


class _Bucket:
    __slots__ = ("index", "params", "offsets", "numel", "pending", "flat", "work")

    def __init__(self, index: int, params: list) -> None:
        self.index = index
        self.params = params
        self.offsets = []
        n = 0
        for p in params:
            self.offsets.append(n)
            n += p._data.size
        self.numel = n
        self.pending = len(params)
        self.flat = None
        self.work = None


class Reducer:
    """The buckets of one ``DistributedDataParallel`` and their state for one backward."""

    def __init__(self, named_params: list, group, bucket_cap_mb: float, find_unused: bool):
        self.group = group
        self.find_unused = find_unused
        self.names = {id(p): name for name, p in named_params}
        self.buckets = _assign(named_params, bucket_cap_mb * 1024 * 1024)
        self.where = {id(p): b for b in self.buckets for p in b.params}
        self.armed = False
        self.divisor = None  # None: AVG over the group; else SUM / divisor (join)
        self.handles = [p.register_post_accumulate_grad_hook(self._hook) for _, p in named_params]

    def arm(self) -> None:
        """Reduce the gradients of the next backward (called by DDP's forward)."""
        self.armed = True
        self.queued = False
        self.next = 0
        self.used = set()
        self.traced = False
        for b in self.buckets:
            b.pending, b.flat, b.work = len(b.params), None, None

    def disarm(self) -> None:
        self.armed = False

    def _hook(self, p: Tensor) -> None:
        if not self.armed:
            return
        if not self.queued:
            self.queued = True
            self.traced = _tracing(p)
            queue_callback(self.finalize)
        if id(p) in self.used:
            return
        self.used.add(id(p))
        b = self.where[id(p)]
        b.pending -= 1
        if b.pending == 0:
            self._launch_ready()

    def _launch_ready(self) -> None:
        buckets = self.buckets
        while self.next < len(buckets) and buckets[self.next].pending == 0:
            self._launch(buckets[self.next])
            self.next += 1

    def _launch(self, b: _Bucket) -> None:
        if self.traced:
            return self._launch_traced(b)
        p0 = b.params[0]
        xp = p0.device.xp
        grads = [p._grad for p in b.params]
        if all(g is not None and g._data.dtype == p0._data.dtype for g in grads):
            flat = xp.concatenate([g._data.reshape(-1) for g in grads])  # one pass
        else:  # a parameter with no gradient (find_unused_parameters) counts as zeros
            flat = xp.zeros(b.numel, p0._data.dtype)
            for p, off in zip(b.params, b.offsets):
                if p._grad is not None:
                    flat[off : off + p._data.size] = p._grad._data.reshape(-1)
        b.flat = Tensor._make(flat)
        b.work = all_reduce(b.flat, self._op(), self.group, async_op=True)

    def _op(self) -> ReduceOp:
        return ReduceOp.AVG if self.divisor is None else ReduceOp.SUM

    def finalize(self) -> None:
        """Start the buckets still waiting, wait for all, write the averages into ``.grad``."""
        self.armed = False
        missing = [p for b in self.buckets for p in b.params if id(p) not in self.used]
        if missing and not self.find_unused:
            names = ", ".join(self.names[id(p)] for p in missing[:8])
            raise DistributedError(
                f"DistributedDataParallel: {len(missing)} parameter(s) got no gradient in this "
                f"backward on rank {self.group.rank()} ({names}); pass "
                "find_unused_parameters=True when the forward does not use every parameter"
            )
        if missing and self.traced:
            names = ", ".join(self.names[id(p)] for p in missing[:8])
            raise DistributedError(
                f"DistributedDataParallel: {len(missing)} parameter(s) got no gradient in the "
                f"step ember.compile traced ({names}); find_unused_parameters is eager only: "
                "run this step without ember.compile"
            )
        for p in missing:
            self.where[id(p)].pending -= 1
        self._launch_ready()
        if self.traced:
            return self._write_traced()
        # every rank all-reduces the flags (a rank that used every parameter too: it can't know)
        globally_used = self._globally_used(missing) if self.find_unused else None
        for b in self.buckets:
            b.work.wait()
            if self.divisor is not None:
                b.flat._data /= self.divisor
            for p, off in zip(b.params, b.offsets):
                if globally_used is not None and not globally_used[id(p)]:
                    continue
                avg = b.flat._data[off : off + p._data.size].reshape(p._data.shape)
                if p._grad is None:
                    p._grad = Tensor._make(avg.copy())
                else:
                    p._grad._data[...] = avg
                    p._grad._version[0] += 1
            b.flat = b.work = None

    def _launch_traced(self, b: _Bucket) -> None:
        """Record the start of bucket ``b``'s average as a graph op (see the module
        docstring); ``_write_traced`` records its wait."""
        from ...distributed.ops import AllReduceStart
        from ...ops.base import apply

        with _config.no_grad():
            b.flat = apply(
                AllReduceStart(self.group, int(ReduceOp.AVG)), *[p._grad for p in b.params]
            )

    def _write_traced(self) -> None:
        from ...distributed.ops import AllReduceWait
        from ...ops.base import apply

        with _config.no_grad():
            for b in self.buckets:
                token = b.flat
                b.flat = apply(AllReduceWait(b.numel, b.params[0].dtype, self.group), token)
                for p, off in zip(b.params, b.offsets):
                    avg = b.flat[off : off + p._data.size].reshape(p.shape)
                    p._grad.copy_(avg)
                b.flat = None

    def shadow(self, op: ReduceOp) -> None:
        """A joined rank's part in one backward of the others: all-reduce zeros, bucket by
        bucket with ``op``, then the used-flags (``find_unused_parameters``)."""
        works = []
        for b in self.buckets:
            p0 = b.params[0]
            zeros = Tensor._make(p0.device.xp.zeros(b.numel, p0._data.dtype))
            works.append(all_reduce(zeros, op, self.group, async_op=True))
        if self.find_unused:  # the same order as finalize: flags before the waits
            n = sum(len(b.params) for b in self.buckets)
            flags = Tensor._make(np.zeros(n, np.int32)).to(self.buckets[0].params[0].device)
            all_reduce(flags, ReduceOp.SUM, self.group)
        for w in works:
            w.wait()

    def _globally_used(self, missing: list) -> dict:
        """Which parameters some rank used (one small all-reduce of flags)."""
        params = [p for b in self.buckets for p in b.params]
        lost = {id(p) for p in missing}
        flags = Tensor._make(np.array([id(p) not in lost for p in params], np.int32))
        flags = flags.to(params[0].device)  # on nccl, cuda flags go through NCCL (as PyTorch)
        all_reduce(flags, ReduceOp.SUM, self.group)
        return {id(p): bool(f) for p, f in zip(params, flags.cpu()._data)}

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def _tracing(p: Tensor) -> bool:
    """Whether ``ember.compile`` is tracing the backward that produced ``p``'s gradient."""
    g = p._grad
    return g is not None and getattr(g._data, "is_symbol", False)


def _assign(named_params: list, cap_bytes: float) -> list:
    """Buckets of parameters, reverse registration order, one dtype and device each."""
    buckets, current, size, key = [], [], 0, None
    for _, p in reversed(named_params):
        k = (p._data.dtype, str(p.device))
        nbytes = p._data.nbytes
        if current and (k != key or size + nbytes > cap_bytes):
            buckets.append(_Bucket(len(buckets), current))
            current, size = [], 0
        current.append(p)
        size += nbytes
        key = k
    if current:
        buckets.append(_Bucket(len(buckets), current))
    return buckets


__all__ = ["Reducer"]
