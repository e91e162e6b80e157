"""Periodic schedules: CosineAnnealingLR, CosineAnnealingWarmRestarts, CyclicLR and OneCycleLR."""

from __future__ import annotations

import math

from .base import LRScheduler, _per_group


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the base lr to ``eta_min`` over ``T_0`` epochs, restarting with
    periods multiplied by ``T_mult`` (SGDR); ``step(epoch)`` may take fractional epochs.

    >>> import ember
    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.zeros(1))], lr=1.0)
    >>> s = ember.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> [round(s.get_last_lr()[0], 3) for _ in range(3) if not s.step()]
    [0.5, 1.0, 0.5]
    """

    def __init__(self, optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:  # fmt: skip
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        return [
            self.eta_min + (b - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
            for b in self.base_lrs
        ]

    def step(self, epoch=None) -> None:
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult**n
        else:
            self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        self._step_count += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = self._lrs()


class CyclicLR(LRScheduler):
    """The lr cycles between ``base_lr`` and ``max_lr`` (triangular, triangular2 or
    exp_range; or ``scale_fn``), stepped every batch; momentum cycles the other way.

    >>> import ember
    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.zeros(1))], lr=1.0, momentum=0.9)
    >>> s = ember.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, step_size_up=2)
    >>> [round(s.get_last_lr()[0], 2) for _ in range(4) if not s.step()]
    [0.55, 1.0, 0.55, 0.1]
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular", gamma: float = 1.0,
                 scale_fn=None, scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum=0.8, max_momentum=0.9, last_epoch: int = -1) -> None:  # fmt: skip
        base_lrs = _per_group(base_lr, optimizer.param_groups, "base_lr")
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group(max_lr, optimizer.param_groups, "max_lr")
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size, self.step_ratio = up + down, up / (up + down)
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma, self.scale_fn_custom = mode, gamma, scale_fn
        self.scale_mode = (
            scale_mode
            if scale_fn is not None
            else ("iterations" if mode == "exp_range" else "cycle")
        )
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group(base_momentum, optimizer.param_groups, "base_momentum")
            self.max_momentums = _per_group(max_momentum, optimizer.param_groups, "max_momentum")
            if last_epoch == -1:
                for m, b, group in zip(
                    self.max_momentums, self.base_momentums, optimizer.param_groups
                ):
                    if self.use_beta1:
                        group["betas"] = (m, *group["betas"][1:])
                    else:
                        group["momentum"] = m
                    group["max_momentum"], group["base_momentum"] = m, b
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x: float) -> float:
        if self.scale_fn_custom is not None:
            return self.scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self) -> list:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        scale = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [b + (m - b) * scale * self.scale_fn(at) for b, m in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, b, m in zip(
                self.optimizer.param_groups, self.base_momentums, self.max_momentums
            ):
                momentum = m - (m - b) * scale * self.scale_fn(at)
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs

    def state_dict(self) -> dict:
        state = super().state_dict()
        state.pop("scale_fn_custom", None)
        return state


class CosineAnnealingLR(LRScheduler):
    """Cosine from the base lr down to ``eta_min`` over ``T_max`` epochs (PyTorch's recursive
    form, so values match it step by step)."""

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:  # noqa: N803
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        e, t, lo = self.last_epoch, self.T_max, self.eta_min
        if e == 0:
            return self._lrs()
        if self._step_count == 1 and e > 0:
            return self._get_closed_form_lr()
        if (e - 1 - t) % (2 * t) == 0:
            return [
                lr + (b - lo) * (1 - math.cos(math.pi / t)) / 2
                for b, lr in zip(self.base_lrs, self._lrs())
            ]
        return [
            (1 + math.cos(math.pi * e / t)) / (1 + math.cos(math.pi * (e - 1) / t)) * (lr - lo) + lo
            for lr in self._lrs()
        ]

    def _get_closed_form_lr(self) -> list:
        e, t, lo = self.last_epoch, self.T_max, self.eta_min
        return [lo + (b - lo) * (1 + math.cos(math.pi * e / t)) / 2 for b in self.base_lrs]


class OneCycleLR(LRScheduler):
    """The 1cycle policy: warm up to ``max_lr``, anneal far below the start; cycles momentum
    (or Adam's beta1) the other way. Step it once per batch."""

    def __init__(
        self,
        optimizer,
        max_lr,
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum=0.85,
        max_momentum=0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError(
                    "OneCycleLR: you must define either total_steps OR (epochs AND steps_per_epoch)"
                )
            total_steps = epochs * steps_per_epoch
        if total_steps <= 0:
            raise ValueError(
                f"OneCycleLR: expected positive integer total_steps, got {total_steps}"
            )
        if not 0 <= pct_start <= 1:
            raise ValueError(
                f"OneCycleLR: expected float between 0 and 1 pct_start, got {pct_start}"
            )
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                "OneCycleLR: anneal_strategy must be one of 'cos' or 'linear', got "
                f"{anneal_strategy}"
            )
        self.total_steps = total_steps
        self.anneal_strategy = anneal_strategy
        warmup_end = float(pct_start * total_steps) - 1
        warmup = _phase(warmup_end, "initial_lr", "max_lr", "max", "base")
        if three_phase:
            self._schedule_phases = [
                warmup,
                _phase(
                    float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr", "base", "max"
                ),
                _phase(total_steps - 1, "initial_lr", "min_lr", "max", "max"),
            ]
        else:
            self._schedule_phases = [
                warmup,
                _phase(total_steps - 1, "max_lr", "min_lr", "base", "max"),
            ]
        groups = optimizer.param_groups
        max_lrs = _per_group(max_lr, groups, "max_lr")
        if last_epoch == -1:
            for lr, group in zip(max_lrs, groups):
                group["initial_lr"] = lr / div_factor
                group["max_lr"] = lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "OneCycleLR: optimizer must support momentum or beta1 with `cycle_momentum` "
                    "option enabled"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            maxes = _per_group(max_momentum, groups, "max_momentum")
            bases = _per_group(base_momentum, groups, "base_momentum")
            if last_epoch == -1:
                for m_max, m_base, group in zip(maxes, bases, groups):
                    if self.use_beta1:
                        group["betas"] = (m_max, *group["betas"][1:])
                    else:
                        group["momentum"] = m_max
                    group["max_momentum"] = m_max
                    group["base_momentum"] = m_base
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"OneCycleLR: tried to step {step} times; the specified number of total steps "
                f"is {self.total_steps}"
            )
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end = phase["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lr = self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        mom = self._anneal(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                        )
                    break
                start = phase["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (mom, *group["betas"][1:])
                else:
                    group["momentum"] = mom
        return lrs


def _phase(end_step, start_lr: str, end_lr: str, start_momentum: str, end_momentum: str) -> dict:
    """One OneCycleLR phase: the group keys it anneals between ('max'/'base' momentum)."""
    return dict(
        end_step=end_step,
        start_lr=start_lr,
        end_lr=end_lr,
        start_momentum=f"{start_momentum}_momentum",
        end_momentum=f"{end_momentum}_momentum",
    )


__all__ = ["CosineAnnealingWarmRestarts", "CyclicLR", "CosineAnnealingLR", "OneCycleLR"]
