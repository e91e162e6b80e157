"""MultiheadAttention and its functional form ``multi_head_attention_forward`` (PyTorch's).

Masks follow PyTorch's MultiheadAttention convention: in a boolean ``attn_mask`` or
``key_padding_mask``, True marks a position that may NOT be attended to; a float mask is
added to the attention scores.

>>> import ember
>>> mha = ember.nn.MultiheadAttention(8, 2, batch_first=True)
>>> x = ember.randn(3, 5, 8)
>>> out, weights = mha(x, x, x)
>>> out.shape, weights.shape
(ember.Size([3, 5, 8]), ember.Size([3, 5, 5]))
>>> [name for name in mha.state_dict()]
['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..._errors import DTypeError, ShapeError
from ..._tensor import Tensor
from ...dtypes import bool_
from ...functions.creation import tensor
from ...functions.creation import zeros as _zeros
from ...functions.shape import cat
from ...ops.attention import Attention
from ...ops.base import apply
from .. import init
from .._functional.attention import one_op
from .._functional.dropout import dropout as _dropout
from .._functional.linear import linear
from ..module import Module
from ..parameter import Parameter
from .linear import Linear

__all__ = ["MultiheadAttention"]  # multi_head_attention_forward belongs in nn.functional

_NAME = "MultiheadAttention"


def _canonical_mask(mask: Tensor | None, mask_name: str, dtype) -> Tensor | None:
    """A float additive mask: booleans become 0 / -inf (True = masked out)."""
    if mask is None:
        return None
    if mask.dtype is bool_:
        return _zeros(tuple(mask.shape), dtype=dtype, device=mask.device).masked_fill(
            mask, float("-inf")
        )
    if not mask.dtype.is_floating_point:
        raise DTypeError(
            f"{_NAME}: only bool and floating types of {mask_name} are supported, got {mask.dtype}"
        )
    return mask


def _pad_last(mask: Tensor) -> Tensor:
    """Append one zero (= attend) column to a float mask."""
    zeros = _zeros(tuple(mask.shape[:-1]) + (1,), dtype=mask.dtype, device=mask.device)
    return cat([mask, zeros], -1)


def _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise ShapeError(
                f"{_NAME}: For batched (3-D) `query`, expected `key` and `value` to "
                f"be 3-D but found {key.ndim}-D and {value.ndim}-D tensors "
                "respectively"
            )
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise ShapeError(
                f"{_NAME}: For batched (3-D) `query`, expected `key_padding_mask` "
                f"to be `None` or 2-D but found {key_padding_mask.ndim}-D tensor "
                "instead"
            )
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise ShapeError(
                f"{_NAME}: For batched (3-D) `query`, expected `attn_mask` to be "
                f"`None`, 2-D or 3-D but found {attn_mask.ndim}-D tensor instead"
            )
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise ShapeError(
                f"{_NAME}: For unbatched (2-D) `query`, expected `key` and `value` "
                f"to be 2-D but found {key.ndim}-D and {value.ndim}-D tensors "
                "respectively"
            )
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise ShapeError(
                f"{_NAME}: For unbatched (2-D) `query`, expected `key_padding_mask` "
                f"to be `None` or 1-D but found {key_padding_mask.ndim}-D tensor "
                "instead"
            )
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise ShapeError(
                    f"{_NAME}: For unbatched (2-D) `query`, expected `attn_mask` to "
                    f"be `None`, 2-D or 3-D but found {attn_mask.ndim}-D tensor "
                    "instead"
                )
            if attn_mask.ndim == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise ShapeError(
                        f"{_NAME}: Expected `attn_mask` shape to be {expected} but "
                        f"got {tuple(attn_mask.shape)}"
                    )
        return False
    raise ShapeError(
        f"{_NAME}: query should be unbatched 2D or batched 3D tensor but received "
        f"{query.ndim}-D query tensor (shape {tuple(query.shape)})"
    )


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention on sequence-first inputs (L, N, E) (or unbatched (L, E)), as
    PyTorch's ``F.multi_head_attention_forward``; returns ``(output, weights or None)``.

    >>> import ember
    >>> E, H = 4, 2
    >>> q = ember.randn(3, 1, E)
    >>> w, b = ember.randn(3 * E, E), ember.zeros(3 * E)
    >>> out, att = multi_head_attention_forward(q, q, q, E, H, w, b, None, None, False, 0.0,
    ...                                         ember.eye(E), None)
    >>> out.shape, att.shape
    (ember.Size([3, 1, 4]), ember.Size([1, 3, 3]))
    """
    is_batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if (
        key_padding_mask is not None
        and attn_mask is not None
        and key_padding_mask.dtype != attn_mask.dtype
    ):
        warnings.warn(
            "Support for mismatched key_padding_mask and attn_mask is deprecated. "
            "Use same type for both instead.",
            stacklevel=3,
        )
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise ShapeError(
            f"{_NAME}: Need attn_mask if specifying the is_causal hint. You may use "
            "the Transformer module method `generate_square_subsequent_mask` to "
            "create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # as PyTorch: the mask is dropped and the attention masks causally
    else:
        is_causal = False
    attn_mask = _canonical_mask(attn_mask, "attn_mask", query.dtype)
    if embed_dim != embed_dim_to_check:
        raise ShapeError(
            f"{_NAME}: was expecting embedding dimension of {embed_dim_to_check}, "
            f"but got {embed_dim} (query shape {tuple(query.shape)})"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise ShapeError(f"{_NAME}: embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if key.shape[1] != bsz:
        raise ShapeError(
            f"{_NAME}: key batch size {key.shape[1]} does not match query batch "
            f"size {bsz} (query {tuple(query.shape)}, key {tuple(key.shape)})"
        )
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise ShapeError(
                f"{_NAME}: key's sequence and batch dims {tuple(key.shape[:2])} do "
                f"not match value's {tuple(value.shape[:2])}"
            )
    elif tuple(key.shape) != tuple(value.shape):
        raise ShapeError(
            f"{_NAME}: key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}"
        )

    # -- input projections -------------------------------------------------------------------
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise ShapeError(
                f"{_NAME}: use_separate_proj_weight is False but in_proj_weight is None"
            )
        if key.shape[-1] != embed_dim:
            raise ShapeError(
                f"{_NAME}: key has {key.shape[-1]} features but the packed in_proj "
                f"weight expects embed_dim={embed_dim} (key shape "
                f"{tuple(key.shape)}; pass kdim/vdim for other sizes)"
            )
        b = in_proj_bias
        if key is value and query is key:  # self-attention: one product
            q, k, v = linear(query, in_proj_weight, b).split(embed_dim, -1)
        elif key is value:  # encoder-decoder attention: query, then key and value together
            w_q, w_kv = in_proj_weight.split([embed_dim, 2 * embed_dim])
            b_q, b_kv = b.split([embed_dim, 2 * embed_dim]) if b is not None else (None, None)
            q = linear(query, w_q, b_q)
            k, v = linear(key, w_kv, b_kv).split(embed_dim, -1)
        else:
            w_q, w_k, w_v = in_proj_weight.split(embed_dim)
            b_q, b_k, b_v = b.split(embed_dim) if b is not None else (None, None, None)
            q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)
    else:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise ShapeError(
                f"{_NAME}: use_separate_proj_weight is True but q_proj_weight, "
                "k_proj_weight or v_proj_weight is None"
            )
        for t, w, what in (
            (query, q_proj_weight, "query"),
            (key, k_proj_weight, "key"),
            (value, v_proj_weight, "value"),
        ):
            if t.shape[-1] != w.shape[1]:
                raise ShapeError(
                    f"{_NAME}: {what} has {t.shape[-1]} features, expected "
                    f"{w.shape[1]} ({what} shape {tuple(t.shape)})"
                )
        b_q, b_k, b_v = (
            in_proj_bias.split(embed_dim) if in_proj_bias is not None else (None, None, None)
        )
        q = linear(query, q_proj_weight, b_q)
        k = linear(key, k_proj_weight, b_k)
        v = linear(value, v_proj_weight, b_v)

    # -- masks -------------------------------------------------------------------------------
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise ShapeError(
                    f"{_NAME}: The shape of the 2D attn_mask is "
                    f"{tuple(attn_mask.shape)}, but should be {(tgt_len, src_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        else:
            want = (bsz * num_heads, tgt_len, src_len)
            if tuple(attn_mask.shape) != want:
                raise ShapeError(
                    f"{_NAME}: The shape of the 3D attn_mask is "
                    f"{tuple(attn_mask.shape)}, but should be {want}."
                )
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise ShapeError(f"{_NAME}: bias cannot be added to static key or value.")
        k = cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = cat([v, bias_v.expand(1, bsz, embed_dim)])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise ShapeError(f"{_NAME}: bias_k and bias_v must both be set or both be None")

    # -- heads: (L, N, E) -> (N, H, L, head_dim), views of the rows ----------------------------
    q = q.reshape(tgt_len, bsz, num_heads, head_dim).permute(1, 2, 0, 3)
    if static_k is None:
        k = k.reshape(k.shape[0], bsz, num_heads, head_dim).permute(1, 2, 0, 3)
    else:
        if tuple(static_k.shape[::2]) != (bsz * num_heads, head_dim):
            raise ShapeError(
                f"{_NAME}: expecting static_k of shape ({bsz * num_heads}, S, "
                f"{head_dim}), but got {tuple(static_k.shape)}"
            )
        k = static_k.reshape(bsz, num_heads, -1, head_dim)
    if static_v is None:
        v = v.reshape(v.shape[0], bsz, num_heads, head_dim).permute(1, 2, 0, 3)
    else:
        if tuple(static_v.shape[::2]) != (bsz * num_heads, head_dim):
            raise ShapeError(
                f"{_NAME}: expecting static_v of shape ({bsz * num_heads}, S, "
                f"{head_dim}), but got {tuple(static_v.shape)}"
            )
        v = static_v.reshape(bsz, num_heads, -1, head_dim)
    if add_zero_attn:
        zeros = _zeros(bsz, num_heads, 1, head_dim, dtype=k.dtype, device=k.device)
        k = cat([k, zeros], 2)
        v = cat([v, zeros.to(v.dtype)], 2)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.shape[2]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise ShapeError(
                f"{_NAME}: expecting key_padding_mask shape of {(bsz, src_len)}, "
                f"but got {tuple(key_padding_mask.shape)}"
            )
        kpm = (
            key_padding_mask.reshape(bsz, 1, 1, src_len)
            .expand(bsz, num_heads, 1, src_len)
            .reshape(bsz * num_heads, 1, src_len)
        )
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0

    # -- attention ---------------------------------------------------------------------------
    if attn_mask is None and dropout_p == 0.0 and not need_weights and one_op(q, k, v):
        scale = 1.0 / math.sqrt(head_dim)  # one op: cuDNN's flash attention
        out = apply(Attention(scale, is_causal), q, k, v)  # (N, H, L, head_dim)
        return _out_proj(out, out_proj_weight, out_proj_bias, is_batched), None
    from .._functional.activation import softmax

    q = q.reshape(bsz * num_heads, tgt_len, head_dim)
    k = k.reshape(bsz * num_heads, src_len, head_dim)
    v = v.reshape(bsz * num_heads, src_len, head_dim)
    if is_causal:
        causal = np.triu(np.ones((tgt_len, src_len), dtype=bool), 1)
        attn_mask = _canonical_mask(tensor(causal, device=query.device), "attn_mask", q.dtype)
    scores = (q * math.sqrt(1.0 / float(head_dim))).matmul(k.transpose(-2, -1))
    dead = None
    if attn_mask is not None:
        scores = scores + attn_mask
        if not need_weights:  # PyTorch's fast path: a query with every key masked attends to none
            dead = (scores == float("-inf")).all(-1, keepdim=True)
            scores = scores.masked_fill(dead, 0.0)
    weights = softmax(scores, dim=-1)
    if dead is not None:
        weights = weights.masked_fill(dead, 0.0)
    if dropout_p > 0.0:
        weights = _dropout(weights, dropout_p)
    out = weights.matmul(v).reshape(bsz, num_heads, tgt_len, head_dim)
    out = _out_proj(out, out_proj_weight, out_proj_bias, is_batched)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if not is_batched:
        weights = weights.squeeze(0)
    return out, weights


def _out_proj(out: Tensor, weight: Tensor, bias: Tensor | None, is_batched: bool) -> Tensor:
    """Heads (N, H, L, head_dim) merged back into (L, N, E) rows, then the output projection."""
    bsz, num_heads, tgt_len, head_dim = out.shape
    out = out.permute(2, 0, 1, 3).reshape(tgt_len * bsz, num_heads * head_dim)
    out = linear(out, weight, bias).reshape(tgt_len, bsz, -1)
    return out if is_batched else out.squeeze(1)


class MultiheadAttention(Module):
    r"""Attention over ``num_heads`` subspaces of ``embed_dim``:
    ``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O`` with
    ``head_i = softmax(Q W_i^Q (K W_i^K)^T / sqrt(d) + mask) V W_i^V``.

    ``MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
    add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None, dtype=None)``.

    ``forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False)`` returns ``(attn_output, attn_weights)``;
    weights are ``None`` unless ``need_weights``, averaged over heads (N, L, S) unless
    ``average_attn_weights=False`` (N, H, L, S). Parameters are PyTorch's: ``in_proj_weight``
    (3E, E) and ``in_proj_bias``, or ``q_proj_weight`` / ``k_proj_weight`` / ``v_proj_weight``
    when ``kdim`` or ``vdim`` differ from ``embed_dim``; ``out_proj`` a Linear.

    >>> import ember
    >>> mha = ember.nn.MultiheadAttention(4, 2, kdim=3, vdim=5)
    >>> q, k, v = ember.randn(2, 1, 4), ember.randn(6, 1, 3), ember.randn(6, 1, 5)
    >>> out, w = mha(q, k, v, average_attn_weights=False)
    >>> out.shape, w.shape
    (ember.Size([2, 1, 4]), ember.Size([1, 2, 2, 6]))
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"{_NAME}: embed_dim and num_heads must be greater than 0, got "
                f"embed_dim={embed_dim} and num_heads={num_heads} instead"
            )
        super().__init__()
        from ...functions.creation import empty

        def new(*shape):
            return Parameter(empty(*shape, device=device, dtype=dtype))

        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise ValueError(
                f"{_NAME}: embed_dim must be divisible by num_heads (got "
                f"embed_dim={embed_dim}, num_heads={num_heads})"
            )
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = new(embed_dim, embed_dim)
            self.k_proj_weight = new(embed_dim, self.kdim)
            self.v_proj_weight = new(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = new(3 * embed_dim, embed_dim)
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = new(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        # PyTorch's NonDynamicallyQuantizableLinear is a plain Linear for this purpose
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k = new(1, 1, embed_dim)
            self.bias_v = new(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        for t, what in ((query, "query"), (key, "key"), (value, "value")):
            if not isinstance(t, Tensor):
                raise TypeError(f"{_NAME}: expected {what} to be a Tensor, got {type(t).__name__}")
        is_batched = query.ndim == 3
        if self.batch_first and is_batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        if query.ndim >= 1 and query.shape[-1] != self.embed_dim:
            raise ShapeError(
                f"{_NAME}: query.size(-1) must be equal to embed_dim. Expected "
                f"{self.embed_dim}, got {query.shape[-1]} (query shape "
                f"{tuple(query.shape)})"
            )
        separate = {}
        if not self._qkv_same_embed_dim:
            separate = dict(
                use_separate_proj_weight=True,
                q_proj_weight=self.q_proj_weight,
                k_proj_weight=self.k_proj_weight,
                v_proj_weight=self.v_proj_weight,
            )
        out, weights = multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
            **separate,
        )
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        return out, weights
