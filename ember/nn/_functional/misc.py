"""linear, bilinear, dropout, embedding, one_hot, scaled_dot_product_attention, cosine_similarity.

>>> import ember
>>> import ember.nn.functional as F
>>> F.linear(ember.ones(2, 3), ember.ones(4, 3), ember.zeros(4)).shape
ember.Size([2, 4])
"""

from __future__ import annotations

import math

import numpy as np

from ... import random as _random
from ..._config import no_grad
from ..._errors import DTypeError, EmberError, EmberIndexError, ShapeError
from ..._tensor import Tensor
from ...dtypes import bool_, int64
from ...functions.creation import tensor as _new_tensor
from ...functions.dropout import dropout  # noqa: F401  (defined below nn)
from ...functions.elementwise import where
from ...functions.linalg import einsum
from ...ops.base import apply
from ...ops.random import DropoutMask


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` over the last dimension.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.linear(ember.ones(1, 2), ember.ones(3, 2))
    tensor([[2., 2., 2.]])
    """
    if input.ndim == 0 or input.shape[-1] != weight.shape[-1]:
        raise ShapeError(
            f"linear: input shape {tuple(input.shape)} and weight shape {tuple(weight.shape)} "
            f"cannot be multiplied ({input.shape[-1] if input.ndim else 'scalar'} != "
            f"{weight.shape[-1]})"
        )
    if weight.dtype is not input.dtype or (bias is not None and bias.dtype is not input.dtype):
        raise DTypeError(
            f"linear: expected input, weight and bias of one dtype, got input {input.dtype}, "
            f"weight {weight.dtype}" + (f", bias {bias.dtype}" if bias is not None else "")
        )
    out = input.matmul(weight.t())
    return out if bias is None else out + bias


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x1^T A x2 + b`` for each output feature.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.bilinear(ember.ones(1, 2), ember.ones(1, 3), ember.ones(4, 2, 3)).tolist()
    [[6.0, 6.0, 6.0, 6.0]]
    """
    out = einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout that keeps SELU's mean and variance (identity unless ``training``).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.alpha_dropout(ember.ones(2), 0.5)
    tensor([1., 1.])
    """
    if not training or p == 0:
        return input
    alpha = -1.7580993408473766
    keep = _new_tensor(_random.rng().random(tuple(input.shape)) >= p, device=input.device)
    a = ((1 - p) * (1 + p * alpha**2)) ** -0.5
    b = -a * alpha * p
    return where(keep, input, alpha) * a + b


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, H, W) input with probability ``p``.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.dropout2d(ember.ones(1, 2, 2, 2), 0.5, training=False).sum()
    tensor(8.)
    """
    if not training or p == 0.0:
        return input
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    return input * apply(DropoutMask(shape, float(p)), input)


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` picked by integer ``input``; the padding row gets no gradient.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.embedding(ember.tensor([[0, 2]]), ember.eye(3)).shape
    ember.Size([1, 2, 3])
    """
    if input.dtype.is_floating_point:
        raise EmberError(
            f"embedding: expected integer indices, got {input.dtype} (convert with .long())"
        )
    n = weight.shape[0]
    if not getattr(input._data, "is_symbol", False) and input.numel():  # data known: check it
        lo, hi = int(input.min()), int(input.max())
        if lo < 0 or hi >= n:
            raise EmberIndexError(
                f"embedding: index {hi if hi >= n else lo} is out of range for an embedding of "
                f"{n} rows (indices shape {tuple(input.shape)}, weight shape "
                f"{tuple(weight.shape)})"
            )
    if max_norm is not None:
        with no_grad():
            rows = input.reshape(-1).unique() if hasattr(input, "unique") else input.reshape(-1)
            picked = weight[rows]
            norms = picked.norm(norm_type, dim=1, keepdim=True)
            scale = where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
            weight[rows] = picked * scale
    out = weight[input]
    if padding_idx is not None:
        pad = (input == (padding_idx % n)).unsqueeze(-1)
        out = where(pad, out.detach(), out)
    return out


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last dimension.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.one_hot(ember.tensor([0, 2]), 3)
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    if tensor.dtype is not int64:
        raise EmberError(f"one_hot: expected an int64 (long) tensor, got {tensor.dtype}")
    arr = tensor.detach().cpu().numpy()
    if num_classes < 0:
        num_classes = int(arr.max()) + 1 if arr.size else 0
    if arr.size and (arr.min() < 0 or arr.max() >= num_classes):
        raise EmberError(
            f"one_hot: class values must be in [0, {num_classes}), got {arr.min()}..{arr.max()}"
        )
    out = (arr[..., None] == np.arange(num_classes)).astype(np.int64)
    return _new_tensor(out, device=tensor.device)


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
    scores = query.matmul(key.transpose(-2, -1)) * s
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


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """<x1, x2> / max(||x1|| ||x2||, eps) along ``dim``.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.cosine_similarity(ember.tensor([[1.0, 0.0]]), ember.tensor([[1.0, 0.0]]))
    tensor([1.])
    """
    dot = (x1 * x2).sum(dim)
    n1 = (x1 * x1).sum(dim)
    n2 = (x2 * x2).sum(dim)
    return dot / (n1 * n2).clamp(min=eps * eps).sqrt()


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """||x1 - x2 + eps||_p along the last dimension.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.pairwise_distance(ember.tensor([[3.0, 0.0]]), ember.tensor([[0.0, 4.0]]), eps=0.0)
    tensor([5.])
    """
    return (x1 - x2 + eps).norm(p, dim=-1, keepdim=keepdim)
