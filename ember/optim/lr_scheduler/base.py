"""LRScheduler: the base class, its ``step()`` call order, last-lr bookkeeping and state dicts."""

from __future__ import annotations

from ..optimizer import Optimizer


class LRScheduler:
    """Base: sets ``initial_lr`` on each group, keeps ``last_epoch`` and ``base_lrs``."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming an optimizer"
                    )
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self.step()

    def get_lr(self) -> list:
        raise NotImplementedError

    def get_last_lr(self) -> list:
        """The learning rates the last ``step`` set, one per group."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        """Everything but the optimizer (and callables, which can't be saved)."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer" and not callable(v)}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)

    def _lrs(self) -> list:
        return [group["lr"] for group in self.optimizer.param_groups]


_LRScheduler = LRScheduler


def _per_group(value, groups: list, name: str) -> list:
    if isinstance(value, (list, tuple)):
        if len(value) != len(groups):
            raise ValueError(f"expected {len(groups)} values for {name}, got {len(value)}")
        return list(value)
    return [value] * len(groups)


__all__ = ["LRScheduler"]
