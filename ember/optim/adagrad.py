"""Adagrad, following PyTorch's formulas (lr decay, initial accumulator value).

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1.0]))
>>> opt = ember.optim.Adagrad([w], lr=0.1)
>>> (w * 2).sum().backward(); opt.step(); round(w.item(), 4)
0.9
"""

from __future__ import annotations

from ..backend import overrides
from .optimizer import Optimizer, state_like, step_count


class Adagrad(Optimizer):
    """``sum += g^2``; ``p -= lr / (1 + (t-1) lr_decay) * g / (sqrt(sum) + eps)``."""

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach=None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused=None,
    ) -> None:
        for name, v in (
            ("learning rate", lr),
            ("lr_decay value", lr_decay),
            ("weight_decay value", weight_decay),
            ("epsilon value", eps),
            ("initial_accumulator_value value", initial_accumulator_value),
        ):
            if v < 0.0:
                raise ValueError(f"Adagrad: invalid {name}: {v}")
        super().__init__(
            params,
            dict(
                lr=lr,
                lr_decay=lr_decay,
                eps=eps,
                weight_decay=weight_decay,
                initial_accumulator_value=initial_accumulator_value,
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
                fused=fused,
            ),
        )

    def init_state(self, p, group) -> dict:
        return {"step": step_count(), "sum": state_like(p, group["initial_accumulator_value"])}

    def update(self, p, g, state, group, hp) -> None:
        t = hp["step"]
        if group["weight_decay"]:
            g = g + hp["weight_decay"] * p
        clr = hp["lr"] / (1.0 + (t - 1.0) * hp["lr_decay"])
        s = state["sum"]
        s.add_(g * g)
        std = s.sqrt() + hp["eps"]
        p.sub_(clr * (g / std))


@overrides.register(Adagrad, "cpu")
def _adagrad_numpy(opt, xp, p, g, state, group):
    """``Adagrad.update`` in place on the arrays, term for term."""
    t = float(state["step"]._data)
    if group["weight_decay"]:
        g = g + group["weight_decay"] * p
    clr = group["lr"] / (1.0 + (t - 1) * group["lr_decay"])
    s = state["sum"]._data
    s += g * g
    std = xp.sqrt(s)
    std += group["eps"]
    p -= clr * (g / std)
