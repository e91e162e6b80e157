"""Making sparse COO tensors: ``sparse_coo_tensor``, ``dense.to_sparse()``, ``coalesce()`` and
``to_dense()``.

Indices become int64 on the values' device; the index checks run as ``CheckRange`` ops (at once
on the CPU, at the next read on a GPU, on every run of a graph), always, where PyTorch checks
only with ``check_invariants=True`` and otherwise computes on memory outside the tensor.

>>> import ember
>>> s = ember.sparse_coo_tensor([[0, 1, 0], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
>>> s.coalesce()
tensor(indices=tensor([[0, 1],
                       [2, 0]]),
       values=tensor([8., 4.]),
       size=(2, 3), nnz=2, layout=ember.sparse_coo)
>>> s.to_dense()
tensor([[0., 0., 8.],
        [4., 0., 0.]])
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from .._errors import DTypeError, EmberError, EmberIndexError, ShapeError
from .._tensor import Tensor, _shape_of
from ..backend import Device
from ..functions.creation import tensor
from ..functions.searching import nonzero, unique
from ..ops.base import apply
from ..ops.checks import CheckRange
from ..ops.sparse import SparseGather, SparseToDense
from .layout import sparse_coo
from .tensor import SparseTensor

_INT64_MAX = int(np.iinfo(np.int64).max)


def sparse_coo_tensor(
    indices,
    values,
    size=None,
    *,
    dtype=None,
    device=None,
    requires_grad: bool = False,
    check_invariants: bool | None = None,
    is_coalesced: bool | None = None,
) -> SparseTensor:
    """A sparse COO tensor with ``values`` (``(nnz, *dense dims)``) at ``indices`` (integers,
    ``(sparse_dim, nnz)``); repeated indices add up. Without ``size``, each sparse size is its
    largest index + 1 and the dense sizes are the values'.

    >>> import ember
    >>> ember.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0]).to_dense()
    tensor([[0., 1.],
            [2., 0.]])
    >>> ember.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (2,))
    Traceback (most recent call last):
    ember._errors.EmberIndexError: sparse_coo_tensor: size is inconsistent with indices: ...
    """
    name = "sparse_coo_tensor"
    if not isinstance(values, Tensor):
        values = tensor(values, dtype=dtype, device=device)
    dev = Device(device) if device is not None else values.device
    values = values.to(dev, dtype) if dtype is not None else values.to(dev)
    if not isinstance(indices, Tensor):
        indices = tensor(indices, device=dev)
    if indices.dtype.is_floating_point or indices.dtype is _dt.bool_:
        raise DTypeError(f"{name}: indices must be an integer tensor, got {indices.dtype}")
    indices = indices.to(dev, _dt.int64)
    if indices.ndim != 2:
        raise ShapeError(
            f"{name}: indices must be sparse_dim x nnz, but got: {list(indices.shape)}"
        )
    sparse_dim, nnz = indices.shape
    if values.ndim == 0 or values.shape[0] != nnz:
        raise ShapeError(
            f"{name}: indices and values must have same nnz, but got nnz from indices: {nnz}, "
            f"nnz from values: {values.shape[0] if values.ndim else 'none (0-d values)'}"
        )
    dense = tuple(values.shape[1:])
    if size is None:
        size = _inferred_size(indices, name) + dense
    else:
        size = _shape_of(tuple(size), name)
        _check_size(indices, dense, size, name)
    coalesced = nnz <= 1 if is_coalesced is None else bool(is_coalesced)
    return SparseTensor._build(indices, values, size, coalesced, requires_grad, alias=True)


def _inferred_size(indices: Tensor, name: str) -> tuple:
    """Each sparse dim's largest index + 1 (0 without entries), refusing negative indices."""
    host = indices.numpy(force=True)
    if host.size and host.min() < 0:
        d = int(np.argwhere(host < 0)[0][0])
        raise EmberIndexError(f"{name}: found negative index {host[d].min()} for dim {d}")
    return tuple(int(row.max()) + 1 if row.size else 0 for row in host)


