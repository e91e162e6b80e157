"""RAdam (rectified Adam), following PyTorch's formulas.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1.0]))
>>> opt = ember.optim.RAdam([w], lr=0.1)
>>> (w * 2).sum().backward(); opt.step(); round(w.item(), 4)
0.8
"""

from __future__ import annotations

import math

from ..backend import overrides
from ..backend.scalars import power
from ..functions.elementwise import where
from ._moments import AdamLike, moments, moments_numpy


class RAdam(AdamLike):
    """Adam with the variance of the adaptive rate rectified (Liu et al.): plain momentum SGD
    for the first steps, while fewer than 5 effective samples back the second moment."""

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
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
                lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize,
                foreach=foreach, capturable=capturable,
                decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable,
            ),
        )  # fmt: skip

    def update(self, p, g, state, group, hp) -> None:
        g, m, v = moments(p, g, state, group, hp)
        lr, (b1, b2), eps = hp["lr"], hp["betas"], hp["eps"]
        t = hp["step"]
        bc1, bc2 = 1.0 - b1**t, 1.0 - b2**t
        rho_inf = 2.0 / (1.0 - b2) - 1.0
        rho_t = rho_inf - 2.0 * t * b2**t / bc2
        ratio = (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
        rect = ratio.clamp(min=0.0).sqrt()  # used only where rho_t > 5, where ratio > 0
        adaptive = m / bc1 * (bc2.sqrt() * rect * lr) / (v.sqrt() + eps)
        p.sub_(where(rho_t > 5.0, adaptive, m * (lr / bc1)))


@overrides.register(RAdam, "cpu")
def _radam_numpy(opt, xp, p, g, state, group):
    """``RAdam.update`` in place on the arrays, term for term."""
    g, m, v, t = moments_numpy(p, g, state, group)
    lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
    bc1, bc2 = 1.0 - power(b1, t), 1.0 - power(b2, t)
    rho_inf = 2.0 / (1.0 - b2) - 1.0
    rho_t = rho_inf - 2.0 * t * power(b2, t) / bc2
    if rho_t > 5.0:
        rect = math.sqrt(
            (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
        )
        step = m / bc1 * (math.sqrt(bc2) * rect * lr) / (xp.sqrt(v) + eps)
    else:
        step = m * (lr / bc1)
    p -= step.astype(p.dtype, copy=False)
