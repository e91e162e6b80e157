"""NAdam (Adam with Nesterov momentum), following PyTorch's formulas.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1.0]))
>>> opt = ember.optim.NAdam([w], lr=0.1)
>>> (w * 2).sum().backward(); opt.step(); round(w.item(), 4)
0.8944
"""

from __future__ import annotations

import numpy as np

from ..backend import overrides
from ..backend.scalars import power
from ._checks import check_hyper
from ._moments import AdamLike, moments, moments_numpy
from .optimizer import scalar_state


class NAdam(AdamLike):
    """Adam whose momentum looks ahead (Dozat), with PyTorch's ``momentum_decay`` schedule
    ``mu_t = b1 (1 - 0.5 * 0.96^(t * momentum_decay))``."""

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
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
                maximize=maximize, foreach=foreach, capturable=capturable,
                differentiable=differentiable,
            ),
        )  # fmt: skip

    def init_state(self, p, group) -> dict:
        # PyTorch keeps the product in a float32 scalar tensor (after the step): so does this
        state = super().init_state(p, group)
        return {"step": state.pop("step"), "mu_product": scalar_state(p, 1.0), **state}

    def update(self, p, g, state, group, hp) -> None:
        g, m, v = moments(p, g, state, group, hp)
        lr, (b1, b2), eps, md = hp["lr"], hp["betas"], hp["eps"], hp["momentum_decay"]
        t = hp["step"]
        mu = b1 * (1.0 - 0.5 * 0.96 ** (t * md))
        mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1.0) * md))
        held = state["mu_product"]  # float32, multiplied as PyTorch does (by a Python float)
        prod = held.mul_(mu.to(held.dtype)).double()
        denom = (v / (1.0 - b2**t)).sqrt() + eps
        step = g * (lr * (1.0 - mu) / (1.0 - prod)) + m * (lr * mu_next / (1.0 - prod * mu_next))
        p.sub_(step / denom)


@overrides.register(NAdam, "cpu")
def _nadam_numpy(opt, xp, p, g, state, group):
    """``NAdam.update`` in place on the arrays, term for term."""
    g, m, v, t = moments_numpy(p, g, state, group)
    lr, (b1, b2), eps, md = group["lr"], group["betas"], group["eps"], group["momentum_decay"]
    mu = b1 * (1.0 - 0.5 * power(0.96, t * md))
    mu_next = b1 * (1.0 - 0.5 * power(0.96, (t + 1) * md))
    held = state["mu_product"]._data
    held[...] = np.float32(held) * np.float32(mu)
    prod = float(held)
    denom = xp.sqrt(v / (1.0 - power(b2, t))) + eps
    step = g * (lr * (1.0 - mu) / (1.0 - prod)) + m * (lr * mu_next / (1.0 - prod * mu_next))
    p -= (step / denom).astype(p.dtype, copy=False)
