"""Loss primitives: binary cross-entropy for its gradient, the negative log-likelihood of class
indices for its cost (every other loss is a composite).

``BinaryCrossEntropy`` is a primitive for its gradient, not its forward: PyTorch differentiates
``-(t log x + (1 - t) log(1 - x))`` (logs clamped at -100) as ``(x - t) / max(x (1 - x), 1e-12)``,
which stays finite and points the right way where ``x`` is exactly 0 or 1 (a saturated float32
sigmoid). The clamped composite's gradient is 0 there, or has the wrong sign. The vjp is written
in ember ops, so second derivatives still work.

``NllLoss`` picks ``-logp`` at each target's class and reduces, in one op; its gradient is one
op too (``NllLossGrad``: ``-g`` at those classes, zeros elsewhere). As a composite (where,
clamp, gather, reshape, cast, two sums, a division; zeros, scatter and an expand backward) the
loss of a classifier's step took about twenty small ops.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(BinaryCrossEntropy(), ember.tensor([0.5, 1.0]), ember.tensor([1.0, 0.0]))
tensor([  0.6931, 100.0000])
>>> logp = ember.tensor([[-1.0, -2.0], [-3.0, -4.0]])
>>> apply(NllLoss("mean", -100), logp, ember.tensor([1, -100]))
tensor(2.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import dtypes as _dt
from .._errors import EmberError, ShapeError
from ..backend import overrides
from ..backend.arrays import errstate
from ..backend.kernels import nll as _nll_kernels
from . import _nll_numba
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


_REDUCTIONS = ("none", "sum", "mean")


def _targets(xp, target, c: int, ignore):
    """``(indices, valid)``: ``target`` with ignored entries (``valid`` False; None when nothing
    is ignored) and any out of [0, c) (a check reports those: ``CheckRange``) made valid
    indices, along a new class axis 1."""
    valid = None if ignore is None else target != ignore
    safe = target if valid is None else xp.where(valid, target, 0)
    return xp.clip(safe, 0, c - 1)[:, None], valid


def _count(target, valid, dtype):
    """The number of targets not ignored, in ``dtype`` (what 'mean' divides by): a host number
    when none is ignored, else a sum where the targets live (no transfer either way)."""
    return dtype.type(target.size) if valid is None else valid.sum().astype(dtype)


@dataclass(frozen=True)
class NllLoss(Op):
    """``-logp`` at each target's class (0 where the target is ``ignore``; None: no target
    is), reduced by ``reduction``: 'none', 'sum', or 'mean' (over the targets not ignored: NaN
    when all are). Inputs: ``logp`` (N, C, d1, ...) floating, ``target`` (N, d1, ...) int64.
    Targets outside [0, C) are the caller's to report (``CheckRange``); here they are clamped."""

    reduction: str = "mean"
    ignore: int | None = None
    saves_inputs = True

    def forward(self, xp, logp, target):
        index, valid = _targets(xp, target, logp.shape[1], self.ignore)
        loss = -xp.take_along_axis(logp, index, axis=1)[:, 0]
        if valid is not None:
            loss = xp.where(valid, loss, loss.dtype.type(0))
        if self.reduction == "none":
            return loss
        total = _dt.widen_half(loss).sum().astype(loss.dtype)
        if self.reduction == "sum":
            return total
        with errstate(xp, invalid="ignore"):
            return total / _count(target, valid, loss.dtype)

    def infer(self, logp, target):
        if self.reduction not in _REDUCTIONS:
            raise EmberError(f"nll_loss: {self.reduction} is not a valid value for reduction")
        expected = (logp.shape[0],) + tuple(logp.shape[2:]) if len(logp.shape) > 1 else None
        if expected is None or tuple(target.shape) != expected:
            raise ShapeError(
                f"nll_loss: expected a target of shape {list(expected or ())} for log-"
                f"probabilities of shape {list(logp.shape)}, got {list(target.shape)}"
            )
        return Spec(expected if self.reduction == "none" else (), logp.dtype)

    def vjp(self, g, out, logp, target):
        if not logp._requires_grad:
            return None, None
        return apply(NllLossGrad(self.reduction, self.ignore), g, logp, target), None


@dataclass(frozen=True)
class NllLossGrad(Op):
    """``NllLoss``'s gradient with respect to ``logp``: ``-g`` (divided by the count of targets
    not ignored for 'mean') at each target's class, 0 elsewhere. Inputs: ``g``, ``logp`` (only
    its shape and dtype are read), ``target``. Linear in ``g``: its own gradient is ``NllLoss``
    of the incoming one."""

    reduction: str = "mean"
    ignore: int | None = None

    def forward(self, xp, g, logp, target):
        c = logp.shape[1]
        index, valid = _targets(xp, target, c, self.ignore)
        coef = -g.astype(logp.dtype, copy=False)
        if self.reduction == "mean":
            with errstate(xp, divide="ignore", invalid="ignore"):
                coef = coef / _count(target, valid, logp.dtype)
        coef = xp.broadcast_to(coef, target.shape)
        if valid is not None:
            coef = xp.where(valid, coef, coef.dtype.type(0))
        classes = xp.arange(c).reshape((1, c) + (1,) * (target.ndim - 1))
        return xp.where(classes == index, coef[:, None], coef.dtype.type(0))

    def infer(self, g, logp, target):
        return Spec(tuple(logp.shape), logp.dtype)

    def vjp(self, gg, out, g, logp, target):
        if not g._requires_grad:
            return None, None, None
        return apply(NllLoss(self.reduction, self.ignore), gg, target), None, None


@overrides.register(NllLoss, "cpu")
def _nll_loss_cpu(op, xp, logp, target):
    """One numba pass (``ember/ops/_nll_numba.py``); NotImplemented where it does not serve."""
    r = _nll_numba.nll_loss(logp, target, op.reduction, op.ignore)
    return NotImplemented if r is None else r


@overrides.register(NllLossGrad, "cpu")
def _nll_loss_grad_cpu(op, xp, g, logp, target):
    """One numba pass (``ember/ops/_nll_numba.py``); NotImplemented where it does not serve."""
    r = _nll_numba.nll_loss_grad(g, logp, target, op.reduction, op.ignore)
    return NotImplemented if r is None else r


@overrides.register(NllLoss, "cuda")
def _nll_loss_cuda(op, xp, logp, target):
    """One kernel (``ember/backend/kernels/nll.py``); NotImplemented where it does not serve."""
    return _nll_kernels.nll_loss(xp, logp, target, op.reduction, op.ignore)


@overrides.register(NllLossGrad, "cuda")
def _nll_loss_grad_cuda(op, xp, g, logp, target):
    """One kernel (two for 'mean' with an ignored class); NotImplemented where it does not
    serve."""
    return _nll_kernels.nll_loss_grad(xp, g, logp, target, op.reduction, op.ignore)


__all__ = ["BinaryCrossEntropy", "NllLoss", "NllLossGrad"]
