"""Random tensors: ``rand``, ``randn``, ``randint``, ``randperm`` and the ``*_like`` forms.

Every draw is an op (``ember.ops.random.Random``, with side effects): eager mode runs it now,
``ember.compile`` records it, so a compiled function draws fresh numbers on every call (with
the same seed, the same numbers as eager). Numbers are drawn where the tensor lives
(ember.random: NumPy on the CPU, cuRAND on a GPU), never on the host and copied. The op reads
only the dtype and device of its one input, the *anchor*: a new empty array, or the
``_like`` functions' input when dtype and device match.
"""

from __future__ import annotations

import numpy as np

from ... import _caches
from ... import backend as _backend
from ... import dtypes as _dt
from ..._config import state as _state
from ..._errors import DTypeError, EmberError
from ..._tensor import Size, Tensor
from ...backend import Device
from ...ops.base import apply as _apply
from ...ops.random import Random
from ._arguments import _dtype, _size, require_grad
from .filled import _like

__all__ = ["rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm"]


def _random_float(dtype, op: str) -> _dt.DType:
    dt = _dtype(dtype, _dt.get_default_dtype())
    if not dt.is_floating_point:
        raise DTypeError(f"{op}: needs a floating dtype, got {dt}")
    return dt


def _anchor(dt: _dt.DType, device) -> Tensor:
    """An empty array (no data to read or save) that gives a draw its dtype and device (the
    default device without one)."""
    if device is None:
        device = _backend.default_device()
    if device is None:
        return Tensor._make(np.empty(0, dt.np))
    return Tensor._make(_backend.full((0,), None, dt.np, Device(device)))


_RANDOM_OPS: dict = {}  # (dist, shape, params) -> Random: init code draws the same shapes often
_caches.register("random draw ops", _RANDOM_OPS.clear, _RANDOM_OPS.__len__)


def _random_op(dist: str, shape: tuple, params: tuple, generator) -> Random:
    if generator is not None:
        return Random(dist, shape, params, generator)
    key = (dist, shape, params)
    op = _RANDOM_OPS.get(key)
    if op is None:
        if len(_RANDOM_OPS) >= 256:
            _RANDOM_OPS.clear()
        op = _RANDOM_OPS[key] = Random(dist, shape, params)
    return op


def _drawn(op: Random, anchor: Tensor, requires_grad: bool) -> Tensor:
    t = _apply(op, anchor)
    if requires_grad:
        require_grad(t)
    return t


def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform random numbers in [0, 1).

    >>> import ember
    >>> ember.rand(2, 3).shape
    ember.Size([2, 3])
    """
    dt, shape = _random_float(dtype, "rand"), _size(size, "rand")
    return _drawn(_random_op("uniform", shape, (), generator), _anchor(dt, device), requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Standard normal random numbers.

    >>> import ember
    >>> ember.randn(4).dtype
    ember.float32
    """
    dt, shape = _random_float(dtype, "randn"), _size(size, "randn")
    return _drawn(_random_op("normal", shape, (), generator), _anchor(dt, device), requires_grad)


def _int_bounds(low, high, op: str) -> tuple[int, int]:
    low, high = int(low), int(high)
    if low >= high:
        raise EmberError(f"{op}: expected low < high, but got low={low} >= high={high}")
    return low, high


def randint(
    low,
    high=None,
    size=None,
    *,
    generator=None,
    dtype=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """Random integers in [low, high); ``randint(high, size)`` means low = 0.

    >>> import ember
    >>> ember.randint(0, 10, (3,)).dtype
    ember.int64
    >>> ember.randint(5, (2, 2)).shape
    ember.Size([2, 2])
    """
    if size is None:
        if high is None or not isinstance(high, (tuple, list, Size)):
            raise EmberError("randint: size is required, e.g. randint(0, 10, (3,))")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    bounds = _int_bounds(low, high, "randint")
    dt = _dtype(dtype, _dt.int64)
    shape = _size((size,), "randint")
    op = _random_op("integers", shape, bounds, generator)
    return _drawn(op, _anchor(dt, device), requires_grad)


def _like_anchor(input: Tensor, dtype, device) -> tuple:
    """``(dtype, shape, anchor)`` for a ``_like`` function: ``input`` itself anchors the draw
    when it has the dtype and device asked for (no new array)."""
    dt, dev, shape = _like(input, dtype, device)
    if dt is input.dtype and (device is None or Device(device) == input.device):
        return dt, shape, input
    tracer = _state.tracer
    if tracer is not None and tracer.define and getattr(input._data, "is_symbol", False):
        # a symbolic input in a graph being defined: anchor on it (cast), so the draw is a node
        # of the graph like the rest of the ``_like`` forms, not a constant drawn now
        return dt, shape, input.to(device=dev, dtype=dt)
    return dt, shape, _anchor(dt, dev)


def rand_like(
    input: Tensor,
    *,
    generator=None,
    dtype=None,
    device=None,
    requires_grad: bool = False,
    memory_format=None,
) -> Tensor:
    """Uniform random numbers with ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.rand_like(ember.zeros(2, dtype=ember.float64)).dtype
    ember.float64
    """
    dt, shape, anchor = _like_anchor(input, dtype, device)
    _random_float(dt, "rand_like")
    return _drawn(_random_op("uniform", shape, (), generator), anchor, requires_grad)


def randn_like(
    input: Tensor,
    *,
    generator=None,
    dtype=None,
    device=None,
    requires_grad: bool = False,
    memory_format=None,
) -> Tensor:
    """Normal random numbers with ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.randn_like(ember.zeros(2, 3)).shape
    ember.Size([2, 3])
    """
    dt, shape, anchor = _like_anchor(input, dtype, device)
    _random_float(dt, "randn_like")
    return _drawn(_random_op("normal", shape, (), generator), anchor, requires_grad)


def randint_like(
    input: Tensor,
    low,
    high=None,
    *,
    generator=None,
    dtype=None,
    device=None,
    requires_grad: bool = False,
    memory_format=None,
) -> Tensor:
    """Random integers in [low, high) with ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.randint_like(ember.zeros(3), 5).dtype
    ember.float32
    """
    if high is None:
        low, high = 0, low
    bounds = _int_bounds(low, high, "randint_like")
    dt, shape, anchor = _like_anchor(input, dtype, device)
    return _drawn(_random_op("integers", shape, bounds, generator), anchor, requires_grad)


def randperm(
    n: int, *, generator=None, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """A random permutation of 0..n-1.

    >>> import ember
    >>> sorted(ember.randperm(4).tolist())
    [0, 1, 2, 3]
    """
    if n < 0:
        raise EmberError(f"randperm: n must be non-negative, got {n}")
    dt = _dtype(dtype, _dt.int64)
    op = _random_op("permutation", (int(n),), (), generator)
    return _drawn(op, _anchor(dt, device), requires_grad)
