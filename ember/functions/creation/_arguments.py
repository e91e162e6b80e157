"""Argument helpers every creation function shares: ``device=`` and ``dtype=`` defaults,
``*size`` forms, and wrapping a host array on its device.
"""

from __future__ import annotations

import numbers

import numpy as np

from ... import backend as _backend
from ... import dtypes as _dt
from ..._tensor import Tensor, _shape_of
from ...backend import CPU, Device

_Number = (numbers.Number, np.generic)


def _device(device) -> Device:
    """``device``, or without one the default device (``ember.set_default_device``)."""
    return Device(device) if device is not None else (_backend.default_device() or CPU)


def _finish(arr: np.ndarray, device, requires_grad: bool) -> Tensor:
    """Wrap a host array, copying it to ``device`` (or the default device) first when that is
    not the CPU."""
    if device is None:
        device = _backend.default_device()
    if device is not None:
        arr = _backend.to_device(arr, Device(device))
    t = Tensor._make(arr)
    if requires_grad:
        require_grad(t)
    return t


def require_grad(t: Tensor) -> None:
    """A factory's ``requires_grad=True``, with PyTorch's error for integer dtypes."""
    t._set_requires_grad(True, "Only Tensors of floating point and complex dtype")


def _size(size, op: str) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return _shape_of(size, op)


def _dtype(dtype, default: _dt.DType) -> _dt.DType:
    return default if dtype is None else _dt.to_dtype(dtype)
