"""Reordering dimensions: permute, transpose (swapaxes, swapdims), t, movedim (moveaxis) and the
``T`` / ``mT`` properties, all views through ``Permute``.

>>> import ember
>>> ember.zeros(2, 3, 4).permute(2, 0, 1).shape
ember.Size([4, 2, 3])
"""

from __future__ import annotations

from ..._errors import ShapeError
from ..._node import named
from ..._shape import wrap_dim
from ..._tensor import Tensor
from ...ops import movement as M
from ...ops.base import apply
from ...ops.indexing import basic_index
from ._arguments import _dims_arg, _shape_arg


def permute(input: Tensor, *dims) -> Tensor:
    """Reorder dimensions (a view).

    >>> import ember
    >>> ember.zeros(2, 3, 4).permute(2, 0, 1).shape
    ember.Size([4, 2, 3])
    """
    n = input._data.ndim
    dims = _shape_arg(dims)
    if len(dims) != n:
        raise ShapeError(
            f"permute: number of dims don't match in permute: input has {n} dims ("
            f"shape {list(input.shape)}) but {len(dims)} were given: {list(dims)}"
        )
    return apply(M.Permute(_dims_arg(dims, n, "permute")), input)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions (a view).

    >>> import ember
    >>> ember.zeros(2, 3).transpose(0, 1).shape
    ember.Size([3, 2])
    """
    n = input._data.ndim
    d0, d1 = wrap_dim(dim0, n, "transpose"), wrap_dim(dim1, n, "transpose")
    dims = list(range(n))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return named(apply(M.Permute(tuple(dims)), input), "TransposeBackward0")


def t(input: Tensor) -> Tensor:
    """Transpose a tensor of at most 2 dimensions.

    >>> import ember
    >>> ember.zeros(2, 3).t().shape
    ember.Size([3, 2])
    """
    if input.ndim > 2:
        raise ShapeError(f"t: expects a tensor with <= 2 dimensions, but got {input.ndim}-D")
    if input.ndim < 2:
        return apply(basic_index(()), input)
    return named(transpose(input, 0, -1), "TBackward0")


def movedim(input: Tensor, source, destination) -> Tensor:
    """Move dimensions ``source`` to positions ``destination`` (a view).

    >>> import ember
    >>> ember.zeros(2, 3, 4).movedim(0, -1).shape
    ember.Size([3, 4, 2])
    """
    n = input._data.ndim
    src = _dims_arg(source, n, "movedim")
    dst = _dims_arg(destination, n, "movedim")
    if len(src) != len(dst):
        raise ShapeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)"
        )
    order = [d for d in range(n) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return apply(M.Permute(tuple(order)), input)


def _T(self: Tensor) -> Tensor:
    return apply(M.Permute(tuple(range(self.ndim - 1, -1, -1))), self)


def _mT(self: Tensor) -> Tensor:
    if self.ndim < 2:
        raise ShapeError(f"mT: tensor must have at least 2 dimensions, got {self.ndim}")
    return transpose(self, -2, -1)
