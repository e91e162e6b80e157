"""Checks of tensor values as ops: decided at once on the CPU, on a GPU at the next read from
the device (``ember.backend.checks``), so a step never waits for one; in a graph, on every run.

``CheckRange(message, low, high, ignore)`` fails when some element of an integer tensor lies
outside ``[low, high)`` (elements equal to ``ignore`` excepted); the error is an
``EmberIndexError`` whose ``message`` has the first such value put in for ``{value}`` and the
tensor's shape for ``{shape}``. The op has side effects: graph passes keep it, in order.

>>> import ember
>>> from ember.ops.base import apply
>>> check = CheckRange("f: index {value} out of [0, 3) (shape {shape})", 0, 3)
>>> _ = apply(check, ember.tensor([0, 2]))
>>> apply(check, ember.tensor([1, 5]))
Traceback (most recent call last):
ember._errors.EmberIndexError: f: index 5 out of [0, 3) (shape [2])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import dtypes as _dt
from .._errors import EmberIndexError
from ..backend import CPU, checks, overrides, to_device
from ..backend.kernels import range_check as _range_check
from .base import Op, Spec


@dataclass(frozen=True)
class CheckRange(Op):
    """Fails (now, or at the next device read) when an element is outside ``[low, high)``."""

    message: str
    low: int
    high: int
    ignore: int | None = None

    has_side_effects = True
    replayable = True  # a CUDA graph recomputes the flag; it is queued again after each replay
    differentiable = False

    def forward(self, xp, t):
        bad = (t < self.low) | (t >= self.high)
        if self.ignore is not None:
            bad &= t != self.ignore
        flag = xp.asarray(bad.any())
        checks.defer(flag, lambda: self._error(t, bad))
        return flag

    def _error(self, t, bad=None) -> EmberIndexError:
        """The error naming the first bad element (``bad``: the mask, else found on the host)."""
        host = to_device(t, CPU)
        if bad is None:
            bad = (host < self.low) | (host >= self.high)
            if self.ignore is not None:
                bad &= host != self.ignore
        first = host[to_device(bad, CPU)].ravel()[0]
        return EmberIndexError(self.message.format(value=int(first), shape=list(t.shape)))

    def infer(self, t):
        return Spec((), _dt.bool_)


@overrides.register(CheckRange, "cpu")
def _check_range_cpu(op, xp, t):
    """Two reductions where every element is in range (the usual case: about 2 us against the
    body's 8 masks and calls); NotImplemented otherwise, and the body finds the first bad one."""
    if t.size and type(t) is np.ndarray and t.min() >= op.low and t.max() < op.high:
        return np.asarray(False)
    return NotImplemented


@overrides.register(CheckRange, "cuda")
def _check_range_cuda(op, xp, t):
    """One kernel for the flag (``backend/kernels/range_check.py``), deferred as the body's is;
    NotImplemented where it does not serve."""
    flag = _range_check.check_range(xp, t, op.low, op.high, op.ignore)
    if flag is not NotImplemented:
        checks.defer(flag, lambda: op._error(t))
    return flag


__all__ = ["CheckRange"]
