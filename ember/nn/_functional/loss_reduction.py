"""The ``reduction`` argument every loss takes: ``'none'|'mean'|'sum'`` (kl_div also
``'batchmean'``), PyTorch's legacy ``size_average`` / ``reduce`` flags and the deprecated
``'elementwise_mean'``, and the reductions themselves (a weighted 'mean' divides by the total
weight).

>>> import ember
>>> _reduce(ember.tensor([1.0, 2.0]), "sum")
tensor(3.)
"""

from __future__ import annotations

import warnings

from ..._tensor import Tensor

_REDUCTIONS = ("none", "mean", "sum")


def legacy_reduction(size_average, reduce, reduction: str = "mean") -> str:
    """The ``reduction`` string for PyTorch's deprecated ``size_average`` / ``reduce`` flags
    (``reduction`` itself when both are None), warning as PyTorch does.

    >>> legacy_reduction(None, None, "sum")
    'sum'
    """
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
        UserWarning,
        stacklevel=3,
    )
    return ret


def _reduction(size_average, reduce, reduction: str, op: str, batchmean: bool = False) -> str:
    if size_average is not None or reduce is not None:
        return legacy_reduction(size_average, reduce, reduction)
    if reduction in _REDUCTIONS or (batchmean and reduction == "batchmean"):
        return reduction
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
            UserWarning,
            stacklevel=3,
        )
        return "mean"
    raise ValueError(f"{op}: {reduction} is not a valid value for reduction")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _weighted_reduce(loss: Tensor, w: Tensor | None, reduction: str) -> Tensor:
    """'mean' divides by the total weight (PyTorch's nll_loss), not by the element count."""
    if reduction == "mean" and w is not None:
        return loss.sum() / w.sum()
    return _reduce(loss, reduction)


__all__ = ["legacy_reduction"]
