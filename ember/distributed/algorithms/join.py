"""``Join``: train on uneven inputs without a hang (PyTorch's
``torch.distributed.algorithms.Join``).

Ranks with fewer batches leave their loop first. Inside ``with Join([joinables]):``, every
iteration of a rank still training starts with one all-reduce (``notify_join_context``, called
by the first joinable, e.g. ``DistributedDataParallel``'s forward) counting the ranks still
training. A rank whose loop has ended waits in ``__exit__``: it answers that count with 0 and
runs each joinable's ``JoinHook.main_hook()``, which *shadows* the collectives the training
ranks run in that iteration (DDP: all-reduces of zero gradients in the same buckets), so
every collective pairs up. When the count reaches 0 every rank has joined; each hook's
``post_hook(is_last_joiner)`` then runs (DDP: every rank takes the weights of the last rank to
join). ``throw_on_early_termination=True`` makes every rank raise as soon as one runs out.

>>> import ember
>>> from ember.distributed.algorithms import Join
>>> from ember.nn.parallel import DistributedDataParallel as DDP
>>> model = DDP(ember.nn.Linear(2, 1))  # doctest: +SKIP
>>> with Join([model]):  # doctest: +SKIP
...     for x in my_batches:  # some ranks have more of them
...         model(x).sum().backward()
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..._tensor import Tensor
from .._mpi import DistributedError
from ..collectives import all_reduce
from ..group import ProcessGroup


class JoinHook:
    """What a joined rank runs for one joinable: ``main_hook()`` once per iteration the other
    ranks still take (shadowing their collectives), ``post_hook(is_last_joiner)`` once all
    ranks have joined. Both do nothing by default.

    >>> from ember.distributed.algorithms import JoinHook
    >>> JoinHook().main_hook()
    """

    def main_hook(self) -> None:
        """Shadow one training iteration's collectives (called on a joined rank)."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Run once every rank has joined; ``is_last_joiner``: this rank joined last."""


class _JoinConfig:
    __slots__ = ("enable", "throw_on_early_termination", "is_first_joinable")

    def __init__(self, enable=False, throw_on_early_termination=False, is_first_joinable=False):
        self.enable = enable
        self.throw_on_early_termination = throw_on_early_termination
        self.is_first_joinable = is_first_joinable


class Joinable:
    """A class that can take part in ``Join``: it provides ``join_hook(**kwargs)``,
    ``join_device`` and ``join_process_group``, and its iteration calls
    ``Join.notify_join_context(self)``. ``DistributedDataParallel`` is one.

    >>> from ember.distributed.algorithms import Joinable
    >>> from ember.nn.parallel import DistributedDataParallel
    >>> issubclass(DistributedDataParallel, Joinable)
    True
    """

    _join_config: _JoinConfig

    def join_hook(self, **kwargs: Any) -> JoinHook:
        """The hook a joined rank runs for this object (``kwargs``: those given to ``Join``)."""
        raise NotImplementedError(f"{type(self).__name__}: join_hook() is not implemented")

    @property
    def join_device(self):
        """The device Join's own collectives use."""
        raise NotImplementedError(f"{type(self).__name__}: join_device is not implemented")

    @property
    def join_process_group(self) -> ProcessGroup:
        """The process group Join's own collectives use."""
        raise NotImplementedError(f"{type(self).__name__}: join_process_group is not implemented")


def _config_of(joinable) -> _JoinConfig:
    return getattr(joinable, "_join_config", None) or _JoinConfig()


