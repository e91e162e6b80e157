"""Dropout functionals: dropout (from ``ember.functions``), alpha_dropout and dropout1d/2d/3d
(whole channels).

>>> import ember
>>> import ember.nn.functional as F
>>> F.dropout2d(ember.ones(1, 2, 2, 2), training=False).shape
ember.Size([1, 2, 2, 2])
"""

from __future__ import annotations

from ... import random as _random
from ..._errors import ShapeError
from ..._tensor import Tensor
from ...functions.creation import tensor as _new_tensor
from ...functions.dropout import dropout  # noqa: F401  (defined below nn)
from ...functions.elementwise import where
from ...ops.base import apply
from ...ops.random import DropoutMask
from .inplace import inplace_form


def _channel_dropout(
    input: Tensor, p: float, training: bool, inplace: bool, batched_ndim: int, name: str
):
    """``dropout2d``'s channel masks for inputs of ``batched_ndim`` dims (or one fewer)."""
    if input.ndim not in (batched_ndim - 1, batched_ndim):
        raise ShapeError(
            f"{name}: expected {batched_ndim - 1}D or {batched_ndim}D input, got shape "
            f"{tuple(input.shape)}"
        )
    if inplace and training and p != 0.0:
        return inplace_form(input, _channel_dropout, p, True, False, batched_ndim, name, name=name)
    batched = input.ndim == batched_ndim
    out = dropout2d(input if batched else input.unsqueeze(0), p, training)
    return out if batched else out.squeeze(0)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of (N, C, L) or (C, L) input with probability ``p``.

    >>> import ember
    >>> ember.nn.functional.dropout1d(ember.ones(2, 3, 4), training=False).sum()
    tensor(24.)
    """
    return _channel_dropout(input, p, training, inplace, 3, "dropout1d")


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability ``p``.

    >>> import ember
    >>> ember.nn.functional.dropout3d(ember.ones(1, 2, 2, 2, 2), training=False).sum()
    tensor(16.)
    """
    return _channel_dropout(input, p, training, inplace, 5, "dropout3d")


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout that keeps SELU's mean and variance (identity unless ``training``).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.alpha_dropout(ember.ones(2), 0.5)
    tensor([1., 1.])
    """
    if not training or p == 0:
        return input
    if inplace:
        return inplace_form(input, alpha_dropout, p, True, name="alpha_dropout")
    alpha = -1.7580993408473766
    keep = _new_tensor(_random.rng().random(tuple(input.shape)) >= p, device=input.device)
    a = ((1 - p) * (1 + p * alpha**2)) ** -0.5
    b = -a * alpha * p
    return where(keep, input, alpha) * a + b


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, H, W) input with probability ``p``.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.dropout2d(ember.ones(1, 2, 2, 2), 0.5, training=False).sum()
    tensor(8.)
    """
    if not training or p == 0.0:
        return input
    if inplace:
        return inplace_form(input, dropout2d, p, True, name="dropout2d")
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    return input * apply(DropoutMask(shape, float(p)), input)


__all__ = ["dropout1d", "dropout3d", "alpha_dropout", "dropout2d"]
