"""Arithmetic on sparse COO tensors: ``S * scalar``, ``S / scalar``, ``-S``, ``S + S``,
``S - S`` and the transpose of two sparse dims (``t()``, ``transpose``).

Sums follow PyTorch: two coalesced operands give a coalesced sum (repeats merged); operands
with the same indices add their values; otherwise the entries are concatenated (uncoalesced).

>>> import ember
>>> a = ember.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3,)).coalesce()
>>> b = ember.sparse_coo_tensor([[1, 2]], [10.0, 20.0], (3,)).coalesce()
>>> (a + b * 2)._values()
tensor([ 1., 22., 40.])
>>> a.t() is a
True
"""

from __future__ import annotations

import numbers

from .. import dtypes as _dt
from .._errors import ShapeError
from .._shape import wrap_dim
from .._tensor import Tensor
from ..functions.elementwise import add as _add
from ..functions.elementwise import div as _div
from ..functions.elementwise import mul as _mul
from ..functions.elementwise import neg as _neg
from ..functions.shape import cat
from .creation import coalesce
from .tensor import SparseTensor


def _scalar(other, op: str, s: SparseTensor):
    """``other`` if it is a number or a 0-d dense tensor, else an error naming ``op``."""
    if isinstance(other, (numbers.Number,)) or (
        isinstance(other, Tensor) and not other.is_sparse and other.ndim == 0
    ):
        return other
    what = (
        f"a tensor of shape {tuple(other.shape)}{' (sparse_coo)' if other.is_sparse else ''}"
        if isinstance(other, Tensor)
        else type(other).__name__
    )
    raise ShapeError(
        f"{op}: a sparse_coo tensor of size {tuple(s.shape)} can only be combined with a number "
        f"or a 0-d tensor here, got {what}"
    )


def _with_values(s: SparseTensor, values: Tensor) -> SparseTensor:
    return SparseTensor._build(s._idx, values, s._size, s._coalesced)


def mul(input: SparseTensor, other) -> SparseTensor:
    """The sparse tensor times a number (or a 0-d tensor).

    >>> import ember
    >>> (ember.sparse_coo_tensor([[0]], [1.5]) * 2)._values()
    tensor([3.])
    """
    return _with_values(input, _mul(input._vals, _scalar(other, "mul", input)))


def div(input: SparseTensor, other) -> SparseTensor:
    """The sparse tensor divided by a number (or a 0-d tensor).

    >>> import ember
    >>> (ember.sparse_coo_tensor([[0]], [3.0]) / 2)._values()
    tensor([1.5000])
    """
    return _with_values(input, _div(input._vals, _scalar(other, "div", input)))


def neg(input: SparseTensor) -> SparseTensor:
    """The sparse tensor with its values negated.

    >>> import ember
    >>> (-ember.sparse_coo_tensor([[0]], [3.0]))._values()
    tensor([-3.])
    """
    return _with_values(input, _neg(input._vals))


def add(input: SparseTensor, other, *, alpha=1) -> SparseTensor:
    """The sum of two sparse COO tensors of one size (``alpha`` scales ``other``).

    >>> import ember
    >>> s = ember.sparse_coo_tensor([[0, 0]], [1.0, 2.0], (2,))
    >>> s.add(s, alpha=2)._values()
    tensor([3., 6.])
    """
    if not (isinstance(other, Tensor) and other.is_sparse):
        what = (
            f"a dense tensor of shape {tuple(other.shape)}"
            if isinstance(other, Tensor)
            else (type(other).__name__)
        )
        raise ShapeError(
            f"add: add(sparse, dense) is not supported (sparse_coo of size {tuple(input.shape)}"
            f" and {what}); use add(dense, sparse.to_dense()) instead"
        )
    if input.shape != other.shape or input.sparse_dim() != other.sparse_dim():
        raise ShapeError(
            f"add: expected sizes of 'self' and 'other' to match, but {list(input.shape)} != "
            f"{list(other.shape)} (sparse_dim {input.sparse_dim()} and {other.sparse_dim()})"
        )
    dt = _dt.promote_types(input.dtype, other.dtype)
    va, vb = input._vals.to(dt), other._vals.to(dt)
    if alpha != 1:
        vb = _mul(vb, alpha)
    ia, ib = input._idx, other._idx
    if ia is ib or (ia.shape == ib.shape and bool((ia == ib).all())):
        return SparseTensor._build(ia, _add(va, vb), input._size, input._coalesced)
    both = input._coalesced and other._coalesced
    out = SparseTensor._build(cat([ia, ib], 1), cat([va, vb]), input._size, False)
    return coalesce(out) if both else out


def sub(input: SparseTensor, other, *, alpha=1) -> SparseTensor:
    """``input - alpha * other`` for two sparse COO tensors of one size.

    >>> import ember
    >>> s = ember.sparse_coo_tensor([[1]], [1.0], (2,))
    >>> (s - s * 3).to_dense()
    tensor([ 0., -2.])
    """
    return add(input, other, alpha=-alpha)


def transpose(input: SparseTensor, dim0: int, dim1: int) -> SparseTensor:
    """The tensor with two sparse dims swapped (its indices' rows; uncoalesced, as in PyTorch).

    >>> import ember
    >>> ember.sparse_coo_tensor([[0], [2]], [1.0], (1, 3)).transpose(0, 1)._indices()
    tensor([[2],
            [0]])
    """
    n = input.ndim
    d0, d1 = wrap_dim(dim0, n, "transpose"), wrap_dim(dim1, n, "transpose")
    sd = input.sparse_dim()
    if d0 >= sd or d1 >= sd:
        raise ShapeError(
            f"transpose: only sparse dims of a sparse_coo tensor can be swapped here (size "
            f"{tuple(input.shape)}, sparse_dim {sd}), got dims {dim0} and {dim1}"
        )
    if d0 == d1:
        return input
    order = list(range(sd))
    order[d0], order[d1] = d1, d0
    size = list(input._size)
    size[d0], size[d1] = size[d1], size[d0]
    return SparseTensor._build(input._idx[order], input._vals, tuple(size), False)


def t(input: SparseTensor) -> SparseTensor:
    """The transpose of a sparse matrix (itself when it has fewer than 2 dims).

    >>> import ember
    >>> ember.sparse_coo_tensor([[0], [2]], [1.0], (1, 3)).t().shape
    ember.Size([3, 1])
    """
    if input.ndim > 2:
        raise ShapeError(
            f"t: expects a tensor with <= 2 dimensions, but the sparse_coo tensor has size "
            f"{tuple(input.shape)}"
        )
    return input if input.ndim < 2 else transpose(input, 0, 1)


__all__ = ["mul", "div", "neg", "add", "sub", "transpose", "t"]
