"""The sparse family's methods: those of ``SparseTensor`` (attached here, at import, once) and
those it gives dense tensors (``TENSOR_METHODS``: ``layout``, ``is_sparse``, ``to_sparse``,
``to_dense``), with the functions ``ember`` exports (``__all__``).

>>> import ember
>>> x = ember.tensor([[0.0, 1.0], [2.0, 0.0]])
>>> x.is_sparse, x.to_sparse().is_sparse, x.to_sparse().to_dense().equal(x)
(False, True, True)
"""

from __future__ import annotations

from .._tensor import Tensor
from .arithmetic import add, div, mul, neg, sub, t, transpose
from .conversion import CASTS, caster, clone, cpu, cuda, to
from .creation import coalesce, sparse_coo_tensor, to_dense, to_sparse
from .layout import strided
from .matmul import spmm
from .reduce import sum as _sum
from .tensor import SparseTensor


def to_sparse_coo(self: Tensor) -> SparseTensor:
    """``to_sparse()``: the sparse COO form (coalesced).

    >>> import ember
    >>> ember.eye(2).to_sparse_coo()._nnz()
    2
    """
    return to_sparse(self)


def _strided(self: Tensor):
    return strided


SPARSE_METHODS = {
    "coalesce": coalesce,
    "to_dense": to_dense,
    "to_sparse": to_sparse,
    "to_sparse_coo": to_sparse_coo,
    "sum": _sum,
    "mul": mul,
    "__mul__": mul,
    "__rmul__": mul,
    "__imul__": mul,
    "div": div,
    "__truediv__": div,
    "neg": neg,
    "__neg__": neg,
    "add": add,
    "__add__": add,
    "__iadd__": add,
    "sub": sub,
    "__sub__": sub,
    "t": t,
    "transpose": transpose,
    "to": to,
    "cpu": cpu,
    "cuda": cuda,
    "clone": clone,
    **{name: caster(dt) for name, dt in CASTS.items()},
}
for _name, _fn in SPARSE_METHODS.items():
    setattr(SparseTensor, _name, _fn)

__all__ = ["sparse_coo_tensor", "spmm"]
TENSOR_METHODS = {
    "is_sparse": False,
    "layout": property(_strided),
    "to_sparse": to_sparse,
    "to_sparse_coo": to_sparse_coo,
    "to_dense": to_dense,
}
