"""ReduceLROnPlateau: lower the learning rate when a metric stops improving."""

from __future__ import annotations

import math

from .base import _per_group


class ReduceLROnPlateau:
    """Cut the lr by ``factor`` when a metric stops improving for ``patience`` epochs.

    >>> import ember
    >>> opt = ember.optim.SGD([ember.tensor([1.0], requires_grad=True)], lr=1.0)
    >>> sched = ember.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0)
    >>> sched.step(1.0); sched.step(2.0); sched.get_last_lr()
    [0.1]
    """

    def __init__(
        self,
        optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr=0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau: factor should be < 1.0")
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode {mode} is unknown")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold mode {threshold_mode} is unknown")
        self.optimizer = optimizer
        self.factor, self.patience, self.cooldown, self.eps = factor, patience, cooldown, eps
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.min_lrs = _per_group(min_lr, optimizer.param_groups, "min_lr")
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def _is_better(self, a: float, best: float) -> bool:
        rel = self.threshold_mode == "rel"
        if self.mode == "min":
            return a < best * (1.0 - self.threshold) if rel else a < best - self.threshold
        return a > best * (self.threshold + 1.0) if rel else a > best + self.threshold

    def step(self, metrics) -> None:
        current = float(metrics)
        self.last_epoch += 1
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for i, group in enumerate(self.optimizer.param_groups):
                old = float(group["lr"])
                new = max(old * self.factor, self.min_lrs[i])
                if old - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list:
        return self._last_lr

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)


__all__ = ["ReduceLROnPlateau"]
