"""Adadelta, following PyTorch's formulas.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1.0]))
>>> opt = ember.optim.Adadelta([w], lr=1.0)
>>> (w * 2).sum().backward(); opt.step(); round(w.item(), 4)
0.9968
"""

from __future__ import annotations

from ..backend import overrides
from ._checks import check_hyper
from .optimizer import Optimizer, state_like, step_count


class Adadelta(Optimizer):
    """``s = rho s + (1-rho) g^2``; ``d = sqrt(a + eps) / sqrt(s + eps) * g``;
    ``a = rho a + (1-rho) d^2``; ``p -= lr d``."""

    def __init__(
        self,
        params,
        lr=1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach=None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_hyper("Adadelta", lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Adadelta: invalid rho value: {rho}")
        defaults = dict(
            lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
            capturable=capturable, foreach=foreach, differentiable=differentiable,
        )  # fmt: skip
        super().__init__(params, defaults)

    def init_state(self, p, group) -> dict:
        return {"step": step_count(), "square_avg": state_like(p), "acc_delta": state_like(p)}

    def update(self, p, g, state, group, hp) -> None:
        lr, rho, eps = hp["lr"], hp["rho"], hp["eps"]
        if group["weight_decay"]:
            g = g + hp["weight_decay"] * p
        s, a = state["square_avg"], state["acc_delta"]
        s.mul_(rho)
        s.add_(g * g * (1.0 - rho))
        delta = (a + eps).sqrt() / (s + eps).sqrt() * g
        a.mul_(rho)
        a.add_(delta * delta * (1.0 - rho))
        p.sub_(delta * lr)


@overrides.register(Adadelta, "cpu")
def _adadelta_numpy(opt, xp, p, g, state, group):
    """``Adadelta.update`` in place on the arrays, term for term."""
    lr, rho, eps, wd = group["lr"], group["rho"], group["eps"], group["weight_decay"]
    if wd:
        g = g + wd * p
    s, a = state["square_avg"]._data, state["acc_delta"]._data
    s *= rho
    s += (g * g * (1.0 - rho)).astype(s.dtype, copy=False)
    delta = xp.sqrt(a + eps) / xp.sqrt(s + eps) * g
    a *= rho
    a += (delta * delta * (1.0 - rho)).astype(a.dtype, copy=False)
    p -= (delta * lr).astype(p.dtype, copy=False)
