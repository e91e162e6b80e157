"""``ZeroRedundancyOptimizer``: ZeRO stage 1 (PyTorch's ``torch.distributed.optim``).

Every rank keeps the whole model but the optimizer state (Adam's two moments) only of its own
share of the parameters (``partition.py``: PyTorch's sorted-greedy rule, so ranks own what they
would under PyTorch). ``step()`` runs the wrapped optimizer on that share, then one all-gather
per step brings every rank the others' updated parameters: each rank sends its share as one
flat array, padded to the largest share. The gradients must already be the same on every rank
(averaged by ``DistributedDataParallel`` during backward), as in PyTorch.

With ``parameters_as_bucket_view=True`` the parameters' storage becomes views into the
all-gather's own buffer (one row per rank), so the gathered values land in the parameters
with no copy out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..._config import state as _mode
from ..._tensor import Tensor
from ...optim.optimizer import Optimizer
from .._mpi import DistributedError
from ..collectives import all_gather_into_tensor
from ..group import ProcessGroup, resolve
from ..objects import gather_object
from .partition import partition_parameters

_NAME = "ZeroRedundancyOptimizer"


class ZeroRedundancyOptimizer(Optimizer):
    """Wrap ``optimizer_class`` so each rank holds the state of ~1/world_size of ``params``.

    ``**defaults`` go to ``optimizer_class``. Call it on every rank, with the same parameters.
    ``optim`` is this rank's optimizer (over its share); ``param_groups`` cover all parameters
    (a scheduler may change their settings); ``state_dict()`` needs
    ``consolidate_state_dict(to=rank)`` first, on every rank.

    >>> import ember, ember.distributed as dist
    >>> from ember.distributed.optim import ZeroRedundancyOptimizer
    >>> dist.init_process_group("mpi")  # doctest: +SKIP
    >>> model = ember.nn.Linear(4, 2)
    >>> Zero = ZeroRedundancyOptimizer
    >>> opt = Zero(model.parameters(), ember.optim.Adam, lr=0.01)  # doctest: +SKIP
    >>> model(ember.ones(3, 4)).sum().backward(); opt.step()  # doctest: +SKIP
    """

    def __init__(
        self,
        params: Iterable,
        optimizer_class: type[Optimizer],
        process_group: ProcessGroup | None = None,
        parameters_as_bucket_view: bool = False,
        overlap_with_ddp: bool = False,
        **defaults: Any,
    ) -> None:
        if overlap_with_ddp:
            raise DistributedError(
                f"{_NAME}: overlap_with_ddp=True (the step run inside DDP's communication hook) "
                "is not built in ember; leave it False and call step() after backward"
            )
        if not (isinstance(optimizer_class, type) and issubclass(optimizer_class, Optimizer)):
            raise TypeError(
                f"{_NAME}: optimizer_class must be an optimizer class such as "
                f"ember.optim.Adam, got {optimizer_class!r}"
            )
        self._initialized = False
        Optimizer.__init__(self, params, defaults)
        _check_same_kind(self._all_params())
        self.process_group = resolve(process_group, _NAME)
        self.world_size = self.process_group.size()
        self.rank = self.process_group.rank()
        self.parameters_as_bucket_view = bool(parameters_as_bucket_view)
        self._partition = partition_parameters(self.param_groups, self.world_size)
        self.optim = optimizer_class(self._partition[self.rank], **defaults)
        _copy_settings(self.optim.param_groups, self.param_groups)
        self._shards = _Shards(self._partition, self.rank, self.parameters_as_bucket_view)
        self._all_state_dicts: list[dict] = []
        self._initialized = True

    def _all_params(self) -> list[Tensor]:
        return [p for g in self.param_groups for p in g["params"]]

    def add_param_group(self, param_group: dict) -> None:
        """Add a group on every rank (call it on all ranks): its parameters are shared out by
        the same rule, those of the earlier groups keep their owners.

        >>> import ember
        >>> from ember.distributed.optim import ZeroRedundancyOptimizer
        >>> opt = ZeroRedundancyOptimizer([ember.ones(2)], ember.optim.SGD)  # doctest: +SKIP
        >>> opt.add_param_group({"params": [ember.ones(3)], "lr": 0.01})  # doctest: +SKIP
        """
        if not self._initialized:
            super().add_param_group(param_group)
            return
        params = param_group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        _check_same_kind(self._all_params() + params)  # before the group is added
        super().add_param_group({**param_group, "params": params})
        self._partition = partition_parameters(self.param_groups, self.world_size)
        self.optim.add_param_group(self._partition[self.rank][-1])
        _copy_settings(self.optim.param_groups, self.param_groups)
        self._shards = _Shards(self._partition, self.rank, self.parameters_as_bucket_view)

    def step(self, closure: Callable[[], float] | None = None, **kwargs: Any):
        """Step this rank's share with the wrapped optimizer, then all-gather the shares.

        >>> import ember
        >>> from ember.distributed.optim import ZeroRedundancyOptimizer
        >>> w = ember.nn.Parameter(ember.ones(2))
        >>> opt = ZeroRedundancyOptimizer([w], ember.optim.SGD, lr=0.5)  # doctest: +SKIP
        >>> (w * w).sum().backward(); opt.step(); w  # doctest: +SKIP
        Parameter containing:
        tensor([0., 0.], requires_grad=True)
        """
        if _mode.tracer is not None:
            raise DistributedError(
                f"{_NAME}.step: not supported inside ember.compile or a static graph; step "
                "eagerly (or compile the wrapped optimizer's step on one rank)"
            )
        _copy_settings(self.param_groups, self.optim.param_groups)
        if closure is not None:
            kwargs["closure"] = closure
        loss = self.optim.step(**kwargs)
        _copy_settings(self.optim.param_groups, self.param_groups)
        self._shards.all_gather(self.process_group)
        return loss

    def consolidate_state_dict(self, to: int = 0) -> None:
        """Gather every rank's optimizer state on group rank ``to`` (call it on all ranks);
        ``state_dict()`` there then returns the whole state.

        >>> import ember
        >>> from ember.distributed.optim import ZeroRedundancyOptimizer
        >>> opt = ZeroRedundancyOptimizer([ember.ones(2)], ember.optim.Adam)  # doctest: +SKIP
        >>> opt.consolidate_state_dict(to=0); sorted(opt.state_dict())  # doctest: +SKIP
        ['param_groups', 'state']
        """
        if not (isinstance(to, int) and 0 <= to < self.world_size):
            raise DistributedError(
                f"{_NAME}.consolidate_state_dict: to={to!r} is not a rank of the group of "
                f"{self.world_size}"
            )
        _copy_settings(self.param_groups, self.optim.param_groups)
        gathered = [None] * self.world_size if self.rank == to else None
        gather_object(self.optim.state_dict(), gathered, group=self.process_group, group_dst=to)
        self._all_state_dicts = gathered if gathered is not None else []

    def state_dict(self) -> dict:
        """The whole optimizer's state as of the last ``consolidate_state_dict`` to this rank,
        laid out as the wrapped optimizer's own ``state_dict`` over all the parameters.

        >>> import ember
        >>> from ember.distributed.optim import ZeroRedundancyOptimizer
        >>> opt = ZeroRedundancyOptimizer([ember.ones(2)], ember.optim.Adam)  # doctest: +SKIP
        >>> opt.state_dict()  # doctest: +SKIP
        Traceback (most recent call last):
        ember.distributed._mpi.DistributedError: ZeroRedundancyOptimizer.state_dict: ...
        """
        if not self._all_state_dicts:
            raise DistributedError(
                f"{_NAME}.state_dict: the optimizer state has not been consolidated on this "
                f"rank; call consolidate_state_dict(to={self.rank}) on all ranks first"
            )
        out = super().state_dict()  # the groups, with global indices; no state of its own
        index = {id(p): i for i, p in enumerate(self._all_params())}
        for rank, local in enumerate(self._all_state_dicts):
            for saved, part in zip(local["param_groups"], self._partition[rank]):
                for i, p in zip(saved["params"], part["params"]):
                    if i in local["state"]:
                        out["state"][index[id(p)]] = local["state"][i]
        out["state"] = dict(sorted(out["state"].items()))
        return out

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a whole state (``state_dict()``'s, or the wrapped optimizer's over the same
        parameters) on every rank: each keeps its own share's entries.

        >>> import ember
        >>> from ember.distributed.optim import ZeroRedundancyOptimizer
        >>> opt = ZeroRedundancyOptimizer([ember.ones(2)], ember.optim.Adam)  # doctest: +SKIP
        >>> opt.load_state_dict(ember.optim.Adam([ember.ones(2)]).state_dict())  # doctest: +SKIP
        """
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"{_NAME}.load_state_dict: the state dict has {len(saved_groups)} parameter "
                f"groups, the optimizer has {len(self.param_groups)}"
            )
        saved_index = {}
        for mine, saved in zip(self.param_groups, saved_groups):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError(
                    f"{_NAME}.load_state_dict: a parameter group of the state dict has "
                    f"{len(saved['params'])} parameters, the optimizer's has "
                    f"{len(mine['params'])}"
                )
            saved_index.update((id(p), int(i)) for p, i in zip(mine["params"], saved["params"]))
        states = {int(i): s for i, s in state_dict["state"].items()}
        local_groups, local_state = [], {}
        for saved, part in zip(saved_groups, self._partition[self.rank]):
            group = {k: v for k, v in saved.items() if k != "params"}
            group["params"] = []
            for p in part["params"]:
                i = sum(len(g["params"]) for g in local_groups) + len(group["params"])
                group["params"].append(i)
                if saved_index[id(p)] in states:
                    local_state[i] = states[saved_index[id(p)]]
            local_groups.append(group)
        self.optim.load_state_dict({"state": local_state, "param_groups": local_groups})
        _copy_settings(self.optim.param_groups, self.param_groups)


