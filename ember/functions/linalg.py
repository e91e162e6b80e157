"""Matrix products: mm, matmul.

>>> import ember
>>> ember.mm(ember.ones(2, 3), ember.ones(3, 4)).shape
ember.Size([2, 4])
"""

from __future__ import annotations

from .._errors import ShapeError
from .._tensor import Tensor
from ..ops import linalg as L
from ..ops.base import apply
from ._promote import binary


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Product of two 2-D matrices (no broadcasting).

    >>> import ember
    >>> ember.mm(ember.ones(1, 2), ember.ones(2, 1))
    tensor([[2.]])
    """
    if input.ndim != 2 or mat2.ndim != 2:
        raise ShapeError(
            f"mm: both arguments must be 2-D matrices, got shapes {tuple(input.shape)} and "
            f"{tuple(mat2.shape)}"
        )
    if input.shape[1] != mat2.shape[0]:
        raise ShapeError(
            f"mm: shapes {tuple(input.shape)} and {tuple(mat2.shape)} cannot be multiplied "
            f"({input.shape[1]} != {mat2.shape[0]})"
        )
    a, b = binary(input, mat2, "mm")
    return apply(L.MATMUL, a, b)


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with NumPy/PyTorch semantics (1-D operands, batch broadcasting).

    >>> import ember
    >>> ember.matmul(ember.ones(5, 2, 3), ember.ones(3)).shape
    ember.Size([5, 2])
    """
    a, b = binary(input, other, "matmul")
    return apply(L.MATMUL, a, b)


def _rmatmul(self, other):
    return matmul(other, self)


__all__ = ["mm", "matmul"]
TENSOR_METHODS = {"mm": mm, "matmul": matmul, "__matmul__": matmul, "__rmatmul__": _rmatmul}
