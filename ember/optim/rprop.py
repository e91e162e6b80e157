"""Rprop (resilient backpropagation), following PyTorch's formulas.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1.0]))
>>> opt = ember.optim.Rprop([w], lr=0.1)
>>> (w * 2).sum().backward(); opt.step(); round(w.item(), 4)
0.9
"""

from __future__ import annotations

from ..backend import overrides
from ..backend.arrays import assign
from ..functions.elementwise import where
from ._checks import check_hyper
from .optimizer import Optimizer, state_like, step_count


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
        defaults = dict(
            lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), foreach=foreach,
            maximize=maximize, differentiable=differentiable, capturable=capturable,
        )  # fmt: skip
        super().__init__(params, defaults)

    def init_state(self, p, group) -> dict:
        return {
            "step": step_count(),
            "prev": state_like(p),
            "step_size": state_like(p, group["lr"]),
        }

    def update(self, p, g, state, group, hp) -> None:
        (minus, plus), (lo, hi) = hp["etas"], hp["step_sizes"]
        trend = (g * state["prev"]).sign()
        factor = where(trend > 0, plus, where(trend < 0, minus, 1.0))
        size = state["step_size"]
        size.copy_((size * factor).maximum(lo).minimum(hi))
        g = where(trend < 0, 0.0, g).to(p.dtype)
        p.sub_(g.sign() * size)
        state["prev"].copy_(g)


@overrides.register(Rprop, "cpu")
def _rprop_numpy(opt, xp, p, g, state, group):
    """``Rprop.update`` in place on the arrays, term for term."""
    (minus, plus), (lo, hi) = group["etas"], group["step_sizes"]
    prev = state["prev"]._data
    trend = xp.sign(g * prev)
    factor = xp.where(trend > 0, plus, xp.where(trend < 0, minus, 1.0))
    size = state["step_size"]._data
    assign(size, xp.clip(size * factor, lo, hi))
    g = xp.where(trend < 0, 0, g).astype(p.dtype, copy=False)
    p -= (xp.sign(g) * size).astype(p.dtype, copy=False)
    assign(prev, g)
