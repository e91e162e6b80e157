"""ASGD (averaged stochastic gradient descent), following PyTorch's formulas.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1.0]))
>>> opt = ember.optim.ASGD([w], lr=0.1)
>>> (w * 2).sum().backward(); opt.step(); round(w.item(), 4)
0.8
"""

from __future__ import annotations

from ..backend import overrides
from ..functions.elementwise import where
from ._checks import check_hyper
from .optimizer import Optimizer, scalar_state, state_like, step_count


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
        weight_decay: float = 0,
        foreach=None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_hyper("ASGD", lr=lr, weight_decay=weight_decay)
        defaults = dict(
            lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
            maximize=maximize, differentiable=differentiable, capturable=capturable,
        )  # fmt: skip
        super().__init__(params, defaults)

    def init_state(self, p, group) -> dict:
        # PyTorch keeps eta and mu in float32 scalar tensors: so does this
        return {
            "step": step_count(),
            "eta": scalar_state(p, group["lr"]),
            "mu": scalar_state(p, 1.0),
            "ax": state_like(p),
        }

    def update(self, p, g, state, group, hp) -> None:
        lr, lambd = hp["lr"], hp["lambd"]
        t = hp["step"]
        if group["weight_decay"]:
            g = g + hp["weight_decay"] * p
        eta, mu, ax = state["eta"], state["mu"], state["ax"]
        p.mul_(1.0 - lambd * eta)
        p.sub_(g * eta)
        ax.copy_(where(mu != 1.0, ax + (p - ax) * mu, p))
        eta.copy_(lr / (1.0 + lambd * lr * t) ** hp["alpha"])
        mu.copy_(1.0 / (t - hp["t0"]).clamp(min=1.0))


@overrides.register(ASGD, "cpu")
def _asgd_numpy(opt, xp, p, g, state, group):
    """``ASGD.update`` in place on the arrays, term for term."""
    lr, lambd, wd = group["lr"], group["lambd"], group["weight_decay"]
    t = float(state["step"]._data)
    if wd:
        g = g + wd * p
    eta_held, mu_held = state["eta"]._data, state["mu"]._data
    eta, mu = float(eta_held), float(mu_held)
    p *= 1.0 - lambd * eta
    p -= (g * eta).astype(p.dtype, copy=False)
    ax = state["ax"]._data
    if mu != 1.0:
        ax += ((p - ax) * mu).astype(ax.dtype, copy=False)
    else:
        ax[...] = p
    eta_held[...] = lr / (1.0 + lambd * lr * t) ** group["alpha"]
    mu_held[...] = 1.0 / max(1.0, t - group["t0"])
