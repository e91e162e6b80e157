"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1.0]))
>>> opt = ember.optim.SGD([w], lr=0.1, momentum=0.9)
>>> (w * 2).sum().backward(); opt.step(); w.detach()
tensor([0.8000])
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..backend import overrides
from . import _update_numba
from .optimizer import Optimizer, required


class SGD(Optimizer):
    """PyTorch's SGD: ``buf = momentum * buf + (1 - dampening) * g``;
    ``p -= lr * (g + momentum * buf if nesterov else buf)``; weight decay adds
    ``weight_decay * p`` to ``g`` first."""

    lazy_state = ("momentum_buffer",)

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach=None,
        differentiable: bool = False,
        fused=None,
    ) -> None:
        if lr is not required and lr < 0.0:
            raise ValueError(f"SGD: invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"SGD: invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"SGD: invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum requires a momentum and zero dampening")
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                dampening=dampening,
                weight_decay=weight_decay,
                nesterov=nesterov,
                maximize=maximize,
                foreach=foreach,
                differentiable=differentiable,
                fused=fused,
            ),
        )

    def init_state(self, p, group) -> dict:
        return {"momentum_buffer": None}

    def update(self, p, g, state, group, hp) -> None:
        wd, momentum, lr = hp["weight_decay"], hp["momentum"], hp["lr"]
        if group["weight_decay"]:
            g = g + wd * p
        if group["momentum"]:
            buf = state["momentum_buffer"]
            if buf is None:
                buf = state["momentum_buffer"] = g.to(p.dtype, copy=True)
            else:
                buf.mul_(momentum)
                buf.add_(g * (1.0 - hp["dampening"]) if group["dampening"] else g)
            g = g + momentum * buf if group["nesterov"] else buf
        p.sub_(g * lr)


@overrides.register(SGD, "cpu")
def _sgd_numpy(opt, xp, p, g, state, group):
    """``SGD.update`` in place on the arrays, term for term: one numba pass where it serves
    (``_one_pass``), else NumPy's steps."""
    wd, momentum, lr = group["weight_decay"], group["momentum"], group["lr"]
    if _one_pass(p, g, state, group):
        return None
    if wd:
        g = g + wd * p
    if momentum:
        buf = state["momentum_buffer"]
        if buf is None:
            buf = g.astype(p.dtype)  # a copy, in p's dtype
            state["momentum_buffer"] = Tensor._make(buf)
        else:
            buf = buf._data
            buf *= momentum
            damp = 1.0 - group["dampening"]
            buf += g if damp == 1.0 else damp * g
        g = g + momentum * buf if group["nesterov"] else buf
    xp.subtract(p, (g * lr).astype(p.dtype, copy=False), out=p)


def _one_pass(p, g, state, group) -> bool:
    """The steps of ``_sgd_numpy`` as one numba pass (``_update_numba``; the same results, bit for
    bit) where the arrays (and the momentum buffer) are C-contiguous host arrays of one float32
    / float64 dtype and, with momentum, the buffer exists; False elsewhere."""
    mod = _update_numba.kernels(p.dtype)
    if mod is None:
        return False
    momentum = group["momentum"]
    buf = p
    if momentum:
        b = state["momentum_buffer"]
        if b is None:
            return False  # the first step copies g into the buffer: NumPy's steps
        buf = b._data
    for a in (p, g, buf):
        if type(a) is not np.ndarray or a.dtype != p.dtype or not a.flags.c_contiguous:
            return False
    f = p.dtype.type
    damp = 1.0 - group["dampening"]
    scalars = (f(group["weight_decay"]), f(momentum), f(damp), f(group["lr"]))
    flags = (bool(group["weight_decay"]), bool(momentum), bool(group["nesterov"]), damp != 1.0)
    run = mod.sgd_parallel if p.size >= _update_numba.PARALLEL_MIN else mod.sgd
    run(p.reshape(-1), g.reshape(-1), buf.reshape(-1), *scalars, *flags)
    return True
