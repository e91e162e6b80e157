"""``DistributedDataParallel``: the same model on every rank, each on its share of the batch,
gradients averaged over the ranks during backward (see ``_reducer.py``).

>>> import ember, ember.distributed as dist
>>> from ember.nn.parallel import DistributedDataParallel as DDP
>>> dist.init_process_group("mpi")  # doctest: +SKIP
>>> model = DDP(ember.nn.Linear(4, 2))  # doctest: +SKIP
>>> model(ember.randn(8, 4)).sum().backward()  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np

from ... import _config
from ..._tensor import Tensor
from ...distributed import DistributedError, ReduceOp, all_reduce, broadcast
from ...distributed.algorithms.join import Join, Joinable, JoinHook, _JoinConfig
from ...distributed.group import resolve
from ..module import Module
from ._reducer import Reducer


class DistributedDataParallel(Module, Joinable):
    """Wrap ``module`` for data-parallel training (PyTorch's ``DistributedDataParallel``).

    At construction, rank 0's parameters and buffers are copied to every rank. Each forward
    (outside ``no_sync()``, with grad enabled) arms the reducer, so the following backward
    leaves every rank with the same averaged gradients. ``broadcast_buffers`` copies rank 0's
    buffers (BatchNorm's running statistics) to every rank before each forward.
    ``find_unused_parameters`` lets a forward skip parameters (they count as zero gradients,
    and ones no rank used keep ``grad = None``). ``device_ids`` / ``output_device`` are
    accepted for PyTorch code and ignored: the module stays where it is. ``join()`` trains on
    uneven inputs (ranks with fewer batches shadow the others' all-reduces).

    >>> import ember
    >>> from ember.nn.parallel import DistributedDataParallel as DDP
    >>> ddp = DDP(ember.nn.Linear(2, 1))  # doctest: +SKIP
    >>> ddp.module  # doctest: +SKIP
    Linear(in_features=2, out_features=1, bias=True)
    """

    def __init__(
        self,
        module: Module,
        device_ids=None,
        output_device=None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        process_group=None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
        **kwargs,
    ) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise DistributedError(
                f"DistributedDataParallel: module must be an nn.Module, got {type(module).__name__}"
            )
        self.module = module
        self.process_group = resolve(process_group, "DistributedDataParallel")
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.bucket_cap_mb = 25.0 if bucket_cap_mb is None else float(bucket_cap_mb)
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise DistributedError(
                "DistributedDataParallel: the module has no parameter that requires a gradient"
            )
        self._join_config = _JoinConfig()
        self._divide_by_initial_world_size = True
        self._sync(list(module.parameters()) + list(module.buffers()))
        self.reducer = Reducer(
            named, self.process_group, self.bucket_cap_mb, find_unused_parameters
        )

    def _sync(self, tensors: list, src: int = 0) -> None:
        """Group rank ``src``'s values of ``tensors`` on every rank: one broadcast per dtype
        and device."""
        if self.process_group.size() == 1 or not tensors:
            return
        if _config.graph_tracer(*tensors) is not None:
            return self._sync_traced(tensors)
        groups: dict = {}
        for t in tensors:
            groups.setdefault((t._data.dtype, str(t.device)), []).append(t)
        for ts in groups.values():
            xp = ts[0].device.xp
            flat = Tensor._make(xp.concatenate([t._data.reshape(-1) for t in ts]))
            broadcast(flat, group=self.process_group, group_src=src)
            off = 0
            for t in ts:
                n = t._data.size
                t._data[...] = flat._data[off : off + n].reshape(t._data.shape)
                t._version[0] += 1
                off += n

    def _sync_traced(self, tensors: list) -> None:
        """``_sync`` inside ``ember.compile``: a ``Broadcast`` op per dtype and device, and
        in-place copies the compiled step writes back."""
        from ...functions.shape.joining import cat

        groups: dict = {}
        for t in tensors:
            groups.setdefault((t.dtype, str(t.device)), []).append(t)
        with _config.no_grad():
            for ts in groups.values():
                flat = cat([t.reshape(-1) for t in ts])
                broadcast(flat, 0, self.process_group)
                off = 0
                for t in ts:
                    n = t.numel()
                    t.copy_(flat[off : off + n].reshape(t.shape))
                    off += n

    # ember.compile: a step traced with gradient sync on must not run under no_sync()
    def _compile_signature(self) -> tuple:
        return (*super()._compile_signature(), self.require_backward_grad_sync)

    def _compile_describe(self, old: tuple, new: tuple) -> str:
        if old[-1] != new[-1]:
            was, now = ("on", "off (no_sync)") if old[-1] else ("off (no_sync)", "on")
            return f"DistributedDataParallel's gradient sync switched {was} -> {now}"
        return super()._compile_describe(old[:-1], new[:-1])

    def forward(self, *inputs, **kwargs):
        sync = _config.state.grad_enabled and self.require_backward_grad_sync
        if self._join_config.enable:
            self._join_forward(sync)
        elif self.broadcast_buffers:
            self._sync(list(self.module.buffers()))
        if sync:
            self.reducer.arm()
        else:
            self.reducer.disarm()
        return self.module(*inputs, **kwargs)

    # -- uneven inputs: join() ------------------------------------------------------------------
    def join(
        self,
        divide_by_initial_world_size: bool = True,
        enable: bool = True,
        throw_on_early_termination: bool = False,
    ) -> Join:
        """A context manager for uneven inputs (PyTorch's ``DistributedDataParallel.join``):
        inside it, a rank whose batches ran out waits at the end of the ``with`` block and
        shadows the all-reduces the other ranks still run, contributing zero gradients. With
        ``divide_by_initial_world_size`` (the default) the gradients are divided by the
        group's size, so a joined rank's zeros count in the average; with False by the number
        of ranks still training. When all have joined, every rank takes the weights and
        buffers of the last rank to join. ``throw_on_early_termination=True``: every rank
        raises ``DistributedError`` as soon as one runs out. See
        ``ember.distributed.algorithms.Join``; eager only.

        >>> import ember
        >>> from ember.nn.parallel import DistributedDataParallel as DDP
        >>> ddp = DDP(ember.nn.Linear(2, 1))  # doctest: +SKIP
        >>> with ddp.join():  # doctest: +SKIP
        ...     for x in ember.ones(3 + ddp.process_group.rank(), 1, 2):  # uneven
        ...         ddp(x).sum().backward()
        """
        return Join(
            [self],
            enable,
            throw_on_early_termination,
            divide_by_initial_world_size=divide_by_initial_world_size,
        )

    def join_hook(self, **kwargs) -> JoinHook:
        """The hook ``Join`` runs on a joined rank (``divide_by_initial_world_size``, default
        True, as in ``join()``).

        >>> import ember
        >>> from ember.nn.parallel import DistributedDataParallel as DDP
        >>> DDP(ember.nn.Linear(2, 1)).join_hook()  # doctest: +SKIP
        <ember.nn.parallel.distributed._DDPJoinHook object at ...>
        """
        unknown = set(kwargs) - {"divide_by_initial_world_size"}
        if unknown:
            raise DistributedError(
                f"DistributedDataParallel.join_hook: unknown argument(s) {sorted(unknown)}; "
                "it takes divide_by_initial_world_size"
            )
        self._divide_by_initial_world_size = bool(kwargs.get("divide_by_initial_world_size", True))
        return _DDPJoinHook(self)

    @property
    def join_device(self):
        """The device of the module's first parameter (``Join``'s collectives)."""
        return next(iter(self.module.parameters())).device

    @property
    def join_process_group(self):
        """The process group the gradients are averaged over."""
        return self.process_group

    def _join_forward(self, sync: bool) -> None:
        """A training rank's collectives at the start of a forward inside ``join()``; the joined
        ranks' ``_DDPJoinHook.main_hook`` runs the same ones."""
        if _config.graph_tracer() is not None:
            raise DistributedError(
                "DistributedDataParallel.join(): eager only; it counts the ranks still training "
                "on the host at every forward, which a compiled step cannot"
            )
        n = Join.notify_join_context(self)
        self._join_buffers(training=True)
        _sum(self.process_group, 1 if sync else 0)  # tells joined ranks whether to shadow
        by_count = not self._divide_by_initial_world_size and n is not None
        self.reducer.divisor = n if by_count else None

    def _join_buffers(self, training: bool) -> None:
        """``broadcast_buffers`` inside ``join()``: from the highest rank still training."""
        buffers = list(self.module.buffers())
        if self.broadcast_buffers and buffers and self.process_group.size() > 1:
            self._sync(buffers, self._common_rank(training))

    def _common_rank(self, candidate: bool) -> int:
        """The highest group rank among the candidates (an all-reduce MAX)."""
        pg = self.process_group
        t = Tensor._make(np.array([pg.rank() if candidate else -1], np.int64))
        all_reduce(t, ReduceOp.MAX, pg)
        return int(t._data[0])

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Backward passes of forwards run inside accumulate gradients locally, unaveraged;
        the first synced backward after averages the accumulated sum.

        >>> import ember
        >>> from ember.nn.parallel import DistributedDataParallel as DDP
        >>> ddp = DDP(ember.nn.Linear(2, 1))  # doctest: +SKIP
        >>> with ddp.no_sync():  # doctest: +SKIP
        ...     ddp(ember.ones(1, 2)).sum().backward()
        """
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old


class _DDPJoinHook(JoinHook):
    """DDP's part of ``Join`` on a rank whose inputs ran out."""

    def __init__(self, ddp: DistributedDataParallel) -> None:
        self.ddp = ddp

    def main_hook(self) -> None:
        ddp = self.ddp
        ddp._join_buffers(training=False)
        if _sum(ddp.process_group, 0) == 0:  # no training rank runs a synced backward
            return
        ddp.reducer.shadow(ReduceOp.AVG if ddp._divide_by_initial_world_size else ReduceOp.SUM)

    def post_hook(self, is_last_joiner: bool) -> None:
        ddp = self.ddp
        src = ddp._common_rank(is_last_joiner)
        ddp._sync(list(ddp.module.parameters()) + list(ddp.module.buffers()), src)


def _sum(pg, mine: int) -> int:
    t = Tensor._make(np.array([mine], np.int64))
    all_reduce(t, ReduceOp.SUM, pg)
    return int(t._data[0])


__all__ = ["DistributedDataParallel"]
