"""CosineSimilarity and PairwiseDistance: similarity and distance modules."""

from __future__ import annotations

from ..._tensor import Tensor
from .._functional import distance as M
from ..module import Module


class CosineSimilarity(Module):
    """``cosine_similarity`` along ``dim`` as a module.

    >>> import ember
    >>> ember.nn.CosineSimilarity(dim=1)(ember.ones(2, 3), ember.ones(2, 3))
    tensor([1., 1.])
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return M.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``pairwise_distance`` as a module.

    >>> import ember
    >>> ember.nn.PairwiseDistance()(ember.zeros(1, 2), ember.tensor([[3.0, 4.0]])).shape
    ember.Size([1])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return M.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


__all__ = ["CosineSimilarity", "PairwiseDistance"]
