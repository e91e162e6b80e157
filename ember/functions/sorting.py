"""Softmax over a dimension, and sorting: softmax, log_softmax, sort, argsort, topk.

Sorting's values are a ``gather`` of the input at the sorted positions, so their gradient
flows back to where each value came from.

>>> import ember
>>> ember.tensor([3.0, 1.0, 2.0]).sort()
ember.return_types.sort(
values=tensor([1., 2., 3.]),
indices=tensor([1, 2, 0]))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import dtypes as _dt
from .. import return_types as RT
from .._shape import wrap_dim
from .._tensor import Tensor
from ..amp.autocast_mode import rule as _autocast_rule
from ..ops.base import Op, Spec, apply
from ..ops.softmax import LogSoftmax, Softmax
from ._promote import to_float


@_autocast_rule("softmax")
def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim``, computed stably.

    >>> import ember
    >>> ember.tensor([[0.0, 0.0]]).softmax(dim=1)
    tensor([[0.5000, 0.5000]])
    """
    x = input if dtype is None else input.to(dtype)
    x = to_float(x)
    return apply(Softmax(wrap_dim(dim, x.ndim, "softmax")), x)


@_autocast_rule("log_softmax")
def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    """log(softmax(x)) along ``dim``, computed stably.

    >>> import ember
    >>> ember.tensor([[0.0, 0.0]]).log_softmax(1)
    tensor([[-0.6931, -0.6931]])
    """
    x = input if dtype is None else input.to(dtype)
    x = to_float(x)
    return apply(LogSoftmax(wrap_dim(dim, x.ndim, "log_softmax")), x)


@dataclass(frozen=True)
class Argsort(Op):
    """Positions that sort ``x`` along ``dim`` (stable, so ties keep their order)."""

    dim: int
    descending: bool = False
    differentiable = False

    def forward(self, xp, x):
        if self.descending:  # stable: ties keep their original order, as in PyTorch
            key = x.astype(np.int64) if x.dtype.kind in "ub" else x
            return xp.argsort(-key, axis=self.dim, kind="stable").astype(np.int64)
        return xp.argsort(x, axis=self.dim, kind="stable").astype(np.int64)

    def infer(self, x):
        return Spec(tuple(x.shape), _dt.int64)


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """Indices that sort ``input`` along ``dim``.

    >>> import ember
    >>> ember.tensor([3, 1, 2]).argsort(descending=True)
    tensor([0, 2, 1])
    """
    if input.ndim == 0:
        from .creation import zeros

        return zeros((), dtype=_dt.int64)
    return apply(Argsort(wrap_dim(dim, input.ndim, "argsort"), bool(descending)), input)


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False):
    """``(values, indices)`` of ``input`` sorted along ``dim``.

    >>> import ember
    >>> ember.sort(ember.tensor([[2, 1]]), dim=1).indices
    tensor([[1, 0]])
    """
    if input.ndim == 0:
        return RT.sort(input, argsort(input))
    idx = argsort(input, dim, descending)
    return RT.sort(input.gather(dim, idx), idx)


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices.

    >>> import ember
    >>> ember.tensor([1.0, 5.0, 3.0]).topk(2)
    ember.return_types.topk(
    values=tensor([5., 3.]),
    indices=tensor([1, 2]))
    """
    d = wrap_dim(dim, input.ndim, "topk")
    size = input.shape[d] if input.ndim else 1
    if not 0 <= k <= size:
        from .._errors import EmberIndexError

        raise EmberIndexError(f"topk: k ({k}) is out of range for dimension {d} of size {size}")
    idx = argsort(input, d, descending=largest).narrow(d, 0, k)
    return RT.topk(input.gather(d, idx), idx)


def msort(input: Tensor) -> Tensor:
    """``input`` sorted along its first dimension.

    >>> import ember
    >>> ember.msort(ember.tensor([[2, 1], [0, 3]]))
    tensor([[0, 1],
            [2, 3]])
    """
    return sort(input, 0).values


__all__ = ["softmax", "log_softmax", "argsort", "sort", "topk", "msort"]
TENSOR_METHODS = {
    "softmax": softmax,
    "log_softmax": log_softmax,
    "argsort": argsort,
    "sort": sort,
    "topk": topk,
    "msort": msort,
}
