"""Index lookups: embedding (a table row per index) and one_hot."""

from __future__ import annotations

import numpy as np

from ..._config import no_grad
from ..._errors import EmberError, EmberIndexError, ShapeError
from ..._node import named
from ..._tensor import Tensor
from ...dtypes import int64
from ...functions.creation import tensor as _new_tensor
from ...functions.dropout import dropout  # noqa: F401  (defined below nn)
from ...functions.elementwise import where


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
    if weight.ndim != 2:
        raise ShapeError(
            f"embedding: 'weight' must be 2-D (num_embeddings, embedding_dim), got shape "
            f"{tuple(weight.shape)}"
        )
    n = weight.shape[0]
    if padding_idx is not None and not -n <= padding_idx < n:
        raise ShapeError(
            f"embedding: padding_idx must be within num_embeddings ({n}), got {padding_idx}"
        )
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
    return named(out, "EmbeddingBackward0")


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


__all__ = ["embedding", "one_hot"]
