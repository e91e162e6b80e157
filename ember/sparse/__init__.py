"""``ember.sparse``: sparse COO tensors, as ``torch.sparse`` has them.

Build one with ``ember.sparse_coo_tensor(indices, values, size)`` or ``dense.to_sparse()``;
multiply it with a dense matrix with ``ember.sparse.mm`` (or ``ember.mm``, ``@``,
``ember.spmm``); ``ember.sparse.sum`` and ``ember.sparse.addmm`` as in PyTorch. Gradients reach
the dense operands and the sparse values. The tensor type is in ``tensor``, the primitives in
``ember/ops/sparse.py``.

>>> import ember
>>> adj = ember.sparse_coo_tensor([[0, 1, 1], [1, 0, 1]], [1.0, 1.0, 1.0], (2, 2))
>>> ember.sparse.mm(adj, ember.tensor([[1.0], [2.0]]))
tensor([[2.],
        [3.]])
"""

from __future__ import annotations

from . import methods  # noqa: F401  (attaches SparseTensor's methods)
from .matmul import addmm, mm
from .reduce import sum  # noqa: A004  (PyTorch's name: torch.sparse.sum)
from .tensor import SparseTensor, SparseUnsupportedError

__all__ = ["mm", "addmm", "sum", "SparseTensor", "SparseUnsupportedError"]