def _check_size(indices: Tensor, dense: tuple, size: tuple, name: str) -> None:
    sparse_dim = indices.shape[0]
    if len(size) != sparse_dim + len(dense):
        raise ShapeError(
            f"{name}: 'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = "
            f"{len(size)}, sparse_dim = {sparse_dim}, dense_dim = {len(dense)}"
        )
    if tuple(size[sparse_dim:]) != dense:
        raise ShapeError(
            f"{name}: values has incorrect size, expected {[indices.shape[1], *size[sparse_dim:]]}"
            f", got {[indices.shape[1], *dense]}"
        )
    for d in range(sparse_dim):
        row = indices[d]
        negative = f"{name}: found negative index {{value}} for dim {d}"
        apply(CheckRange(negative, 0, _INT64_MAX), row)
        beyond = (
            f"{name}: size is inconsistent with indices: for dim {d}, size is {size[d]} but "
            "found index {value}"
        )
        apply(CheckRange(beyond, -_INT64_MAX, size[d]), row)


def coalesce(self: SparseTensor) -> SparseTensor:
    """The same tensor with sorted, unique indices (values at repeated indices summed).

    >>> import ember
    >>> ember.sparse_coo_tensor([[1, 0, 1]], [1.0, 2.0, 3.0]).coalesce()._values()
    tensor([2., 4.])
    """
    if self._coalesced:
        return self
    indices, inverse = unique_pattern(self._idx, self._size)
    n = indices.shape[1]
    rows = inverse.reshape(1, -1)
    values = apply(SparseToDense((n,) + self._size[self.sparse_dim() :]), rows, self._vals)
    return SparseTensor._build(indices, values, self._size, True)


def unique_pattern(indices: Tensor, size: tuple) -> tuple[Tensor, Tensor]:
    """The sorted distinct columns of ``indices`` and where each column went (the inverse)."""
    sparse_dim = indices.shape[0]
    strides = [1] * sparse_dim
    for d in range(sparse_dim - 2, -1, -1):
        strides[d] = strides[d + 1] * size[d + 1]
    strides_t = tensor(strides, dtype=_dt.int64, device=indices.device).reshape(-1, 1)
    keys, inverse = unique((indices * strides_t).sum(0), return_inverse=True)
    sizes_t = tensor(list(size[:sparse_dim]), dtype=_dt.int64, device=indices.device)
    return (keys.reshape(1, -1) // strides_t) % sizes_t.reshape(-1, 1), inverse


def to_dense(self: Tensor, dtype=None, *, masked_grad=None) -> Tensor:
    """The dense tensor (repeated indices add up); a dense tensor returns itself.

    >>> import ember
    >>> ember.sparse_coo_tensor([[0, 0]], [1.0, 2.0], (2,)).to_dense()
    tensor([3., 0.])
    """
    if not self.is_sparse:
        return self if dtype is None else self.to(dtype)
    out = apply(SparseToDense(self._size), self._idx, self._vals)
    return out if dtype is None else out.to(dtype)


def to_sparse(self: Tensor, sparse_dim: int | None = None, *, layout=None) -> SparseTensor:
    """The sparse COO form of a dense tensor (coalesced): an entry for each non-zero element,
    or with ``sparse_dim``, for each non-zero slice over the leading ``sparse_dim`` dims.

    >>> import ember
    >>> ember.tensor([[0.0, 1.5], [2.0, 0.0]]).to_sparse()._values()
    tensor([1.5000, 2.0000])
    """
    if layout is not None and layout is not sparse_coo:
        raise EmberError(f"to_sparse: only layout=ember.sparse_coo is supported, got {layout}")
    if self.is_sparse:
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise ShapeError(
                f"to_sparse: the tensor has sparse_dim {self.sparse_dim()}; changing it to "
                f"{sparse_dim} is not supported"
            )
        return self
    n = self.ndim if sparse_dim is None else sparse_dim
    if not 1 <= n <= self.ndim:
        raise ShapeError(
            f"to_sparse: sparse_dim must be in [1, {self.ndim}] for a tensor of shape "
            f"{tuple(self.shape)}, got {sparse_dim}"
        )
    mask = self != 0
    if n < self.ndim:
        mask = mask.reshape(tuple(self.shape[:n]) + (-1,)).any(-1)
    indices = nonzero(mask).t().contiguous()
    values = apply(SparseGather(), indices, self)
    return SparseTensor._build(indices, values, tuple(self.shape), True)


__all__ = ["sparse_coo_tensor"]
