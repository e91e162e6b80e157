"""Tensor predicates PyTorch has as methods and properties: ``is_complex``, ``is_signed``,
``is_same_size`` and ``retains_grad``.

>>> import ember
>>> ember.ones(2, dtype=ember.uint8).is_signed(), ember.ones(2).is_complex()
(False, False)
"""

from __future__ import annotations

from .. import dtypes as _dt
from .._tensor import Tensor

_UNSIGNED = (_dt.bool_, _dt.uint8)


def is_complex(self: Tensor) -> bool:
    """False: ember has no complex dtypes.

    >>> import ember
    >>> ember.zeros(1).is_complex()
    False
    """
    return False


def is_nonzero(self: Tensor) -> bool:
    """Whether a one-element tensor is not zero (``bool(t)``, as a function).

    >>> import ember
    >>> ember.is_nonzero(ember.tensor([2])), ember.tensor(0.0).is_nonzero()
    (True, False)
    """
    n = self.numel()
    if n != 1:
        what = "no values" if n == 0 else "more than one value"
        raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous")
    return bool(self.item())


def is_signed(self: Tensor) -> bool:
    """Whether the dtype holds negative numbers (all but bool and uint8).

    >>> import ember
    >>> ember.zeros(1, dtype=ember.int8).is_signed()
    True
    """
    return self.dtype not in _UNSIGNED


def is_same_size(self: Tensor, other: Tensor) -> bool:
    """Whether ``other`` has this tensor's shape.

    >>> import ember
    >>> ember.zeros(2, 3).is_same_size(ember.ones(2, 3))
    True
    """
    return tuple(self.shape) == tuple(other.shape)


def _retains_grad(self: Tensor) -> bool:
    return bool(self._retains_grad)


__all__: list = []
TENSOR_METHODS = {
    "is_complex": is_complex,
    "is_nonzero": is_nonzero,
    "is_signed": is_signed,
    "is_same_size": is_same_size,
    "retains_grad": property(_retains_grad),
}
