"""Schedules built from other schedulers: SequentialLR (one after another) and ChainedScheduler
(all at once).
"""

from __future__ import annotations

from bisect import bisect_right

from .base import LRScheduler


class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after another, switching at the ``milestones`` epochs."""

    def __init__(self, optimizer, schedulers: list, milestones: list, last_epoch: int = -1) -> None:
        if len(schedulers) < 1:
            raise ValueError("SequentialLR: expects at least one scheduler")
        for i, s in enumerate(schedulers):
            if s.optimizer is not optimizer:
                raise ValueError(
                    f"SequentialLR: expects all schedulers to belong to the same optimizer, but "
                    f"scheduler at index {i} has a different one"
                )
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "SequentialLR: number of milestones should be one less than the number of "
                f"schedulers: got {len(milestones)} milestones and {len(schedulers)} schedulers"
            )
        self._schedulers = schedulers
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for s in schedulers:
            s.last_epoch -= 1
        schedulers[0]._initial_step()
        self._last_lr = schedulers[0].get_last_lr()

    def step(self) -> None:  # type: ignore[override]
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler.step(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        saved = state.pop("_schedulers")
        self.__dict__.update(state)
        for s, sd in zip(self._schedulers, saved):
            s.load_state_dict(sd)


class ChainedScheduler(LRScheduler):
    """Step several schedulers of one optimizer together, each every step.

    >>> import ember
    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.zeros(1))], lr=1.0)
    >>> L = ember.optim.lr_scheduler
    >>> s = L.ChainedScheduler([L.ConstantLR(opt, 0.5, 2), L.ExponentialLR(opt, 0.9)])
    >>> s.step(); round(s.get_last_lr()[0], 3)
    0.45
    """

    def __init__(self, schedulers, optimizer=None) -> None:
        schedulers = list(schedulers)
        if not schedulers:
            raise ValueError("ChainedScheduler expects at least one scheduler")
        self.optimizer = optimizer or schedulers[0].optimizer
        for i, s in enumerate(schedulers):
            if s.optimizer is not self.optimizer:
                raise ValueError(
                    f"ChainedScheduler expects all schedulers to belong to the same optimizer, "
                    f"but got scheduler {type(s).__name__} at index {i} with another optimizer"
                )
        self._schedulers = schedulers
        self._last_lr = self._lrs()

    def step(self) -> None:  # type: ignore[override]
        for s in self._schedulers:
            s.step()
        self._last_lr = self._lrs()

    def state_dict(self) -> dict:
        return {
            "_schedulers": [s.state_dict() for s in self._schedulers],
            "_last_lr": self._last_lr,
        }

    def load_state_dict(self, state_dict: dict) -> None:
        for s, st in zip(self._schedulers, state_dict["_schedulers"]):
            s.load_state_dict(st)
        self._last_lr = state_dict["_last_lr"]


__all__ = ["SequentialLR", "ChainedScheduler"]
