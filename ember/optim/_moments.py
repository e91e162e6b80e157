"""What NAdam and RAdam share with Adam: weight decay, then the first and second moments.

>>> import ember
>>> from ember.optim import NAdam
>>> sorted(NAdam([ember.nn.Parameter(ember.ones(1))]).init_state(ember.ones(1), {}))
['exp_avg', 'exp_avg_sq', 'mu_product', 'step']
"""

from __future__ import annotations

from ._checks import check_hyper
from .optimizer import Optimizer, state_like, step_count


class AdamLike(Optimizer):
    """An optimizer with Adam's hyperparameter checks and moment state."""

    def __init__(self, params, defaults: dict) -> None:
        name = type(self).__name__
        check_hyper(
            name, lr=defaults["lr"], eps=defaults["eps"], weight_decay=defaults["weight_decay"],
            betas=defaults["betas"],
        )  # fmt: skip
        super().__init__(params, defaults)

    def init_state(self, p, group) -> dict:
        return {"step": step_count(), "exp_avg": state_like(p), "exp_avg_sq": state_like(p)}


def moments(p, g, state, group, hp):
    """Weight decay (decoupled when ``group["decoupled_weight_decay"]``), then the moment
    updates, in ember ops; returns ``(g, m, v)``."""
    lr, (b1, b2), wd = hp["lr"], hp["betas"], hp["weight_decay"]
    if group["weight_decay"]:
        if group["decoupled_weight_decay"]:
            p.mul_(1.0 - lr * wd)
        else:
            g = g + wd * p
    m, v = state["exp_avg"], state["exp_avg_sq"]
    m.add_((g - m) * (1.0 - b1))
    v.mul_(b2)
    v.add_(g * g * (1.0 - b2))
    return g, m, v


def moments_numpy(p, g, state, group):
    """``moments`` in place on the arrays; returns ``(g, m, v, t)``."""
    lr, (b1, b2), wd = group["lr"], group["betas"], group["weight_decay"]
    t = float(state["step"]._data)
    if wd:
        if group["decoupled_weight_decay"]:
            p *= 1.0 - lr * wd
        else:
            g = g + wd * p
    m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
    m += ((g - m) * (1.0 - b1)).astype(m.dtype, copy=False)
    v *= b2
    v += (g * g * (1.0 - b2)).astype(v.dtype, copy=False)
    return g, m, v, t
