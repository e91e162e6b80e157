"""``Tensor.new_*``: new tensors with the same dtype and device as the tensor unless given."""

from __future__ import annotations

from ..._tensor import Tensor
from .filled import empty, full, ones, zeros
from .from_data import tensor


def new_tensor(
    self: Tensor, data, *, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """A tensor from ``data`` with this tensor's dtype and device (unless given).

    >>> import ember
    >>> ember.ones(1, dtype=ember.float64).new_tensor([1, 2])
    tensor([1., 2.], dtype=ember.float64)
    """
    return tensor(
        data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


def new_zeros(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Zeros of ``size`` with this tensor's dtype and device.

    >>> import ember
    >>> ember.ones(1, dtype=ember.int32).new_zeros(2)
    tensor([0, 0], dtype=ember.int32)
    """
    return zeros(
        *size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


def new_ones(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Ones of ``size`` with this tensor's dtype and device.

    >>> import ember
    >>> ember.zeros(1).new_ones((2,))
    tensor([1., 1.])
    """
    return ones(
        *size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


def new_empty(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uninitialized, of ``size``, with this tensor's dtype and device.

    >>> import ember
    >>> ember.zeros(1).new_empty(2, 3).shape
    ember.Size([2, 3])
    """
    return empty(
        *size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


def new_full(
    self: Tensor, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """``fill_value`` of ``size`` with this tensor's dtype and device.

    >>> import ember
    >>> ember.zeros(1, dtype=ember.float64).new_full((2,), 3)
    tensor([3., 3.], dtype=ember.float64)
    """
    return full(
        size,
        fill_value,
        dtype=dtype or self.dtype,
        device=device or self.device,
        requires_grad=requires_grad,
    )


def new(self: Tensor, *args) -> Tensor:
    """Legacy ``x.new(...)``: like ``ember.Tensor(...)`` with this tensor's dtype and device.

    >>> import ember
    >>> ember.ones(1, dtype=ember.int64).new([1, 2])
    tensor([1, 2])
    """
    return Tensor(*args, dtype=self.dtype, device=self.device)
