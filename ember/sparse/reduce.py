"""Reductions of sparse COO tensors: ``ember.sparse.sum``.

>>> import ember
>>> s = ember.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [1.0, 2.0, 3.0], (2, 3))
>>> ember.sparse.sum(s)
tensor(6.)
>>> ember.sparse.sum(s, 1)
tensor(indices=tensor([[0, 1]]),
       values=tensor([1., 5.]),
       size=(2,), nnz=2, layout=ember.sparse_coo)
"""

from __future__ import annotations

from .._errors import ShapeError
from .._shape import wrap_dim
from .._tensor import Tensor
from .creation import coalesce
from .tensor import SparseTensor


def sum(input: Tensor, dim=None, dtype=None) -> Tensor:  # noqa: A001  (PyTorch's name)
    """The sum of all entries (a dense 0-d tensor), or over ``dim`` (an int or a tuple): a
    sparse tensor (coalesced) while some sparse dims remain, else dense.

    >>> import ember
    >>> ember.sparse.sum(ember.eye(2).to_sparse(), (0, 1))
    tensor(2.)
    """
    if not input.is_sparse:
        return input.sum() if dim is None else input.sum(dim)
    values = input._vals if dtype is None else input._vals.to(dtype)
    if dim is None:
        return values.sum()
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    dims = [wrap_dim(d, input.ndim, "sparse.sum") for d in dims]
    for d in dims:
        if dims.count(d) > 1:
            raise ShapeError(f"sparse.sum: dim {d} appears multiple times in the list of dims")
    sd = input.sparse_dim()
    dense_axes = tuple(d - sd + 1 for d in dims if d >= sd)
    if dense_axes:
        values = values.sum(dense_axes)
    keep = [d for d in range(sd) if d not in dims]
    size = tuple(input._size[d] for d in range(input.ndim) if d not in dims)
    if not keep:
        return values.sum(0)
    indices = input._idx if len(keep) == sd else input._idx[keep]
    return coalesce(
        SparseTensor._build(indices, values, size, input._coalesced and len(keep) == sd)
    )


__all__ = ["sum"]
