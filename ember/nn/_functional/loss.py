"""Losses: mse, l1, smooth_l1, huber, cross_entropy, nll, binary_cross_entropy(_with_logits), kl_div.

Every loss takes ``reduction='none'|'mean'|'sum'`` and, where PyTorch still accepts them, the
legacy ``size_average`` / ``reduce`` arguments.

>>> import ember
>>> import ember.nn.functional as F
>>> F.mse_loss(ember.tensor([1.0, 3.0]), ember.tensor([0.0, 0.0]))
tensor(5.)
"""

from __future__ import annotations

import warnings

import ember
from ..._errors import EmberError, ShapeError
from ..._tensor import Tensor
from .activation import log_softmax


def legacy_reduction(size_average, reduce, reduction: str) -> str:
    """PyTorch's mapping of the deprecated ``size_average`` / ``reduce`` flags."""
    if size_average is None and reduce is None:
        return reduction
    warnings.warn(
        "size_average and reduce args will be deprecated, please use reduction='...' instead",
        UserWarning,
        stacklevel=3,
    )
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _reduce(loss: Tensor, reduction: str, op: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{op}: {reduction!r} is not a valid value for reduction")


def _pair_check(input: Tensor, target: Tensor, op: str) -> None:
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(
            f"{op}: using a target size ({tuple(target.shape)}) that is different to the input "
            f"size ({tuple(input.shape)}); this will likely lead to incorrect results due to "
            "broadcasting",
            UserWarning,
            stacklevel=3,
        )


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
             reduction: str = "mean", weight=None) -> Tensor:
    """Mean squared error.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.mse_loss(ember.tensor([2.0]), ember.tensor([0.0]), reduction="sum")
    tensor(4.)
    """
    _pair_check(input, target, "mse_loss")
    diff = input - target
    return _reduce(diff * diff, legacy_reduction(size_average, reduce, reduction), "mse_loss")


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
            reduction: str = "mean") -> Tensor:
    """Mean absolute error.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.l1_loss(ember.tensor([2.0, -1.0]), ember.tensor([0.0, 0.0]))
    tensor(1.5000)
    """
    _pair_check(input, target, "l1_loss")
    return _reduce((input - target).abs(), legacy_reduction(size_average, reduce, reduction),
                   "l1_loss")


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """Quadratic below ``beta``, linear above (0.5 x^2 / beta or |x| - 0.5 beta).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.smooth_l1_loss(ember.tensor([0.5, 3.0]), ember.tensor([0.0, 0.0]), reduction="none")
    tensor([0.1250, 2.5000])
    """
    _pair_check(input, target, "smooth_l1_loss")
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    d = (input - target).abs()
    if beta == 0:
        loss = d
    else:
        loss = ember.where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta)
    return _reduce(loss, legacy_reduction(size_average, reduce, reduction), "smooth_l1_loss")


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight=None) -> Tensor:
    """Quadratic below ``delta``, linear above (0.5 x^2 or delta (|x| - 0.5 delta)).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.huber_loss(ember.tensor([0.5, 3.0]), ember.tensor([0.0, 0.0]), reduction="none")
    tensor([0.1250, 2.5000])
    """
    _pair_check(input, target, "huber_loss")
    d = (input - target).abs()
    loss = ember.where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta)
    return _reduce(loss, reduction, "huber_loss")


