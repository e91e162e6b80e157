"""Margin-based loss modules: MarginRankingLoss, HingeEmbeddingLoss, SoftMarginLoss,
MultiLabelSoftMarginLoss, MultiLabelMarginLoss, MultiMarginLoss, CosineEmbeddingLoss,
TripletMarginLoss and TripletMarginWithDistanceLoss.

>>> import ember
>>> ember.nn.SoftMarginLoss()(ember.zeros(2), ember.ones(2))
tensor(0.6931)
"""

from __future__ import annotations

from ..._tensor import Tensor
from .._functional import loss_margin as L
from .loss import _Loss, _WeightedLoss


class _MarginLoss(_Loss):
    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    """``margin_ranking_loss`` as a module.

    >>> import ember
    >>> ember.nn.MarginRankingLoss()(ember.ones(1), ember.zeros(1), -ember.ones(1))
    tensor(1.)
    """

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return L.margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """``hinge_embedding_loss`` as a module (margin 1 by default).

    >>> import ember
    >>> ember.nn.HingeEmbeddingLoss()(ember.tensor([0.3, 2.0]), ember.tensor([1, -1]))
    tensor(0.1500)
    """

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:  # fmt: skip
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """``cosine_embedding_loss`` as a module.

    >>> import ember
    >>> x = ember.tensor([[1.0, 0.0]])
    >>> ember.nn.CosineEmbeddingLoss()(x, x, ember.tensor([1]))
    tensor(0.)
    """

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return L.cosine_embedding_loss(
            input1, input2, target, self.margin, reduction=self.reduction
        )


class SoftMarginLoss(_Loss):
    """``soft_margin_loss`` as a module.

    >>> import ember
    >>> ember.nn.SoftMarginLoss(reduction="sum")(ember.zeros(2), ember.ones(2))
    tensor(1.3863)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """``multilabel_soft_margin_loss`` as a module.

    >>> import ember
    >>> ember.nn.MultiLabelSoftMarginLoss()(ember.zeros(1, 2), ember.ones(1, 2))
    tensor(0.6931)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.multilabel_soft_margin_loss(input, target, self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """``multilabel_margin_loss`` as a module.

    >>> import ember
    >>> x = ember.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> ember.nn.MultiLabelMarginLoss()(x, ember.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """``multi_margin_loss`` as a module.

    >>> import ember
    >>> ember.nn.MultiMarginLoss()(ember.tensor([[0.1, 0.2, 0.4, 0.8]]), ember.tensor([3]))
    tensor(0.3250)
    """

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 size_average=None, reduce=None, reduction: str = "mean") -> None:  # fmt: skip
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 supported, got {p}")
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return L.multi_margin_loss(
            input, target, self.p, self.margin, self.weight, reduction=self.reduction
        )


class TripletMarginLoss(_Loss):
    """``triplet_margin_loss`` as a module.

    >>> import ember
    >>> a = ember.zeros(1, 2)
    >>> ember.nn.TripletMarginLoss()(a, a, a + 0.5)
    tensor(0.2929)
    """

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average=None, reduce=None, reduction: str = "mean") -> None:  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return L.triplet_margin_loss(
            anchor, positive, negative, self.margin, self.p, self.eps, self.swap,
            reduction=self.reduction,
        )  # fmt: skip


class TripletMarginWithDistanceLoss(_Loss):
    """``triplet_margin_with_distance_loss`` as a module.

    >>> import ember
    >>> a = ember.zeros(1, 2)
    >>> ember.nn.TripletMarginWithDistanceLoss(margin=0.5)(a, a, a + 3)
    tensor(0.)
    """

    def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean") -> None:  # fmt: skip
        super().__init__(reduction=reduction)
        self.distance_function, self.margin, self.swap = distance_function, margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return L.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction,
        )  # fmt: skip


__all__ = [
    "MarginRankingLoss",
    "HingeEmbeddingLoss",
    "CosineEmbeddingLoss",
    "SoftMarginLoss",
    "MultiLabelSoftMarginLoss",
    "MultiLabelMarginLoss",
    "MultiMarginLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
]
