"""NAdam (Adam with Nesterov momentum) and RAdam (rectified Adam), following PyTorch.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1.0]))
>>> opt = ember.optim.RAdam([w], lr=0.1)
>>> (w * 2).sum().backward(); opt.step(); round(w.item(), 4)
0.8
"""

from __future__ import annotations

import math

import numpy as np

from ..backend import xp_of
from ._checks import check_hyper
from .optimizer import Optimizer


def _moments(p, g, state, group, decoupled: bool):
    """Weight decay, then the first and second moment updates; returns (g, m, v, t)."""
    lr, (b1, b2), wd = group["lr"], group["betas"], group["weight_decay"]
    state["step"] = t = state["step"] + 1
    if wd:
        if decoupled:
            p *= 1.0 - lr * wd
        else:
            g = g + wd * p
    m, v = state["exp_avg"], state["exp_avg_sq"]
    m += ((g - m) * (1.0 - b1)).astype(m.dtype, copy=False)
    v *= b2
    v += (g * g * (1.0 - b2)).astype(v.dtype, copy=False)
    return g, m, v, t


class _AdamLike(Optimizer):
    def __init__(self, params, defaults: dict) -> None:
        name = type(self).__name__
        check_hyper(
            name, lr=defaults["lr"], eps=defaults["eps"], weight_decay=defaults["weight_decay"],
            betas=defaults["betas"],
        )  # fmt: skip
        super().__init__(params, defaults)

    def init_state(self, p, group) -> dict:
        xp = xp_of(p._data)
        return {
            "step": 0,
            "exp_avg": xp.zeros_like(p._data),
            "exp_avg_sq": xp.zeros_like(p._data),
        }


class NAdam(_AdamLike):
    """Adam whose momentum looks ahead (Dozat), with PyTorch's ``momentum_decay`` schedule
    ``mu_t = b1 (1 - 0.5 * 0.96^(t * momentum_decay))``."""

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach=None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_hyper("NAdam", momentum_decay=momentum_decay)
        super().__init__(
            params,
            dict(
                lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                maximize=maximize,
            ),
        )  # fmt: skip

    def init_state(self, p, group) -> dict:
        return dict(super().init_state(p, group), mu_product=1.0)

    def update(self, p, g, state, group) -> None:
        xp = xp_of(p)
        g, m, v, t = _moments(p, g, state, group, group["decoupled_weight_decay"])
        lr, (b1, b2), eps, md = group["lr"], group["betas"], group["eps"], group["momentum_decay"]
        mu = b1 * (1.0 - 0.5 * 0.96 ** (t * md))
        mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * md))
        # PyTorch keeps the product in a float32 scalar tensor: round as it does
        state["mu_product"] = prod = float(np.float32(state["mu_product"]) * np.float32(mu))
        denom = xp.sqrt(v / (1.0 - b2**t)) + eps
        step = g * (lr * (1.0 - mu) / (1.0 - prod)) + m * (lr * mu_next / (1.0 - prod * mu_next))
        p -= (step / denom).astype(p.dtype, copy=False)


class RAdam(_AdamLike):
    """Adam with the variance of the adaptive rate rectified (Liu et al.): plain momentum SGD
    for the first steps, while fewer than 5 effective samples back the second moment."""

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
        *,
        foreach=None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        super().__init__(
            params,
            dict(
                lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
            ),
        )  # fmt: skip

    def update(self, p, g, state, group) -> None:
        xp = xp_of(p)
        g, m, v, t = _moments(p, g, state, group, group["decoupled_weight_decay"])
        lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
        bc1, bc2 = 1.0 - b1**t, 1.0 - b2**t
        rho_inf = 2.0 / (1.0 - b2) - 1.0
        rho_t = rho_inf - 2.0 * t * b2**t / bc2
        if rho_t > 5.0:
            rect = math.sqrt(
                (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
            )
            step = m / bc1 * (math.sqrt(bc2) * rect * lr) / (xp.sqrt(v) + eps)
        else:
            step = m * (lr / bc1)
        p -= step.astype(p.dtype, copy=False)
