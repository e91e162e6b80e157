"""Finite differences and integrals: diff, trapezoid (and its old name trapz),
cumulative_trapezoid.
"""

from __future__ import annotations

from ... import dtypes as _dt
from ..._errors import ShapeError
from ..._shape import wrap_dim
from ..._tensor import Tensor
from .. import creation as C
from ._arguments import _float

__all__ = ["diff", "trapezoid", "trapz", "cumulative_trapezoid"]


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (after adding ``prepend`` / ``append``).

    >>> import ember
    >>> ember.diff(ember.tensor([1, 4, 9, 16]))
    tensor([3, 5, 7])
    """
    if input.ndim == 0:
        raise ShapeError("diff: expects input to be at least one-dimensional")
    d = wrap_dim(dim, input.ndim, "diff")
    parts = [p for p in (prepend, input, append) if p is not None]
    if len(parts) > 1:
        from ..shape import cat

        parts = [p if isinstance(p, Tensor) else C.tensor(p, device=input.device) for p in parts]
        x = cat(
            [
                p.expand(*[s if i == d else input.shape[i] for i, s in enumerate(p.shape)])
                if p.ndim == input.ndim
                else p
                for p in parts
            ],
            d,
        )
    else:
        x = input
    for _ in range(n):
        length = x.shape[d]
        if length == 0:
            break
        a, b = x.narrow(d, 1, length - 1), x.narrow(d, 0, length - 1)
        x = (a != b) if x.dtype is _dt.bool_ else a - b
    return x


def _spacing(y: Tensor, x: Tensor | None, dx, d: int):
    """Half the width of each trapezoid along ``d``: ``dx / 2`` or ``diff(x) / 2`` shaped to
    broadcast against ``y``."""
    if x is None:
        return (1.0 if dx is None else dx) / 2.0
    spacing = diff(x, dim=d if x.ndim == y.ndim else -1)
    if x.ndim == 1 and y.ndim > 1:
        shape = [1] * y.ndim
        shape[d] = y.shape[d] - 1
        spacing = spacing.reshape(*shape)
    return spacing / 2.0


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """The integral of ``y`` along ``dim`` by the trapezoid rule (points ``x`` or spacing
    ``dx``, default 1).

    >>> import ember
    >>> ember.trapezoid(ember.tensor([1.0, 2.0, 3.0]))
    tensor(4.)
    """
    d = wrap_dim(dim, max(y.ndim, 1), "trapezoid")
    n = y.shape[d]
    if n == 0:
        return _float(y).sum(d)
    left, right = y.narrow(d, 0, n - 1), y.narrow(d, 1, n - 1)
    return ((left + right) * _spacing(y, x, dx, d)).sum(d)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """The running trapezoid integral along ``dim`` (one element shorter than ``y``).

    >>> import ember
    >>> ember.cumulative_trapezoid(ember.tensor([1.0, 2.0, 3.0]))
    tensor([1.5000, 4.0000])
    """
    d = wrap_dim(dim, max(y.ndim, 1), "cumulative_trapezoid")
    n = y.shape[d]
    left, right = y.narrow(d, 0, max(n - 1, 0)), y.narrow(d, min(1, n), max(n - 1, 0))
    return ((left + right) * _spacing(y, x, dx, d)).cumsum(d)


trapz = trapezoid
