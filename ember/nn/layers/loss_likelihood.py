"""Likelihood loss modules: PoissonNLLLoss, GaussianNLLLoss and CTCLoss."""

from __future__ import annotations

from ..._tensor import Tensor
from .._functional import loss_likelihood as L
from .loss import _Loss


class PoissonNLLLoss(_Loss):
    """``poisson_nll_loss`` as a module.

    >>> import ember
    >>> ember.nn.PoissonNLLLoss()(ember.zeros(2), ember.ones(2))
    tensor(1.)
    """

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean") -> None:  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return L.poisson_nll_loss(
            log_input, target, self.log_input, self.full, eps=self.eps, reduction=self.reduction
        )


class GaussianNLLLoss(_Loss):
    """``gaussian_nll_loss`` as a module.

    >>> import ember
    >>> ember.nn.GaussianNLLLoss()(ember.zeros(2), ember.zeros(2), ember.ones(2))
    tensor(0.)
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var) -> Tensor:
        return L.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


class CTCLoss(_Loss):
    """``ctc_loss`` as a module: ``forward(log_probs, targets, input_lengths, target_lengths)``.

    >>> import ember
    >>> lp = ember.zeros(3, 1, 2).log_softmax(2)
    >>> round(ember.nn.CTCLoss()(lp, ember.tensor([[1]]), [3], [1]).item(), 4)
    0.2877
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths, target_lengths):
        return L.ctc_loss(
            log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
            self.zero_infinity,
        )  # fmt: skip


__all__ = ["PoissonNLLLoss", "GaussianNLLLoss", "CTCLoss"]
