"""Transformer layers (PyTorch's): TransformerEncoderLayer, TransformerEncoder,
TransformerDecoderLayer, TransformerDecoder and the whole encoder-decoder Transformer.

Built from :class:`MultiheadAttention`, Linear, Dropout and LayerNorm with PyTorch's attribute
names, so state dicts load both ways (``layers.0.self_attn.in_proj_weight``,
``layers.0.linear1.weight``, ``layers.0.norm1.weight``, ...). Masks follow
MultiheadAttention: in a boolean mask True marks a position that may NOT be attended to; a float
mask is added to the attention scores. PyTorch's inference fast path (nested tensors) is not
modelled: ``enable_nested_tensor`` is accepted and ignored, results are those of its regular
path.

>>> import ember
>>> layer = ember.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
>>> encoder = ember.nn.TransformerEncoder(layer, num_layers=2)
>>> encoder(ember.randn(5, 3, 8)).shape
ember.Size([5, 3, 8])
>>> list(encoder.state_dict())[:3]
['layers.0.self_attn.in_proj_weight', 'layers.0.self_attn.in_proj_bias', \
'layers.0.self_attn.out_proj.weight']
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._errors import DTypeError, EmberError, ShapeError
from ..._tensor import Tensor
from ...dtypes import bool_, get_default_dtype
from ...functions.creation import tensor
from .. import init
from .._functional.activation import gelu, relu
from ..containers import ModuleList
from ..module import Module
from .activation import GELU, ReLU
from .attention import MultiheadAttention, _canonical_mask
from .dropout import Dropout
from .linear import Linear
from .normalization import LayerNorm

__all__ = [
    "Transformer",
    "TransformerEncoder",
    "TransformerDecoder",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
]

Activation = str | Callable[[Tensor], Tensor]


def _square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    """(sz, sz) causal mask: ``-inf`` above the diagonal (True for a bool dtype), 0 elsewhere."""
    above = np.triu(np.ones((sz, sz), dtype=bool), 1)
    if dtype is bool_:
        return tensor(above, device=device)
    mask = np.where(above, -np.inf, 0.0)
    return tensor(mask, dtype=dtype or get_default_dtype(), device=device)


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return relu
    if activation == "gelu":
        return gelu
    raise EmberError(f"activation should be relu/gelu, not {activation}")


def _seq_len(src: Tensor, batch_first: bool) -> int:
    if src.ndim == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None, size: int | None) -> bool:
    """PyTorch's rule: an explicit ``is_causal`` wins; with None, a mask equal to the causal
    mask of ``size`` counts as causal."""
    if is_causal is not None or mask is None:
        return is_causal is True
    sz = size if size is not None else mask.shape[-2]
    if tuple(mask.shape) != (sz, sz):
        return False
    causal = _square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
    return bool((mask == causal).all().item())


def _float_masks(owner: str, src: Tensor, mask, mask_name: str, padding_mask) -> tuple:
    """Boolean masks as additive float ones of ``src``'s dtype (True -> -inf), as PyTorch's
    encoder does before its layers; warns, as PyTorch, when the two masks' types differ."""
    if padding_mask is not None and mask is not None and padding_mask.dtype != mask.dtype:
        warnings.warn(
            f"Support for mismatched src_key_padding_mask and {mask_name} is deprecated. "
            "Use same type for both instead.",
            stacklevel=3,
        )
    try:
        padding_mask = _canonical_mask(padding_mask, "src_key_padding_mask", src.dtype)
        mask = _canonical_mask(mask, mask_name, src.dtype)
    except DTypeError as e:
        raise DTypeError(f"{owner}: {str(e).partition(': ')[2]}") from None
    return mask, padding_mask


