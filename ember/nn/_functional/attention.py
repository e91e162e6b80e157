"""scaled_dot_product_attention with PyTorch's formula, masks and dropout."""

from __future__ import annotations

import math

import numpy as np

from ..._errors import ShapeError
from ..._tensor import Tensor
from ...amp.autocast_mode import rule as _autocast_rule
from ...dtypes import bfloat16, bool_, float16
from ...functions.creation import tensor as _new_tensor
from ...functions.dropout import dropout  # noqa: F401  (defined below nn)
from ...ops.attention import Attention as _Attention
from ...ops.base import apply as _apply


@_autocast_rule("scaled_dot_product_attention")
def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(q k^T * scale + mask) v, with a boolean (True = keep) or additive float mask.

    16-bit inputs on a GPU without a mask tensor or dropout take one op
    (``ember.ops.attention.Attention``: cuDNN's flash attention); otherwise the formula in ember
    ops runs.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> q = ember.ones(1, 2, 4)
    >>> F.scaled_dot_product_attention(q, q, q).shape
    ember.Size([1, 2, 4])
    """
    from .activation import softmax

    if query.shape[-1] != key.shape[-1]:
        raise ShapeError(
            f"scaled_dot_product_attention: query {tuple(query.shape)} and key "
            f"{tuple(key.shape)} must have the same last dimension"
        )
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if attn_mask is None and dropout_p == 0.0 and one_op(query, key, value):
        return _apply(_Attention(s, bool(is_causal)), query, key, value)
    # As PyTorch's math kernel: sqrt(scale) on each of q and k, (L, E) values each, rather than
    # scale on the (L, S) scores (on a GPU, the scores are the step's largest arrays)
    r = math.sqrt(abs(s))
    scores = (query * (-r if s < 0 else r)).matmul((key * r).transpose(-2, -1))
    lq, lk = query.shape[-2], key.shape[-2]
    if is_causal:
        causal = _new_tensor(np.tril(np.ones((lq, lk), dtype=bool)), device=query.device)
        scores = scores.masked_fill(~causal, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype is bool_:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    dead = None
    if attn_mask is not None or is_causal:  # a query with every key masked attends to none
        dead = (scores == float("-inf")).all(-1, keepdim=True)
        scores = scores.masked_fill(dead, 0.0)
    weights = softmax(scores, dim=-1)
    if dead is not None:
        weights = weights.masked_fill(dead, 0.0)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    return weights.matmul(value)


def one_op(q: Tensor, k: Tensor, v: Tensor) -> bool:
    """Whether ``ops.attention.Attention`` takes (q, k, v): 16-bit floats on a GPU (cuDNN's
    fused attention), no broadcast leading dimensions, nothing empty. Elsewhere the formula in
    ember ops is faster: the op's backward recomputes the probabilities, as flash attention
    does, which a GPU's fused kernel hides and the CPU pays for (a Transformer step on the
    CPU, 2 layers, sequence 128: 7% slower through the op)."""
    return (
        q.device.type == "cuda"
        and q.ndim >= 2
        and q.ndim == k.ndim == v.ndim
        and q.dtype is k.dtype is v.dtype
        and q.dtype in (float16, bfloat16)
        and tuple(q.shape[:-2]) == tuple(k.shape[:-2]) == tuple(v.shape[:-2])
        and k.shape[-2] == v.shape[-2]
        and 0 not in q.shape
        and 0 not in k.shape
        and 0 not in v.shape
    )


__all__ = ["scaled_dot_product_attention"]