def _class_weights(weight: Tensor | None, target: Tensor) -> Tensor | None:
    return None if weight is None else weight[target]


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices under log-probabilities ``input`` (N, C, ...).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.nll_loss(ember.tensor([[-1.0, -2.0]]), ember.tensor([1]))
    tensor(2.)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if input.ndim < 1:
        raise ShapeError("nll_loss: input must have at least 1 dimension (C) or 2 (N, C)")
    if target.dtype.is_floating_point:
        raise EmberError(
            f"nll_loss: expected class indices of an integer dtype as target, got {target.dtype}"
        )
    unbatched = input.ndim == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    n, c = input.shape[:2]
    if tuple(target.shape) != (n,) + tuple(input.shape[2:]):
        raise ShapeError(
            f"nll_loss: expected target of shape {(n,) + tuple(input.shape[2:])} for input of "
            f"shape {tuple(input.shape)}, got {tuple(target.shape)}"
        )
    valid = target != ignore_index
    safe = ember.where(valid, target, 0)
    bad = (safe < 0) | (safe >= c)
    if bool(bad.any()):
        raise EmberError(f"nll_loss: target {int(safe[bad][0])} is out of bounds for {c} classes")
    picked = -input.gather(1, safe.unsqueeze(1)).squeeze(1)
    w = valid.to(input.dtype)
    if weight is not None:
        w = w * weight[safe]
    loss = picked * w
    if reduction == "mean":
        return loss.sum() / w.sum()
    out = _reduce(loss, reduction, "nll_loss")
    return out.squeeze(0) if unbatched and reduction == "none" else out


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy of logits (N, C, ...) against class indices or class probabilities.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.cross_entropy(ember.zeros(2, 4), ember.tensor([0, 3]))
    tensor(1.3863)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    class_dim = 0 if input.ndim == 1 else 1
    logp = log_softmax(input, class_dim)
    c = input.shape[class_dim]
    if target.dtype.is_floating_point:  # class probabilities
        if tuple(target.shape) != tuple(input.shape):
            raise ShapeError(
                f"cross_entropy: probability targets must have the input's shape "
                f"{tuple(input.shape)}, got {tuple(target.shape)}"
            )
        if label_smoothing:
            target = target * (1 - label_smoothing) + label_smoothing / c
        terms = logp * target
        if weight is not None:
            terms = terms * weight.reshape((c,) + (1,) * (input.ndim - class_dim - 1))
        loss = -terms.sum(class_dim)
        if reduction == "mean":
            return loss.sum() / (loss.numel() or 1)
        return _reduce(loss, reduction, "cross_entropy")
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing:
        return nll
    valid = (target != ignore_index).to(input.dtype)
    smooth_terms = logp if weight is None else logp * weight.reshape(
        (c,) + (1,) * (input.ndim - class_dim - 1))
    smooth = -smooth_terms.sum(class_dim) * valid
    if reduction == "mean":
        if weight is None:
            smooth = smooth.sum() / valid.sum()
        else:
            safe = ember.where(target != ignore_index, target, 0)
            smooth = smooth.sum() / (weight[safe] * valid).sum()
    else:
        smooth = _reduce(smooth, reduction, "cross_entropy")
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / c)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """-(t log p + (1 - t) log(1 - p)) with logs clamped at -100, as in PyTorch.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.binary_cross_entropy(ember.tensor([0.5]), ember.tensor([1.0]))
    tensor(0.6931)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if tuple(input.shape) != tuple(target.shape):
        raise ShapeError(
            f"binary_cross_entropy: target size {tuple(target.shape)} must be the same as input "
            f"size {tuple(input.shape)}"
        )
    loss = -(target * ember.log(input).clamp(min=-100)
             + (1 - target) * ember.log(1 - input).clamp(min=-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy")


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid + binary cross-entropy in one stable expression.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.binary_cross_entropy_with_logits(ember.tensor([0.0]), ember.tensor([1.0]))
    tensor(0.6931)
    """
    from .activation import softplus

    reduction = legacy_reduction(size_average, reduce, reduction)
    if tuple(input.shape) != tuple(target.shape):
        raise ShapeError(
            f"binary_cross_entropy_with_logits: target size {tuple(target.shape)} must be the "
            f"same as input size {tuple(input.shape)}"
        )
    # log(1 + exp(-x)) = softplus(-x); loss = (1 - t) x + (1 + (pw - 1) t) softplus(-x)
    sp = softplus(-input, threshold=float("inf"))
    if pos_weight is not None:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL(target || exp(input)) pointwise: target (log target - input); 'batchmean' divides by N.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.kl_div(ember.tensor([0.0]).log_softmax(0), ember.tensor([1.0]), reduction="sum")
    tensor(0.)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if log_target:
        loss = ember.exp(target) * (target - input)
    else:
        loss = ember.where(target > 0, target * (ember.log(target.clamp(min=1e-38)) - input),
                           target * 0)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size. 'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.",
            UserWarning,
            stacklevel=2,
        )
    return _reduce(loss, reduction, "kl_div")
