"""Adadelta, Rprop and ASGD, following PyTorch's formulas.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1.0]))
>>> opt = ember.optim.Rprop([w], lr=0.1)
>>> (w * 2).sum().backward(); opt.step(); round(w.item(), 4)
0.9
"""

from __future__ import annotations

import numpy as np

from ..backend import xp_of
from ..backend.arrays import assign
from ._checks import check_hyper
from .optimizer import Optimizer


class Adadelta(Optimizer):
    """``s = rho s + (1-rho) g^2``; ``d = sqrt(a + eps) / sqrt(s + eps) * g``;
    ``a = rho a + (1-rho) d^2``; ``p -= lr d``."""

    def __init__(
        self,
        params,
        lr=1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        foreach=None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_hyper("Adadelta", lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Adadelta: invalid rho value: {rho}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def init_state(self, p, group) -> dict:
        xp = xp_of(p._data)
        return {
            "step": 0,
            "square_avg": xp.zeros_like(p._data),
            "acc_delta": xp.zeros_like(p._data),
        }

    def update(self, p, g, state, group) -> None:
        xp = xp_of(p)
        lr, rho, eps, wd = group["lr"], group["rho"], group["eps"], group["weight_decay"]
        state["step"] += 1
        if wd:
            g = g + wd * p
        s, a = state["square_avg"], state["acc_delta"]
        s *= rho
        s += (g * g * (1.0 - rho)).astype(s.dtype, copy=False)
        delta = xp.sqrt(a + eps) / xp.sqrt(s + eps) * g
        a *= rho
        a += (delta * delta * (1.0 - rho)).astype(a.dtype, copy=False)
        p -= (delta * lr).astype(p.dtype, copy=False)


class Rprop(Optimizer):
    """Resilient backprop: each weight's step grows by ``etas[1]`` while its gradient keeps its
    sign and shrinks by ``etas[0]`` when it flips (that step is skipped); only signs are used."""

    def __init__(
        self,
        params,
        lr=1e-2,
        etas=(0.5, 1.2),
        step_sizes=(1e-6, 50),
        *,
        capturable: bool = False,
        foreach=None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_hyper("Rprop", lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Rprop: invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), maximize=maximize)
        super().__init__(params, defaults)

    def init_state(self, p, group) -> dict:
        xp = xp_of(p._data)
        return {
            "step": 0,
            "prev": xp.zeros_like(p._data),
            "step_size": xp.full_like(p._data, group["lr"]),
        }

    def update(self, p, g, state, group) -> None:
        xp = xp_of(p)
        (minus, plus), (lo, hi) = group["etas"], group["step_sizes"]
        state["step"] += 1
        trend = xp.sign(g * state["prev"])
        factor = xp.where(trend > 0, plus, xp.where(trend < 0, minus, 1.0))
        size = state["step_size"]
        assign(size, xp.clip(size * factor, lo, hi))
        g = xp.where(trend < 0, 0, g).astype(p.dtype, copy=False)
        p -= (xp.sign(g) * size).astype(p.dtype, copy=False)
        state["prev"] = g


class ASGD(Optimizer):
    """Averaged SGD: SGD with a decaying rate ``eta`` whose running average of the weights
    (``ax``, from step ``t0`` on) is kept in the state."""

    def __init__(
        self,
        params,
        lr=1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0.0,
        foreach=None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_hyper("ASGD", lr=lr, weight_decay=weight_decay)
        defaults = dict(
            lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, maximize=maximize
        )
        super().__init__(params, defaults)

    def init_state(self, p, group) -> dict:
        xp = xp_of(p._data)
        eta = float(np.float32(group["lr"]))
        return {"step": 0, "eta": eta, "mu": 1.0, "ax": xp.zeros_like(p._data)}

    def update(self, p, g, state, group) -> None:
        lr, lambd, wd = group["lr"], group["lambd"], group["weight_decay"]
        state["step"] = t = state["step"] + 1
        if wd:
            g = g + wd * p
        eta = float(state["eta"])
        p *= 1.0 - lambd * eta
        p -= (g * eta).astype(p.dtype, copy=False)
        ax = state["ax"]
        if float(state["mu"]) != 1.0:
            ax += ((p - ax) * float(state["mu"])).astype(ax.dtype, copy=False)
        else:
            ax[...] = p
        # PyTorch keeps eta and mu in float32 scalar tensors: round as it does
        state["eta"] = float(np.float32(lr / (1.0 + lambd * lr * t) ** group["alpha"]))
        state["mu"] = float(np.float32(1.0 / max(1.0, t - group["t0"])))
