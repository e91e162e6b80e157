"""Scans along a dimension: cummax, cummin (values and indices), logcumsumexp."""

from __future__ import annotations

from ... import return_types as RT
from ..._config import no_grad
from ..._shape import wrap_dim
from ..._tensor import Tensor
from ...ops.base import apply
from ...ops.reduce import CumArgExtreme
from .. import creation as C
from ._arguments import _float, _where

__all__ = ["cummax", "cummin", "logcumsumexp"]


def _cum_extreme(input: Tensor, dim: int, is_min: bool, name: str):
    """(values, indices) of cummax / cummin: the indices an op, the values a ``gather`` at
    them, so the gradient goes to where each running extreme was taken, as in PyTorch."""
    d = wrap_dim(dim, max(input.ndim, 1), name)
    x = input.reshape(1) if input.ndim == 0 else input
    idx = apply(CumArgExtreme(d, is_min), x)
    values = x.gather(d, idx)
    if input.ndim == 0:
        values, idx = values.reshape(()), idx.reshape(())
    return values, idx


def cummax(input: Tensor, dim: int):
    """Running maximum along ``dim`` and where it was (the latest index on ties).

    >>> import ember
    >>> ember.cummax(ember.tensor([1.0, 3.0, 2.0]), 0).values
    tensor([1., 3., 3.])
    """
    return RT.cummax(*_cum_extreme(input, dim, False, "cummax"))


def cummin(input: Tensor, dim: int):
    """Running minimum along ``dim`` and where it was (the latest index on ties).

    >>> import ember
    >>> ember.cummin(ember.tensor([3.0, 1.0, 2.0]), 0).indices
    tensor([0, 1, 1])
    """
    return RT.cummin(*_cum_extreme(input, dim, True, "cummin"))


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input)))`` along ``dim``, computed stably.

    >>> import ember
    >>> ember.logcumsumexp(ember.tensor([0.0, 0.0]), 0)
    tensor([0.0000, 0.6931])
    """
    x = _float(input)
    d = wrap_dim(dim, max(x.ndim, 1), "logcumsumexp")
    with no_grad():
        m = x.amax(d, keepdim=True) if x.numel() else x
        m = _where(m.isfinite(), m, C.zeros_like(m))
    return (x - m).exp().cumsum(d).log() + m