class _Shards:
    """Each rank's share as one flat row of an ``(world_size, widest share)`` buffer: this
    rank's share is copied into a send row and all-gathered into the buffer, whose other rows
    are copied into their parameters. As bucket views, the parameters live in the buffer."""

    def __init__(self, partition: list[list[dict]], rank: int, as_views: bool) -> None:
        self.rank = rank
        self.as_views = as_views
        self.shares = [[p for g in groups for p in g["params"]] for groups in partition]
        self.width = max(1, max(sum(p.numel() for p in share) for share in self.shares))
        like = next(p for share in self.shares for p in share)
        xp, dtype = like.device.xp, like._data.dtype
        self.buffer = Tensor._make(xp.zeros((len(self.shares), self.width), dtype))
        self.send = Tensor._make(xp.zeros(self.width, dtype))
        if as_views:
            for r, share in enumerate(self.shares):
                for p, view in zip(share, _slots(self.buffer._data[r], share)):
                    view[...] = p._data
                    p._data = view

    def all_gather(self, group: ProcessGroup) -> None:
        mine = self.shares[self.rank]
        if self.as_views:
            self.send._data[...] = self.buffer._data[self.rank]
        else:
            for p, view in zip(mine, _slots(self.send._data, mine)):
                view[...] = p._data
        all_gather_into_tensor(self.buffer, self.send, group)
        for r, share in enumerate(self.shares):
            if r == self.rank:
                continue
            for p, view in zip(share, _slots(self.buffer._data[r], share)):
                if not self.as_views:
                    p._data[...] = view
                p._version[0] += 1


def _slots(row, params: list[Tensor]):
    """Views of the flat array ``row``, one shaped like each of ``params``, back to back."""
    off = 0
    for p in params:
        n = p.numel()
        yield row[off : off + n].reshape(p._data.shape)
        off += n


def _copy_settings(src: list[dict], dst: list[dict]) -> None:
    """Every setting but ``params`` of each group of ``src`` into the same group of ``dst``."""
    for s, d in zip(src, dst):
        for k, v in s.items():
            if k != "params":
                d[k] = v


def _check_same_kind(params: list[Tensor]) -> None:
    """One dtype and device for all (one flat buffer), as PyTorch's one dense type."""
    if not params:
        raise ValueError(f"{_NAME}: got an empty parameter list")
    first = params[0]
    for p in params[1:]:
        if p.dtype != first.dtype or p.device != first.device:
            raise ValueError(
                f"{_NAME}: every parameter must have the same dtype and device, got "
                f"{first.dtype} on {first.device} and {p.dtype} on {p.device}"
            )


__all__ = ["ZeroRedundancyOptimizer"]
