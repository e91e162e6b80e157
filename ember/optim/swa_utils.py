"""Stochastic weight averaging, as PyTorch's ``torch.optim.swa_utils``: ``AveragedModel``
(a running equal-weight or EMA average of a model's parameters), ``SWALR`` (anneals each
group's lr to a fixed ``swa_lr``) and ``update_bn`` (recomputes BatchNorm statistics).

>>> import ember
>>> from ember.optim.swa_utils import AveragedModel
>>> model = ember.nn.Linear(1, 1, bias=False)
>>> swa = AveragedModel(model)
>>> for value in (1.0, 2.0, 6.0):
...     _ = ember.nn.init.constant_(model.weight, value)
...     swa.update_parameters(model)
>>> swa.module.weight.item(), swa.n_averaged.item()
(3.0, 3)
"""

from __future__ import annotations

import copy
import itertools
import math

from .._config import no_grad
from ..nn.module import Module
from .lr_scheduler.base import LRScheduler, _per_group


def _lerp_(averaged, current, weight: float) -> None:
    """``averaged += weight * (current - averaged)`` in place, as ``torch.lerp`` rounds."""
    if averaged.is_floating_point():
        if weight < 0.5:
            averaged.copy_(averaged + weight * (current - averaged))
        else:
            averaged.copy_(current - (current - averaged) * (1 - weight))
    else:
        averaged.add_(((current - averaged) * weight).to(averaged.dtype))


def get_ema_multi_avg_fn(decay: float = 0.999):
    """An exponential moving average over lists: ``ema += (1 - decay) * (current - ema)``."""

    def ema_update(ema_params, current_params, num_averaged) -> None:
        for e, c in zip(ema_params, current_params):
            _lerp_(e, c, 1 - decay)

    return ema_update


def get_swa_multi_avg_fn():
    """The equal-weight running average over lists of parameters."""

    def swa_update(averaged_params, current_params, num_averaged) -> None:
        weight = 1.0 / (float(num_averaged) + 1)
        for a, c in zip(averaged_params, current_params):
            _lerp_(a, c, weight)

    return swa_update


def get_ema_avg_fn(decay: float = 0.999):
    """An exponential moving average of one parameter."""

    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The equal-weight running average of one parameter."""

    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) hold the
    average of the models passed to ``update_parameters``; calling it runs the copy."""

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers: bool = False) -> None:  # fmt: skip
        from ..dtypes import int64
        from ..functions.creation import tensor

        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, model: Module) -> list:
        if self.use_buffers:
            return list(itertools.chain(model.parameters(), model.buffers()))
        return list(model.parameters())

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s parameters into the average (the first call copies them)."""
        n = int(self.n_averaged.item())
        with no_grad():
            mine = [p.detach() for p in self._tensors(self.module)]
            theirs = [p.detach().to(p_mine.device) for p, p_mine in
                      zip(self._tensors(model), mine)]  # fmt: skip
            if n == 0:
                for a, c in zip(mine, theirs):
                    a.copy_(c)
            elif self.avg_fn is not None:
                for a, c in zip(mine, theirs):
                    a.copy_(self.avg_fn(a, c, self.n_averaged))
            else:
                (self.multi_avg_fn or get_swa_multi_avg_fn())(mine, theirs, self.n_averaged)
            if not self.use_buffers:  # buffers follow the source model
                for b_mine, b_model in zip(self.module.buffers(), model.buffers()):
                    b_mine.copy_(b_model.detach().to(b_mine.device))
            self.n_averaged.add_(1)


def update_bn(loader, model: Module, device=None) -> None:
    """Recompute the running statistics of ``model``'s BatchNorm layers with one pass over
    ``loader`` (batches, or tuples whose first item is the input), as a cumulative average."""
    from ..nn.layers.normalization import _BatchNorm

    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr from its value to ``swa_lr`` over ``anneal_epochs`` steps
    (``"cos"`` or ``"linear"``), then holds it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1) -> None:  # fmt: skip
        for value, group in zip(_per_group(swa_lr, optimizer.param_groups, "swa_lr"),
                                optimizer.param_groups):  # fmt: skip
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', "
                             f"instead got {anneal_strategy}")  # fmt: skip
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_strategy, self.anneal_epochs = anneal_strategy, anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _anneal(self, t: float) -> float:
        return t if self.anneal_strategy == "linear" else (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self._anneal(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        groups = self.optimizer.param_groups
        prev = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self._anneal(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev)]


__all__ = ["AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]  # fmt: skip
