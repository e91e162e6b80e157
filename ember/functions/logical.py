"""Logical ops (any dtype in, bool out) and bitwise ops (integers and bools) with ``& | ^ ~``.

On bool tensors the bitwise operators are the logical ones, as in PyTorch; on floats they
are errors.

>>> import ember
>>> a, b = ember.tensor([True, False]), ember.tensor([True, True])
>>> a & b, a | b, a ^ b, ~a
(tensor([ True, False]), tensor([True, True]), tensor([False,  True]), tensor([False,  True]))
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops import elementwise as E
from ..ops.base import apply
from ._promote import as_tensor_arg, binary

_LOGICAL_XOR, _LOGICAL_NOT = E.LogicalXor(), E.LogicalNot()
_AND, _OR, _XOR, _NOT = E.BitwiseAnd(), E.BitwiseOr(), E.BitwiseXor(), E.BitwiseNot()


def _pair(input, other, op: str):
    return as_tensor_arg(input, op), as_tensor_arg(other, op)


def logical_and(input, other) -> Tensor:
    """Elementwise AND of truth values (nonzero is True).

    >>> import ember
    >>> ember.logical_and(ember.tensor([0.0, 2.0]), ember.tensor([1, 1]))
    tensor([False,  True])
    """
    return apply(E.LOGICAL_AND, *_pair(input, other, "logical_and"))


def logical_or(input, other) -> Tensor:
    """Elementwise OR of truth values.

    >>> import ember
    >>> ember.logical_or(ember.tensor([0, 0]), ember.tensor([0, 3]))
    tensor([False,  True])
    """
    return apply(E.LOGICAL_OR, *_pair(input, other, "logical_or"))


def logical_xor(input, other) -> Tensor:
    """Elementwise XOR of truth values.

    >>> import ember
    >>> ember.logical_xor(ember.tensor([0, 1]), ember.tensor([1, 1]))
    tensor([ True, False])
    """
    return apply(_LOGICAL_XOR, *_pair(input, other, "logical_xor"))


def logical_not(input) -> Tensor:
    """Elementwise NOT of truth values.

    >>> import ember
    >>> ember.logical_not(ember.tensor([0.0, 2.0]))
    tensor([ True, False])
    """
    return apply(_LOGICAL_NOT, as_tensor_arg(input, "logical_not"))


def bitwise_and(input, other) -> Tensor:
    """Bitwise AND of integers (logical AND of bools); floats are an error.

    >>> import ember
    >>> ember.bitwise_and(ember.tensor([12]), 10)
    tensor([8])
    """
    a, b = binary(input, other, "bitwise_and")
    return apply(_AND, a, b)


def bitwise_or(input, other) -> Tensor:
    """Bitwise OR of integers (logical OR of bools); floats are an error.

    >>> import ember
    >>> ember.bitwise_or(ember.tensor([12]), 10)
    tensor([14])
    """
    a, b = binary(input, other, "bitwise_or")
    return apply(_OR, a, b)


def bitwise_xor(input, other) -> Tensor:
    """Bitwise XOR of integers (logical XOR of bools); floats are an error.

    >>> import ember
    >>> ember.bitwise_xor(ember.tensor([12]), 10)
    tensor([6])
    """
    a, b = binary(input, other, "bitwise_xor")
    return apply(_XOR, a, b)


def bitwise_not(input) -> Tensor:
    """Bitwise NOT of integers (logical NOT of bools); floats are an error.

    >>> import ember
    >>> ember.bitwise_not(ember.tensor([0, 5]))
    tensor([-1, -6])
    """
    return apply(_NOT, as_tensor_arg(input, "bitwise_not"))


def _rand(self, other):
    return bitwise_and(other, self)


def _ror(self, other):
    return bitwise_or(other, self)


def _rxor(self, other):
    return bitwise_xor(other, self)


__all__ = [
    "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
    "bitwise_xor", "bitwise_not",
]  # fmt: skip

TENSOR_METHODS = {name: globals()[name] for name in __all__}
TENSOR_METHODS.update(
    {
        "__and__": bitwise_and,
        "__rand__": _rand,
        "__or__": bitwise_or,
        "__ror__": _ror,
        "__xor__": bitwise_xor,
        "__rxor__": _rxor,
        "__invert__": bitwise_not,
    }
)
