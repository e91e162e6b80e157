"""RMSprop (optionally centered, with momentum), following PyTorch's formulas.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1.0]))
>>> opt = ember.optim.RMSprop([w], lr=0.01)
>>> (w * 2).sum().backward(); opt.step(); round(w.item(), 4)
0.9
"""

from __future__ import annotations

from ..backend import overrides
from .optimizer import Optimizer, state_like, step_count


class RMSprop(Optimizer):
    """``s = alpha s + (1-alpha) g^2``; ``p -= lr g / (sqrt(s) + eps)`` (centered subtracts the
    squared mean gradient; momentum accumulates ``g / (sqrt(s) + eps)``)."""

    def __init__(
        self,
        params,
        lr=1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach=None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        for name, v in (
            ("learning rate", lr),
            ("epsilon value", eps),
            ("momentum value", momentum),
            ("weight_decay value", weight_decay),
            ("alpha value", alpha),
        ):
            if v < 0.0:
                raise ValueError(f"RMSprop: invalid {name}: {v}")
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                alpha=alpha,
                eps=eps,
                centered=centered,
                weight_decay=weight_decay,
                capturable=capturable,
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
            ),
        )

    def init_state(self, p, group) -> dict:
        state = {"step": step_count(), "square_avg": state_like(p)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = state_like(p)
        if group["centered"]:
            state["grad_avg"] = state_like(p)
        return state

    def update(self, p, g, state, group, hp) -> None:
        lr, alpha, eps = hp["lr"], hp["alpha"], hp["eps"]
        if group["weight_decay"]:
            g = g + hp["weight_decay"] * p
        sq = state["square_avg"]
        sq.mul_(alpha)
        sq.add_((1.0 - alpha) * g * g)
        if group["centered"]:
            ga = state["grad_avg"]
            ga.add_((1.0 - alpha) * (g - ga))
            avg = (sq - ga * ga).sqrt()
        else:
            avg = sq.sqrt()
        avg = avg + eps
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf.mul_(hp["momentum"])
            buf.add_(g / avg)
            p.sub_(lr * buf)
        else:
            p.sub_(lr * (g / avg))


@overrides.register(RMSprop, "cpu")
def _rmsprop_numpy(opt, xp, p, g, state, group):
    """``RMSprop.update`` in place on the arrays, term for term."""
    lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
    if group["weight_decay"]:
        g = g + group["weight_decay"] * p
    sq = state["square_avg"]._data
    sq *= alpha
    sq += (1.0 - alpha) * g * g
    if group["centered"]:
        ga = state["grad_avg"]._data
        ga += (1.0 - alpha) * (g - ga)
        avg = xp.sqrt(sq - ga * ga)
    else:
        avg = xp.sqrt(sq)
    avg += eps
    if group["momentum"] > 0:
        buf = state["momentum_buffer"]._data
        buf *= group["momentum"]
        buf += g / avg
        p -= lr * buf
    else:
        p -= lr * (g / avg)
