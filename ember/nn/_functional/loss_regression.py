"""Regression losses: mse, l1, smooth_l1 and huber, with PyTorch's checks (a floating result,
broadcastable shapes, a warning when the shapes differ) and optional per-element weights.

>>> import ember
>>> import ember.nn.functional as F
>>> F.l1_loss(ember.tensor([1.0, -3.0]), ember.tensor([0.0, 0.0]), reduction="sum")
tensor(4.)
"""

from __future__ import annotations

import warnings

from ..._errors import DTypeError, EmberError, ShapeError
from ..._node import named
from ..._shape import broadcast_shapes
from ..._tensor import Tensor
from ...amp.autocast_mode import rule as _autocast_rule
from ...functions.elementwise import where
from .loss_reduction import _reduce, _reduction, _weighted_reduce


def _broadcastable(input: Tensor, target: Tensor, op: str) -> bool:
    try:
        broadcast_shapes(op, tuple(input.shape), tuple(target.shape))
    except EmberError:
        return False
    return True


def _regression(input: Tensor, target: Tensor, op: str) -> None:
    """PyTorch's checks: floating result, broadcastable shapes (with a warning when they differ)."""
    if not (input.dtype.is_floating_point or target.dtype.is_floating_point):
        raise DTypeError(
            f"{op}: expected floating point input or target, got {input.dtype} and {target.dtype}"
        )
    if input.shape != target.shape:
        if not _broadcastable(input, target, op):
            raise ShapeError(
                f"{op}: the target size {list(target.shape)} cannot be broadcast to the input "
                f"size {list(input.shape)}"
            )
        warnings.warn(
            f"{op}: Using a target size ({target.shape!r}) that is different to the input size "
            f"({input.shape!r}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


def _check_elementwise_weight(weight: Tensor, input: Tensor, op: str) -> None:
    if weight.shape != input.shape:
        raise ShapeError(
            f"{op}: Weights and input must have the same size (weight of shape "
            f"{list(weight.shape)}, input of shape {list(input.shape)})"
        )


def _elementwise_reduce(
    loss: Tensor, input: Tensor, weight: Tensor | None, reduction: str, op: str
):
    """Reduces a per-element loss, weighted per element if ``weight`` is given ('mean' of a
    weighted loss divides by ``weight.sum()``)."""
    if weight is None:
        return _reduce(loss, reduction)
    _check_elementwise_weight(weight, input, op)
    return _weighted_reduce(loss * weight, weight, reduction)


@_autocast_rule("mse_loss")
def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean squared error ``(input - target)^2``, optionally weighted per element ('mean' of a
    weighted loss divides by ``weight.sum()``).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.mse_loss(ember.tensor([2.0]), ember.tensor([0.0]), reduction="sum")
    tensor(4.)
    """
    reduction = _reduction(size_average, reduce, reduction, "mse_loss")
    _regression(input, target, "mse_loss")
    d = input - target
    out = _elementwise_reduce(d * d, input, weight, reduction, "mse_loss")
    return out if weight is not None else named(out, "MseLossBackward0", (input, target))


@_autocast_rule("l1_loss")
def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean absolute error ``|input - target|``, optionally weighted per element.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.l1_loss(ember.tensor([2.0, -1.0]), ember.tensor([0.0, 0.0]))
    tensor(1.5000)
    """
    reduction = _reduction(size_average, reduce, reduction, "l1_loss")
    _regression(input, target, "l1_loss")
    return _elementwise_reduce((input - target).abs(), input, weight, reduction, "l1_loss")


@_autocast_rule("smooth_l1_loss")
def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """``0.5 z^2 / beta`` where ``z = |input - target| < beta``, else ``z - 0.5 beta``
    (``beta == 0`` is the L1 loss).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.smooth_l1_loss(ember.tensor([0.5, 3.0]), ember.tensor([0.0, 0.0]), reduction="none")
    tensor([0.1250, 2.5000])
    """
    reduction = _reduction(size_average, reduce, reduction, "smooth_l1_loss")
    _regression(input, target, "smooth_l1_loss")
    if beta < 0:
        raise EmberError(
            f"smooth_l1_loss does not support negative values for beta (got beta={beta})"
        )
    z = (input - target).abs()
    if beta == 0:
        return _reduce(z, reduction)
    out = _reduce(where(z < beta, z * z * (0.5 / beta), z - 0.5 * beta), reduction)
    return named(out, "SmoothL1LossBackward0")


@_autocast_rule("huber_loss")
def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """``0.5 z^2`` where ``z = |input - target| < delta``, else ``delta (z - 0.5 delta)``;
    optionally weighted per element ('mean' stays the plain mean, as in PyTorch).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.huber_loss(ember.tensor([0.5, 3.0]), ember.tensor([0.0, 0.0]), reduction="none")
    tensor([0.1250, 2.5000])
    """
    reduction = _reduction(None, None, reduction, "huber_loss")
    _regression(input, target, "huber_loss")
    if delta <= 0:
        raise EmberError(
            f"huber_loss does not support non-positive values for delta (got delta={delta})"
        )
    z = (input - target).abs()
    loss = where(z < delta, z * z * 0.5, (z - 0.5 * delta) * delta)
    if weight is not None:
        _check_elementwise_weight(weight, input, "huber_loss")
        loss = loss * weight
        return _reduce(loss, reduction)
    return named(_reduce(loss, reduction), "HuberLossBackward0")


__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"]
