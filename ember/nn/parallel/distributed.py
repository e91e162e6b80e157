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

from ... import _config
from ..._tensor import Tensor
from ...distributed import DistributedError, broadcast
from ...distributed.group import resolve
from ..module import Module
from ._reducer import Reducer


class DistributedDataParallel(Module):
    """Wrap ``module`` for data-parallel training (PyTorch's ``DistributedDataParallel``).

    At construction, rank 0's parameters and buffers are copied to every rank. Each forward
    (outside ``no_sync()``, with grad enabled) arms the reducer, so the following backward
    leaves every rank with the same averaged gradients. ``broadcast_buffers`` copies rank 0's
    buffers (BatchNorm's running statistics) to every rank before each forward.
    ``find_unused_parameters`` lets a forward skip parameters (they count as zero gradients,
    and ones no rank used keep ``grad = None``). ``device_ids`` / ``output_device`` are
    accepted for PyTorch code and ignored: the module stays where it is.

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
        self._sync(list(module.parameters()) + list(module.buffers()))
        self.reducer = Reducer(
            named, self.process_group, self.bucket_cap_mb, find_unused_parameters
        )

    def _sync(self, tensors: list) -> None:
        """Rank 0's values of ``tensors`` on every rank: one broadcast per dtype and device."""
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
            broadcast(flat, 0, self.process_group)
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
        if self.broadcast_buffers:
            self._sync(list(self.module.buffers()))
        if _config.state.grad_enabled and self.require_backward_grad_sync:
            self.reducer.arm()
        else:
            self.reducer.disarm()
        return self.module(*inputs, **kwargs)

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


__all__ = ["DistributedDataParallel"]
