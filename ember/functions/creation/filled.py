"""Filled tensors: ``zeros``, ``ones``, ``empty``, ``full`` and their ``*_like`` forms."""

from __future__ import annotations

import numpy as np

from ... import backend as _backend
from ... import dtypes as _dt
from ..._errors import DTypeError, ShapeError
from ..._tensor import Tensor
from ...backend.arrays import castable
from ._arguments import _device, _dtype, _size, require_grad

__all__ = ["zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like"]


def _filled(fill, shape: tuple, dt: _dt.DType, device, requires_grad: bool) -> Tensor:
    if fill is not None and fill != 0 and fill != 1:  # wrap/truncate like a C cast: -1 -> 255
        fill = castable(np.array(fill), dt.np).astype(dt.np)[()]
    t = Tensor._make(_backend.full(shape, fill, dt.np, _device(device)))
    if requires_grad:
        require_grad(t)
    return t


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros.

    >>> import ember
    >>> ember.zeros(2)
    tensor([0., 0.])
    """
    dt = _dtype(dtype, _dt.get_default_dtype())
    return _filled(0, _size(size, "zeros"), dt, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones.

    >>> import ember
    >>> ember.ones(2, dtype=ember.int32)
    tensor([1, 1], dtype=ember.int32)
    """
    dt = _dtype(dtype, _dt.get_default_dtype())
    return _filled(1, _size(size, "ones"), dt, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialized tensor.

    >>> import ember
    >>> ember.empty(2, 3).shape
    ember.Size([2, 3])
    """
    dt = _dtype(dtype, _dt.get_default_dtype())
    return _filled(None, _size(size, "empty"), dt, device, requires_grad)


def _fill_value(value, op: str):
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ShapeError(f"{op}: fill_value must be a number or a 1-element tensor")
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (bool, int, float)):
        raise DTypeError(f"{op}: fill_value must be a number, got {type(value).__name__}")
    return value


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value``; its dtype follows the value (bool, int64, float32).

    >>> import ember
    >>> ember.full((2,), 7), ember.full((2,), 7.0).dtype
    (tensor([7, 7]), ember.float32)
    """
    value = _fill_value(fill_value, "full")
    dt = _dtype(dtype, _dt.result_type(value))
    shape = _size((size,), "full")
    return _filled(value, shape, dt, device, requires_grad)


def _like(input: Tensor, dtype, device) -> tuple:
    if not isinstance(input, Tensor):
        raise DTypeError(f"expected a Tensor as input, got {type(input).__name__}")
    dt = input.dtype if dtype is None else _dt.to_dtype(dtype)
    return dt, (input.device if device is None else device), tuple(input._data.shape)


def zeros_like(
    input: Tensor, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None
) -> Tensor:
    """Zeros with ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.zeros_like(ember.ones(2, dtype=ember.int32))
    tensor([0, 0], dtype=ember.int32)
    """
    dt, dev, shape = _like(input, dtype, device)
    return _filled(0, shape, dt, dev, requires_grad)


def ones_like(
    input: Tensor, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None
) -> Tensor:
    """Ones with ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.ones_like(ember.zeros(2))
    tensor([1., 1.])
    """
    dt, dev, shape = _like(input, dtype, device)
    return _filled(1, shape, dt, dev, requires_grad)


def empty_like(
    input: Tensor, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None
) -> Tensor:
    """Uninitialized, with ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.empty_like(ember.zeros(2, 3)).shape
    ember.Size([2, 3])
    """
    dt, dev, shape = _like(input, dtype, device)
    return _filled(None, shape, dt, dev, requires_grad)


def full_like(
    input: Tensor,
    fill_value,
    *,
    dtype=None,
    device=None,
    requires_grad: bool = False,
    memory_format=None,
) -> Tensor:
    """``fill_value`` with ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.full_like(ember.zeros(2), 3)
    tensor([3., 3.])
    """
    dt, dev, shape = _like(input, dtype, device)
    return _filled(_fill_value(fill_value, "full_like"), shape, dt, dev, requires_grad)
