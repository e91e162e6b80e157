"""Divergence loss: kl_div, the pointwise KL divergence of log-probabilities, with PyTorch's
``'batchmean'`` reduction (the mathematical KL divergence) beside the usual three.

>>> import ember
>>> import ember.nn.functional as F
>>> F.kl_div(ember.tensor([0.0]), ember.tensor([1.0]), reduction="sum")
tensor(0.)
"""

from __future__ import annotations

import warnings

from ..._errors import DTypeError, ShapeError
from ..._tensor import Tensor
from ...amp.autocast_mode import rule as _autocast_rule
from ...functions.elementwise import where
from ...functions.math import exp, log
from .loss_reduction import _reduce, _reduction
from .loss_regression import _broadcastable


@_autocast_rule("kl_div")
def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """Pointwise KL divergence ``t (log t - input)`` of log-probabilities ``input`` from
    ``target`` (given as log-probabilities when ``log_target``); terms with ``t == 0`` are 0.
    'batchmean' divides the sum by the batch size (the mathematical KL divergence); 'mean'
    divides by the element count (with PyTorch's warning).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.kl_div(ember.tensor([-0.5, -1.0]), ember.tensor([0.0, 1.0]), reduction="sum")
    tensor(1.)
    """
    op = "kl_div"
    legacy = size_average is not None or reduce is not None
    reduction = _reduction(size_average, reduce, reduction, op, batchmean=True)
    if not (input.dtype.is_floating_point and target.dtype.is_floating_point):
        raise DTypeError(f"{op}: Integral inputs not supported ({input.dtype} and {target.dtype})")
    if input.shape != target.shape and not _broadcastable(input, target, op):
        raise ShapeError(
            f"{op}: the input size {list(input.shape)} and the target size "
            f"{list(target.shape)} cannot be broadcast together"
        )
    if log_target:
        loss = exp(target) * (target - input)
    else:  # xlogy(t, t) - t * input, with 0 log 0 = 0 (and NaN from negative targets, as PyTorch)
        nz = target != 0
        loss = where(nz, target * log(where(nz, target, 1.0)), 0.0)
        loss = loss - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.ndim else total
    if reduction == "mean" and not legacy:
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            UserWarning,
            stacklevel=2,
        )
    return _reduce(loss, reduction)


__all__ = ["kl_div"]
