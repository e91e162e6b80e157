"""Adamax (Adam with the infinity norm), following PyTorch's formulas.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1.0]))
>>> opt = ember.optim.Adamax([w], lr=0.1)
>>> (w * 2).sum().backward(); opt.step(); round(w.item(), 4)
0.9
"""

from __future__ import annotations

from ..backend import overrides
from ..backend.arrays import assign
from ..backend.scalars import power
from ._checks import check_hyper
from .optimizer import Optimizer, state_like, step_count


class Adamax(Optimizer):
    """``m = b1 m + (1-b1) g``; ``u = max(b2 u, |g| + eps)``; ``p -= lr/(1-b1^t) * m / u``."""

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach=None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_hyper("Adamax", lr=lr, eps=eps, weight_decay=weight_decay, betas=betas)
        defaults = dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, foreach=foreach,
            maximize=maximize, differentiable=differentiable, capturable=capturable,
        )  # fmt: skip
        super().__init__(params, defaults)

    def init_state(self, p, group) -> dict:
        return {"step": step_count(), "exp_avg": state_like(p), "exp_inf": state_like(p)}

    def update(self, p, g, state, group, hp) -> None:
        lr, (b1, b2), eps, wd = hp["lr"], hp["betas"], hp["eps"], hp["weight_decay"]
        t = hp["step"]
        if group["weight_decay"]:
            g = g + wd * p
        m, u = state["exp_avg"], state["exp_inf"]
        m.add_((g - m) * (1.0 - b1))
        u.copy_((u * b2).maximum(g.abs() + eps))
        p.sub_(m / u * (lr / (1.0 - b1**t)))


@overrides.register(Adamax, "cpu")
def _adamax_numpy(opt, xp, p, g, state, group):
    """``Adamax.update`` in place on the arrays, term for term."""
    lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
    t = float(state["step"]._data)
    if wd:
        g = g + wd * p
    m, u = state["exp_avg"]._data, state["exp_inf"]._data
    m += ((g - m) * (1.0 - b1)).astype(m.dtype, copy=False)
    assign(u, xp.maximum(u * b2, xp.abs(g) + eps))
    p -= (m / u * (lr / (1.0 - power(b1, t)))).astype(p.dtype, copy=False)