def _check_d_model(x: Tensor, d_model: int, what: str, name: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected {what} to be a Tensor, got {type(x).__name__}")
    if x.ndim not in (2, 3) or x.shape[-1] != d_model:
        raise ShapeError(
            f"{name}: expected {what} of shape (S, N, {d_model}), (N, S, {d_model}) or "
            f"(S, {d_model}) (last dimension d_model={d_model}), got {tuple(x.shape)}"
        )


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward block, each with dropout, a residual connection and
    LayerNorm (after the residual, or before each block with ``norm_first=True``).

    ``TransformerEncoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1,
    activation='relu', layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
    device=None, dtype=None)``; ``activation`` is ``'relu'``, ``'gelu'`` or a callable.
    ``forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)``.

    >>> import ember
    >>> layer = ember.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, norm_first=True)
    >>> layer(ember.randn(3, 5, 8)).shape
    ember.Size([3, 5, 8])
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        factory = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **factory
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        _check_d_model(src, self.self_attn.embed_dim, "src", type(self).__name__)
        src_mask, src_key_padding_mask = _float_masks(
            type(self).__name__, src, src_mask, "src_mask", src_key_padding_mask
        )
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal: bool = False) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder output ``memory`` and a feed-forward block,
    each with dropout, a residual connection and LayerNorm (``norm_first`` as in the encoder).

    Same constructor as :class:`TransformerEncoderLayer`. ``forward(tgt, memory,
    tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
    tgt_is_causal=False, memory_is_causal=False)``.

    >>> import ember
    >>> layer = ember.nn.TransformerDecoderLayer(8, 2, 16, activation="gelu")
    >>> layer(ember.randn(4, 2, 8), ember.randn(6, 2, 8)).shape
    ember.Size([4, 2, 8])
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        factory = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **factory
        )
        self.multihead_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **factory
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation = activation

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        name, d_model = type(self).__name__, self.self_attn.embed_dim
        _check_d_model(tgt, d_model, "tgt", name)
        _check_d_model(memory, d_model, "memory", name)
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(
                x
                + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            )
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal: bool = False) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal: bool = False) -> Tensor:
        x = self.multihead_attn(
            x,
            mem,
            mem,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


class TransformerEncoder(Module):
    """``num_layers`` independent copies of ``encoder_layer`` applied in turn, then ``norm``.

    ``TransformerEncoder(encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
    mask_check=True)``; ``forward(src, mask=None, src_key_padding_mask=None,
    is_causal=None)``. ``enable_nested_tensor`` and ``mask_check`` are accepted and ignored
    (ember has no nested tensors).

    >>> import ember
    >>> layer = ember.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    >>> enc = ember.nn.TransformerEncoder(layer, 2, norm=ember.nn.LayerNorm(8))
    >>> pad = ember.tensor([[False, False, True], [False, False, False]])
    >>> enc(ember.randn(2, 3, 8), src_key_padding_mask=pad).shape
    ember.Size([2, 3, 8])
    """

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = False
        self.mask_check = mask_check

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        mask, src_key_padding_mask = _float_masks(
            type(self).__name__, src, mask, "mask", src_key_padding_mask
        )
        output = src
        first = self.layers[0]
        batch_first = getattr(getattr(first, "self_attn", None), "batch_first", False)
        is_causal = _detect_is_causal_mask(mask, is_causal, _seq_len(src, batch_first))
        for mod in self.layers:
            output = mod(
                output,
                src_mask=mask,
                is_causal=is_causal,
                src_key_padding_mask=src_key_padding_mask,
            )
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """``num_layers`` independent copies of ``decoder_layer`` applied in turn, then ``norm``.

    ``TransformerDecoder(decoder_layer, num_layers, norm=None)``; ``forward(tgt, memory,
    tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
    tgt_is_causal=None, memory_is_causal=False)``.

    >>> import ember
    >>> layer = ember.nn.TransformerDecoderLayer(8, 2, 16)
    >>> dec = ember.nn.TransformerDecoder(layer, 2)
    >>> causal = ember.nn.Transformer.generate_square_subsequent_mask(4)
    >>> dec(ember.randn(4, 2, 8), ember.randn(6, 2, 8), tgt_mask=causal).shape
    ember.Size([4, 2, 8])
    """

    def __init__(
        self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None
    ) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        output = tgt
        first = self.layers[0]
        batch_first = getattr(getattr(first, "self_attn", None), "batch_first", False)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, _seq_len(tgt, batch_first))
        for mod in self.layers:
            output = mod(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=tgt_is_causal,
                memory_is_causal=memory_is_causal,
            )
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """The encoder-decoder Transformer of "Attention Is All You Need" (PyTorch's layout).

    ``Transformer(d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
    dim_feedforward=2048, dropout=0.1, activation='relu', custom_encoder=None,
    custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
    device=None, dtype=None)``; ``forward(src, tgt, src_mask=None, tgt_mask=None,
    memory_mask=None, src_key_padding_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
    memory_is_causal=False)``. Every parameter with more than one dimension starts
    Xavier-uniform.

    >>> import ember
    >>> model = ember.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
    ...                              num_decoder_layers=1, dim_feedforward=16)
    >>> src, tgt = ember.randn(6, 2, 8), ember.randn(4, 2, 8)
    >>> model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(4)).shape
    ember.Size([4, 2, 8])
    """

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = relu,
        custom_encoder: Any | None = None,
        custom_decoder: Any | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        factory = dict(device=device, dtype=dtype)
        layer_args = (
            d_model,
            nhead,
            dim_feedforward,
            dropout,
            activation,
            layer_norm_eps,
            batch_first,
            norm_first,
            bias,
        )
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(*layer_args, **factory)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(*layer_args, **factory)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        _check_d_model(src, self.d_model, "src", "Transformer")
        _check_d_model(tgt, self.d_model, "tgt", "Transformer")
        if src.ndim == 3:
            batch_dim = 0 if self.batch_first else 1
            if tgt.ndim != 3 or src.shape[batch_dim] != tgt.shape[batch_dim]:
                raise ShapeError(
                    "Transformer: the batch number of src and tgt must be equal (src "
                    f"{tuple(src.shape)}, tgt {tuple(tgt.shape)}, batch_first={self.batch_first})"
                )
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """A float (sz, sz) causal mask: ``-inf`` above the diagonal, ``0.`` elsewhere.

        >>> import ember
        >>> ember.nn.Transformer.generate_square_subsequent_mask(3)
        tensor([[0., -inf, -inf],
                [0., 0., -inf],
                [0., 0., 0.]])
        """
        return _square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