class Join:
    """Context manager for uneven inputs (see the module docstring): ``joinables`` (at least
    one; they share a process group), ``enable=False`` turns it into a no-op,
    ``throw_on_early_termination=True`` raises ``DistributedError`` on every rank as soon as
    one rank's inputs end; other keyword arguments go to each ``join_hook`` (DDP:
    ``divide_by_initial_world_size``). Eager only (it counts ranks with host values).

    >>> import ember
    >>> from ember.distributed.algorithms import Join
    >>> model = ember.nn.parallel.DistributedDataParallel(ember.nn.Linear(2, 1))  # doctest: +SKIP
    >>> with Join([model], divide_by_initial_world_size=True):  # doctest: +SKIP
    ...     model(ember.ones(1, 2)).sum().backward()
    """

    def __init__(
        self,
        joinables: list,
        enable: bool = True,
        throw_on_early_termination: bool = False,
        **kwargs: Any,
    ) -> None:
        joinables = list(joinables)
        if not joinables:
            raise DistributedError("Join: joinables must hold at least one Joinable")
        for j in joinables:
            if not isinstance(j, Joinable):
                raise DistributedError(
                    f"Join: {type(j).__name__} is not a Joinable (join_hook, join_device, "
                    "join_process_group)"
                )
        self._joinables = joinables
        self._hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = bool(enable)
        self._throw = bool(throw_on_early_termination)
        self._group = joinables[0].join_process_group
        for j in joinables[1:]:
            if j.join_process_group is not self._group:
                raise DistributedError(
                    f"Join: {type(j).__name__} uses another process group than "
                    f"{type(joinables[0]).__name__}; every joinable must share one"
                )

    def __enter__(self) -> Join:
        for i, j in enumerate(self._joinables):
            if _config_of(j).enable:
                raise DistributedError(f"Join: {type(j).__name__} is already inside a Join")
            j._join_config = _JoinConfig(self._enable, self._throw, i == 0)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if not self._enable or exc_type is not None:
                return  # an error propagates (the launcher ends the other ranks)
            is_last_joiner = True
            rounds = 0
            while _count(self._group, 0) > 0:
                if self._throw:
                    _count(self._group, 1)  # tell the training ranks to stop
                    raise DistributedError(
                        f"Join: rank {self._group.rank()} exhausted all inputs "
                        "(throw_on_early_termination=True)"
                    )
                for hook in self._hooks:
                    hook.main_hook()
                is_last_joiner = False
                rounds += 1
                if rounds == 1000:
                    warnings.warn(
                        f"Join: rank {self._group.rank()} has shadowed 1000 iterations of the "
                        "other ranks; are the inputs that uneven?",
                        stacklevel=2,
                    )
            for hook in self._hooks:
                hook.post_hook(is_last_joiner)
        finally:
            for j in self._joinables:
                j._join_config = _JoinConfig()

    @staticmethod
    def notify_join_context(joinable: Joinable) -> int | None:
        """Called by ``joinable`` at the start of each iteration on a rank still training:
        the number of ranks still training (an all-reduce the joined ranks answer), or None
        outside an enabled ``Join`` or when ``joinable`` is not its first joinable. With
        ``throw_on_early_termination`` it raises once any rank has joined.

        >>> import ember
        >>> from ember.distributed.algorithms import Join
        >>> from ember.nn.parallel import DistributedDataParallel as DDP
        >>> model = DDP(ember.nn.Linear(2, 1))  # doctest: +SKIP
        >>> Join.notify_join_context(model) is None  # doctest: +SKIP
        True
        """
        config = _config_of(joinable)
        if not (config.enable and config.is_first_joinable):
            return None
        group = joinable.join_process_group
        n = _count(group, 1)
        if config.throw_on_early_termination and _count(group, 0) > 0:
            raise DistributedError(
                f"Join: rank {group.rank()}: at least one rank exhausted its inputs "
                "(throw_on_early_termination=True); stopping every rank"
            )
        return n


def _count(group: ProcessGroup, mine: int) -> int:
    """The sum over ``group`` of each rank's ``mine`` (one small all-reduce)."""
    t = Tensor._make(np.array([mine], np.int64))
    all_reduce(t, group=group)
    return int(t._data[0])


__all__ = ["Join", "JoinHook", "Joinable"]
