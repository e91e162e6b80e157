"""The ``.grad`` of a sparse leaf, from where backward left it.

Gradients of a sparse leaf's values arrive per stored entry (repeats of one index get the same
gradient: every op reads the sum of the repeats). PyTorch gives them as a sparse tensor on the
leaf's coalesced pattern; ``ember.mm`` and friends leave a dense gradient on the leaf's dense
stand-in (``SparseTensor._grad_port``), as ``torch.mm`` does. Both present: their dense sum.

>>> import ember
>>> s = ember.sparse_coo_tensor([[0, 0, 1]], [1.0, 2.0, 3.0], (3,), requires_grad=True)
>>> (s.to_dense() * ember.tensor([1.0, 2.0, 3.0])).sum().backward()
>>> s.grad
tensor(indices=tensor([[0, 1]]),
       values=tensor([1., 2.]),
       size=(3,), nnz=2, layout=ember.sparse_coo)
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops.base import apply
from ..ops.sparse import SparseToDense
from .creation import unique_pattern
from .tensor import SparseTensor


def leaf_grad(s: SparseTensor) -> Tensor | None:
    """The gradient of the sparse leaf ``s`` (sparse, dense, or None before any backward)."""
    per_entry = s._vals._grad
    dense = s._port._grad if s._port is not None else None
    if per_entry is None:
        return dense
    indices, inverse = unique_pattern(s._idx, s._size)
    n = indices.shape[1]
    rows = inverse.reshape(1, -1)
    tail = s._size[s.sparse_dim() :]
    sums = apply(SparseToDense((n,) + tail), rows, per_entry.detach())
    counts = apply(SparseToDense((n,)), rows, per_entry.new_ones(per_entry.shape[0]))
    values = sums / counts.reshape((n,) + (1,) * len(tail))
    sparse = SparseTensor._build(indices, values, s._size, False)
    return sparse if dense is None else dense + sparse.to_dense()


__all__ = ["leaf_grad"]
