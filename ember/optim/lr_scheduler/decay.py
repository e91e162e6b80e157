"""Decaying schedules: StepLR, MultiStepLR, ExponentialLR, LinearLR, LambdaLR, MultiplicativeLR,
ConstantLR, PolynomialLR.

>>> import ember
>>> opt = ember.optim.SGD([ember.nn.Parameter(ember.zeros(1))], lr=1.0)
>>> sched = ember.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
>>> [round(opt.param_groups[0]["lr"], 3) for _ in range(3) if not sched.step()]
[0.5, 1.0, 1.0]

"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter

from .base import LRScheduler, _per_group


class StepLR(LRScheduler):
    """Multiply the lr by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]

    def _get_closed_form_lr(self) -> list:
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the lr by ``gamma`` at each milestone epoch."""

    def __init__(self, optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch not in self.milestones:
            return self._lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._lrs()]

    def _get_closed_form_lr(self) -> list:
        ms = sorted(self.milestones.elements())
        return [b * self.gamma ** bisect_right(ms, self.last_epoch) for b in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the lr by ``gamma`` every epoch."""

    def __init__(self, optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0:
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]

    def _get_closed_form_lr(self) -> list:
        return [b * self.gamma**self.last_epoch for b in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the lr linearly from ``start_factor`` to ``end_factor`` over ``total_iters``."""

    def __init__(
        self,
        optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if not 0 < start_factor <= 1 or not 0 <= end_factor <= 1:
            raise ValueError(
                "LinearLR: start_factor must be in (0, 1] and end_factor in [0, 1], got "
                f"{start_factor} and {end_factor}"
            )
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        e, s, f, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
        if e == 0:
            return [lr * s for lr in self._lrs()]
        if e > n:
            return self._lrs()
        return [lr * (1.0 + (f - s) / (n * s + (e - 1) * (f - s))) for lr in self._lrs()]

    def _get_closed_form_lr(self) -> list:
        e, s, f, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
        return [b * (s + (f - s) * min(n, e) / n) for b in self.base_lrs]


class LambdaLR(LRScheduler):
    """lr = base lr * ``lr_lambda(epoch)`` (one function, or one per group)."""

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1) -> None:
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"LambdaLR: expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        return [b * f(self.last_epoch) for f, b in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None] * len(self.lr_lambdas)
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        state.pop("lr_lambdas", None)
        self.__dict__.update(state)


class MultiplicativeLR(LRScheduler):
    """Multiply each group's lr by ``lr_lambda(epoch)`` every epoch.

    >>> import ember
    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.zeros(1))], lr=1.0)
    >>> s = ember.optim.lr_scheduler.MultiplicativeLR(opt, lambda e: 0.5); s.step()
    >>> s.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1) -> None:
        self.lr_lambdas = _per_group(lr_lambda, optimizer.param_groups, "lr_lambda")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self._step_count > 1 and self.last_epoch > 0:
            return [g["lr"] * f(self.last_epoch) for f, g in zip(self.lr_lambdas, self._groups())]
        return self._lrs()

    def _groups(self):
        return self.optimizer.param_groups


class ConstantLR(LRScheduler):
    """The lr times ``factor`` for the first ``total_iters`` epochs, then the lr itself.

    >>> import ember
    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.zeros(1))], lr=1.0)
    >>> ember.optim.lr_scheduler.ConstantLR(opt, factor=0.25).get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:  # fmt: skip
        if not 0 <= factor <= 1:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._lrs()]
        if self.last_epoch != self.total_iters:
            return self._lrs()
        return [lr * (1.0 / self.factor) for lr in self._lrs()]

    def _get_closed_form_lr(self) -> list:
        scale = self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)
        return [b * scale for b in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay to 0 over ``total_iters`` epochs as ``(1 - t / total_iters) ** power``.

    >>> import ember
    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.zeros(1))], lr=1.0)
    >>> s = ember.optim.lr_scheduler.PolynomialLR(opt, total_iters=4); s.step(); s.get_last_lr()
    [0.75]
    """

    def __init__(self, optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:  # fmt: skip
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self._step_count == 1 or self.last_epoch == 0 or self.last_epoch > self.total_iters:
            return self._lrs()
        e, n = self.last_epoch, self.total_iters
        decay = ((1.0 - e / n) / (1.0 - (e - 1) / n)) ** self.power
        return [lr * decay for lr in self._lrs()]

    def _get_closed_form_lr(self) -> list:
        e = min(self.total_iters, self.last_epoch)
        return [b * (1.0 - e / self.total_iters) ** self.power for b in self.base_lrs]


__all__ = [
    "StepLR",
    "MultiStepLR",
    "ExponentialLR",
    "LinearLR",
    "LambdaLR",
    "MultiplicativeLR",
    "ConstantLR",
    "PolynomialLR",
]
