"""Loss primitives: only binary cross-entropy needs one (every other loss is a composite).

``BinaryCrossEntropy`` is a primitive for its gradient, not its forward: PyTorch differentiates
``-(t log x + (1 - t) log(1 - x))`` (logs clamped at -100) as ``(x - t) / max(x (1 - x), 1e-12)``,
which stays finite and points the right way where ``x`` is exactly 0 or 1 (a saturated float32
sigmoid). The clamped composite's gradient is 0 there, or has the wrong sign. The vjp is written
in ember ops, so second derivatives still work.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(BinaryCrossEntropy(), ember.tensor([0.5, 1.0]), ember.tensor([1.0, 0.0]))
tensor([  0.6931, 100.0000])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._errors import EmberError, ShapeError
from ..backend.arrays import errstate
from .base import Op, Spec, apply
from .elementwise import SUB, Clamp, Log, Log1p, const_like, div, mul, neg, sub

# PyTorch's EPSILON is the float 1e-12 (9.99999996e-13), for float64 too
_LOG, _LOG1P, _EPS_CLAMP = Log(), Log1p(), Clamp(float(np.float32(1e-12)), None)


@dataclass(frozen=True)
class BinaryCrossEntropy(Op):
    """Elementwise ``-(t max(log x, -100) + (1 - t) max(log(1 - x), -100))``. Inputs: x, t
    (same shape and floating dtype); both must lie in [0, 1]."""

    saves_inputs = True

    def forward(self, xp, x, t):
        if x.size:
            if not bool(((x >= 0) & (x <= 1)).all()):
                raise EmberError(
                    "binary_cross_entropy: all elements of input should be between 0 and 1 "
                    f"(input of shape {list(x.shape)})"
                )
            if not bool(((t >= 0) & (t <= 1)).all()):
                raise EmberError(
                    "binary_cross_entropy: all elements of target should be between 0 and 1 "
                    f"(target of shape {list(t.shape)})"
                )
        with errstate(xp, divide="ignore", invalid="ignore"):
            lo = xp.maximum(xp.log(x), x.dtype.type(-100))
            l1 = xp.maximum(xp.log1p(-x), x.dtype.type(-100))
        return (t - 1) * l1 - t * lo

    def infer(self, x, t):
        if tuple(x.shape) != tuple(t.shape):
            raise ShapeError(
                f"binary_cross_entropy: target size {list(t.shape)} differs from input size "
                f"{list(x.shape)}"
            )
        return Spec(tuple(x.shape), x.dtype)

    def vjp(self, g, out, x, t):
        gx = gt = None
        if x._requires_grad:  # (x - t) / max(x (1 - x), 1e-12)
            one_minus = apply(SUB, const_like(x, 1), x)
            gx = mul(g, div(sub(x, t), apply(_EPS_CLAMP, mul(x, one_minus))))
        if t._requires_grad:  # -logit(x) = log(1 - x) - log(x), unclamped as in PyTorch
            gt = mul(g, sub(apply(_LOG1P, neg(x)), apply(_LOG, x)))
        return gx, gt


__all__ = ["BinaryCrossEntropy"]
