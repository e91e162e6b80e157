"""Distances and similarities between vectors: cosine_similarity, pairwise_distance, pdist."""

from __future__ import annotations

from ..._errors import ShapeError
from ..._node import named
from ..._tensor import Tensor
from ...amp.autocast_mode import rule as _autocast_rule
from ...functions.dropout import dropout  # noqa: F401  (defined below nn)


@_autocast_rule("pdist")
def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The ``p``-norm distances between every pair of rows (i < j) of an (N, M) input.

    >>> import ember
    >>> ember.nn.functional.pdist(ember.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
    tensor([5.0000, 1.0000, 4.2426])
    """
    from ...functions.structure import _pnorm, triu_indices

    if input.ndim != 2:
        raise ShapeError(f"pdist: only supports 2D tensors, got shape {tuple(input.shape)}")
    i, j = triu_indices(input.shape[0], input.shape[0], 1, device=input.device)
    return _pnorm(input.index_select(0, i) - input.index_select(0, j), p, 1)


@_autocast_rule("cosine_similarity")
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
    return named(dot / (n1 * n2).clamp(min=eps * eps).sqrt(), "SumBackward1")  # PyTorch's last op


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


__all__ = ["pdist", "cosine_similarity", "pairwise_distance"]
