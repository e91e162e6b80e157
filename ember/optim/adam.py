"""Adam and AdamW (decoupled weight decay), with AMSGrad, following PyTorch's formulas.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1.0]))
>>> opt = ember.optim.Adam([w], lr=0.1)
>>> (w * 2).sum().backward(); opt.step(); w.detach()
tensor([0.9000])
"""

from __future__ import annotations

import math

import numpy as np

from ..backend import overrides
from ..backend.scalars import power
from . import _update_numba
from .optimizer import Optimizer, state_like, step_count


class Adam(Optimizer):
    """``m = b1 m + (1-b1) g``; ``v = b2 v + (1-b2) g^2``;
    ``p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)`` (``sqrt(max v)`` with AMSGrad)."""

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach=None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused=None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        name = type(self).__name__
        if not 0.0 <= lr:
            raise ValueError(f"{name}: invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"{name}: invalid epsilon value: {eps}")
        for i, b in enumerate(betas):
            if not 0.0 <= b < 1.0:
                raise ValueError(f"{name}: invalid beta parameter at index {i}: {b}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"{name}: invalid weight_decay value: {weight_decay}")
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=tuple(betas),
                eps=eps,
                weight_decay=weight_decay,
                amsgrad=amsgrad,
                maximize=maximize,
                foreach=foreach,
                capturable=capturable,
                differentiable=differentiable,
                fused=fused,
                decoupled_weight_decay=decoupled_weight_decay,
            ),
        )

    def init_state(self, p, group) -> dict:
        state = {"step": step_count(), "exp_avg": state_like(p), "exp_avg_sq": state_like(p)}
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = state_like(p)
        return state

    def update(self, p, g, state, group, hp) -> None:
        lr, (b1, b2), eps, wd = hp["lr"], hp["betas"], hp["eps"], hp["weight_decay"]
        t = hp["step"]
        if group["weight_decay"]:
            if group["decoupled_weight_decay"]:
                p.mul_(1.0 - lr * wd)
            else:
                g = g + wd * p
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m.mul_(b1).add_(g * (1.0 - b1))
        v.mul_(b2).add_(g * g * (1.0 - b2))
        if group["amsgrad"]:
            v = state["max_exp_avg_sq"].copy_(state["max_exp_avg_sq"].maximum(v))
        denom = v.sqrt() / (1.0 - b2**t).sqrt() + eps
        p.sub_(m / denom * (lr / (1.0 - b1**t)))


@overrides.register(Adam, "cpu")
def _adam_numpy(opt, xp, p, g, state, group):
    """``Adam.update`` in place on the arrays, term for term (no temporaries but one)."""
    lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
    t = float(state["step"]._data)
    if wd:
        if group["decoupled_weight_decay"]:
            p *= 1.0 - lr * wd
        else:
            g = g + wd * p
    m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
    if not group["amsgrad"] and _one_pass(p, g, m, v, b1, b2, eps, lr, t):
        return
    tmp = (g * (1.0 - b1)).astype(p.dtype, copy=False)  # bfloat16 * float is float32
    m *= b1
    m += tmp
    xp.multiply(g, g, out=tmp)
    tmp *= 1.0 - b2
    v *= b2
    v += tmp
    if group["amsgrad"]:
        vmax = state["max_exp_avg_sq"]._data
        xp.maximum(vmax, v, out=vmax)
        v = vmax
    xp.sqrt(v, out=tmp)
    tmp /= math.sqrt(1.0 - power(b2, t))
    tmp += eps
    xp.divide(m, tmp, out=tmp)
    tmp *= lr / (1.0 - power(b1, t))
    p -= tmp


def _one_pass(p, g, m, v, b1, b2, eps, lr, t) -> bool:
    """The steps below as one numba pass (``_update_numba``; the same results, bit for bit) where
    the arrays are C-contiguous host arrays of one float32 / float64 dtype; False elsewhere."""
    mod = _update_numba.kernels(p.dtype)
    if mod is None:
        return False
    for a in (p, g, m, v):
        if type(a) is not np.ndarray or a.dtype != p.dtype or not a.flags.c_contiguous:
            return False
    f = p.dtype.type
    bc1, bc2 = 1.0 - power(b1, t), math.sqrt(1.0 - power(b2, t))
    scalars = (1.0 - b1, b1, 1.0 - b2, b2, bc2, eps, lr / bc1)
    run = mod.adam_parallel if p.size >= _update_numba.PARALLEL_MIN else mod.adam
    run(p.reshape(-1), g.reshape(-1), m.reshape(-1), v.reshape(-1), *map(f, scalars))
    return True


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay`` before the Adam step);
    PyTorch's default ``weight_decay`` here is 0.01."""

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach=None,
        capturable: bool = False,
        differentiable: bool = False,
        fused=None,
    ) -> None:
        super().__init__(
            params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
            capturable=capturable, differentiable=differentiable, fused=fused,
            decoupled_weight_decay=True,
        )  # fmt: skip
