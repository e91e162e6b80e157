"""Scaled dot-product attention as one op, its gradient as one.

``softmax(q k^T * scale) v`` over the last two dimensions, with the upper triangle of the
scores masked where ``causal`` (PyTorch's top-left alignment). Written with ember's ops it is
five ops forward and about ten backward, and the (..., L, S) scores, the step's largest arrays,
go through memory several times each way. On a GPU the CUDA overrides run cuDNN's fused
attention (flash attention: the scores never reach memory; ``ember.backend.kernels.attention``),
so ``F.scaled_dot_product_attention`` without a mask tensor or dropout (``is_causal`` allowed)
and ``nn.MultiheadAttention`` without weights take this op for 16-bit inputs on a GPU
(``nn.functional``'s ``one_op``). Elsewhere they keep the formula in ember ops: this op's
backward recomputes the probabilities, which the CPU pays for.

- ``Attention(scale, causal)``: ``(q, k, v)`` of shapes (..., L, E), (..., S, E), (..., S, Ev)
  with the same leading dimensions -> (..., L, Ev). Its body computes in float32 for 16-bit
  inputs and rounds once, as PyTorch's kernels do.
- ``AttentionGrad(scale, causal)``: ``(g, out, q, k, v)`` -> the gradients of ``q``, ``k`` and
  ``v`` in one array: stacked, (3, *q.shape), where the three shapes agree (self-attention),
  else packed one after another in one flat array (``indexing.cut`` views them). The CUDA
  override lays the stacked gradients out as q, k and v lie in memory, so that the gradients of
  a multi-head attention's projected heads, views of one (L, N, 3E) array, come back as views of
  one array of that layout, which the autograd engine hands on as the projection's gradient
  without a copy (``indexing.GradPieces``). It recomputes
  the probabilities from ``q`` and ``k`` (flash attention's backward does the same), so the
  forward keeps nothing but its output. Never differentiated: with ``create_graph`` the vjp
  writes the same formula in ember ops (``_grads`` runs on arrays and on Tensors alike), which
  differentiate again.

>>> import ember
>>> from ember.ops.base import apply
>>> q = ember.ones(1, 2, 4)
>>> apply(Attention(0.5, False), q, q, q).shape
ember.Size([1, 2, 4])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._config import state
from .._errors import AutogradError, ShapeError
from ..backend.overrides import register
from ..dtypes import widen_half
from .base import Op, Spec, apply
from .elementwise import const_like
from .indexing import basic_index, cut
from .softmax import Softmax

_SOFTMAX = Softmax(-1)


def _stacked(q, k, v) -> bool:
    """Whether ``AttentionGrad`` stacks the three gradients (their shapes agree)."""
    return tuple(q.shape) == tuple(k.shape) == tuple(v.shape)


def _shapes(name: str, q, k, v) -> None:
    """Raise a ShapeError naming ``name`` unless (q, k, v) fit one attention."""
    ok = q.ndim >= 2 and q.ndim == k.ndim == v.ndim
    ok = ok and tuple(q.shape[:-2]) == tuple(k.shape[:-2]) == tuple(v.shape[:-2])
    ok = ok and q.shape[-1] == k.shape[-1] and k.shape[-2] == v.shape[-2]
    if not ok:
        raise ShapeError(
            f"{name}: query {tuple(q.shape)}, key {tuple(k.shape)} and value "
            f"{tuple(v.shape)} do not fit: the same leading dimensions, query and key the "
            "same last dimension, key and value the same length"
        )


class _Params:
    """The fields of both ops; ``scale`` kept a Python float (a NumPy float64 would promote a
    float32 ``q * scale`` to float64, which a captured step's cuBLAS call refuses)."""

    def __post_init__(self):
        object.__setattr__(self, "scale", float(self.scale))
        object.__setattr__(self, "causal", bool(self.causal))


class _Arrays:
    """What ``_probs`` and ``_grads`` need beyond operators, on arrays (the ops' bodies)."""

    def __init__(self, xp) -> None:
        self.xp = xp

    def t(self, x):
        return self.xp.swapaxes(x, -1, -2)

    def mm(self, a, b):
        return self.xp.matmul(a, b)  # not ``@``: a captured step's xp.matmul calls cuBLAS itself

    def softmax(self, s):
        s -= s.max(axis=-1, keepdims=True)
        self.xp.exp(s, out=s)
        s /= s.sum(axis=-1, keepdims=True)
        return s

    def row_sum(self, x):
        return x.sum(axis=-1, keepdims=True)

    def causal(self, s):
        lq, lk = s.shape[-2:]  # made on the device: no host copy, no sync (boolean indexing)
        return self.xp.where(self.xp.tri(lq, lk, dtype=bool), s, s.dtype.type(-np.inf))


class _Tensors:
    """The same on ember Tensors: ops recorded while ``create_graph`` runs the vjp."""

    def t(self, x):
        return x.transpose(-2, -1)

    def mm(self, a, b):
        return a @ b

    def softmax(self, s):
        return apply(_SOFTMAX, s)

    def row_sum(self, x):
        return x.sum(-1, keepdim=True)

    def causal(self, s):
        lq, lk = s.shape[-2:]
        mask = const_like(s, np.triu(np.ones((lq, lk), dtype=bool), 1), bool)
        return s.masked_fill(mask, float("-inf"))


def _probs(kit, q, k, scale: float, causal: bool):
    """softmax(q k^T * scale), upper triangle masked where ``causal``."""
    s = kit.mm(q * scale, kit.t(k))
    return kit.softmax(kit.causal(s) if causal else s)


def _grads(kit, g, out, q, k, v, scale: float, causal: bool) -> tuple:
    """(dq, dk, dv) of ``out = p v`` for its gradient ``g``, with p recomputed."""
    p = _probs(kit, q, k, scale, causal)
    dv = kit.mm(kit.t(p), g)
    ds = p * (kit.mm(g, kit.t(v)) - kit.row_sum(g * out))  # softmax's vjp: p (dp - rowsum(dp p))
    return kit.mm(ds, k) * scale, kit.mm(kit.t(ds), q) * scale, dv


@dataclass(frozen=True)
class Attention(_Params, Op):
    """``softmax(q k^T * scale [+ causal mask]) v`` over the last two dimensions."""

    scale: float = 1.0
    causal: bool = False
    saves_inputs = True
    saves_output = True
    node_name = "ScaledDotProductAttentionBackward0"

    def forward(self, xp, q, k, v):
        qw, kw, vw = map(widen_half, (q, k, v))
        kit = _Arrays(xp)
        return kit.mm(_probs(kit, qw, kw, self.scale, self.causal), vw).astype(q.dtype)

    def infer(self, q, k, v):
        _shapes(self.name, q, k, v)
        return Spec((*q.shape[:-1], v.shape[-1]), q.dtype)

    def vjp(self, g, out, q, k, v):
        if state.grad_enabled:  # create_graph: the formula in ember ops
            return _grads(_Tensors(), g, out, q, k, v, self.scale, self.causal)
        packed = apply(AttentionGrad(self.scale, self.causal), g, out, q, k, v)
        if _stacked(q, k, v):
            return tuple(apply(basic_index((i,)), packed) for i in range(3))
        return cut(packed, [tuple(q.shape), tuple(k.shape), tuple(v.shape)])


@dataclass(frozen=True)
class AttentionGrad(_Params, Op):
    """``Attention``'s gradient: (g, out, q, k, v) -> [dq, dk, dv] stacked where their shapes
    agree, else flat, one after another."""

    scale: float = 1.0
    causal: bool = False

    def forward(self, xp, g, out, q, k, v):
        gw, ow, qw, kw, vw = map(widen_half, (g, out, q, k, v))
        grads = _grads(_Arrays(xp), gw, ow, qw, kw, vw, self.scale, self.causal)
        if _stacked(q, k, v):
            return xp.stack(grads).astype(q.dtype, copy=False)
        return xp.concatenate([a.reshape(-1) for a in grads]).astype(q.dtype, copy=False)

    def infer(self, g, out, q, k, v):
        if _stacked(q, k, v):
            return Spec((3, *q.shape), q.dtype)
        return Spec((math.prod(q.shape) + math.prod(k.shape) + math.prod(v.shape),), q.dtype)

    def vjp(self, h, out, *inputs):
        raise AutogradError(
            "AttentionGrad: runs only without create_graph; with it the vjp of Attention "
            "writes the gradient in ember ops"
        )


@register(Attention, "cuda")
def _attention_cuda(op, xp, q, k, v):
    from ..backend.kernels import attention

    return attention.forward(xp, q, k, v, op.scale, op.causal)


@register(AttentionGrad, "cuda")
def _attention_grad_cuda(op, xp, g, out, q, k, v):
    from ..backend.kernels import attention

    return attention.backward(xp, g, out, q, k, v, op.scale, op.causal)


__all__ = ["Attention", "AttentionGrad"]
