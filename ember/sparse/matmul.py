"""Sparse @ dense products: ``ember.sparse.mm``, ``ember.sparse.addmm``, ``ember.spmm``, and
``ember.mm`` / ``ember.matmul`` / ``@`` with a sparse operand (``ember.functions.linalg``
hands those here).

The product is the ``SpMM`` op on the sparse operand's indices and values. A dense @ sparse
product is the transposed one: ``(S.T @ D.T).T``. The gradient of a sparse leaf follows
PyTorch: on its sparsity pattern through ``ember.sparse.mm``, dense through ``mm``, ``matmul``,
``@`` and ``spmm``.

>>> import ember
>>> s = ember.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
>>> ember.sparse.mm(s, ember.ones(2, 1))
tensor([[2.],
        [3.]])
>>> ember.ones(1, 2) @ s
tensor([[3., 2.]])
"""

from __future__ import annotations

from .._errors import DTypeError, ShapeError
from .._tensor import Tensor
from ..functions.elementwise import add, mul
from ..ops.base import apply
from ..ops.linalg import transpose_last
from ..ops.sparse import SpMM


def _describe(t: Tensor) -> str:
    return f"{tuple(t.shape)} (sparse_coo)" if t.is_sparse else f"{tuple(t.shape)}"


def product(a: Tensor, b: Tensor, name: str, dense_grad: bool) -> Tensor:
    """``a @ b`` with one sparse COO operand (2-D, no dense dims) and one dense (2-D, or 1-D
    for ``matmul``); ``dense_grad``: a sparse leaf's gradient is dense (``torch.mm``)."""
    shapes = f"{_describe(a)} and {_describe(b)}"
    if a.is_sparse and b.is_sparse:
        raise ShapeError(
            f"{name}: sparse @ sparse is not supported (shapes {shapes}); convert one with "
            ".to_dense()"
        )
    s, d = (a, b) if a.is_sparse else (b, a)
    if s.ndim != 2 or s.dense_dim():
        raise ShapeError(
            f"{name}: the sparse operand must be a 2-D matrix without dense dims, got size "
            f"{tuple(s.shape)} with sparse_dim {s.sparse_dim()} (shapes {shapes})"
        )
    if d.ndim != 2 and (name != "matmul" or d.ndim != 1):
        want = "1-D or 2-D" if name == "matmul" else "2-D"
        raise ShapeError(f"{name}: the dense operand must be {want}, got shapes {shapes}")
    inner = (a.shape[-1], b.shape[0])
    if inner[0] != inner[1]:
        raise ShapeError(f"{name}: shapes {shapes} cannot be multiplied ({inner[0]} != {inner[1]})")
    if s.dtype is not d.dtype:
        raise DTypeError(
            f"{name}: expected the sparse and dense operands to have the same dtype, got "
            f"{s.dtype} (sparse_coo) and {d.dtype} (shapes {shapes})"
        )
    vector = d.ndim == 1
    transpose = s is b  # dense @ sparse == (sparse.T @ dense.T).T
    d2 = d.reshape(-1, 1) if vector else transpose_last(d) if transpose else d
    rows = s.shape[1] if transpose else s.shape[0]
    inputs = [s._idx, s._vals, d2]
    if dense_grad and s.is_leaf and s.requires_grad:
        inputs = [s._idx, s._vals.detach(), d2, s._grad_port()]
    out = apply(SpMM(rows, transpose), *inputs)
    if vector:
        return out.reshape(-1)
    return transpose_last(out) if transpose else out


def mm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """``mat1 @ mat2`` for a sparse COO ``mat1`` and a dense ``mat2`` (either may be the sparse
    one); a sparse leaf's gradient is sparse, on its own pattern, as in PyTorch.

    >>> import ember
    >>> s = ember.sparse_coo_tensor([[0, 0], [0, 1]], [1.0, 2.0], (1, 2), requires_grad=True)
    >>> ember.sparse.mm(s, ember.ones(2, 3)).sum().backward()
    >>> s.grad._values()
    tensor([3., 3.])
    """
    return product(mat1, mat2, "sparse.mm", dense_grad=False)


def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """``input @ mat2`` for a sparse COO ``input`` (``torch.spmm``: ``mm``'s gradients).

    >>> import ember
    >>> ember.spmm(ember.eye(2).to_sparse(), ember.ones(2, 1))
    tensor([[1.],
            [1.]])
    """
    return product(input, mat2, "spmm", dense_grad=True)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1.0, alpha=1.0) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` for a sparse COO ``mat1`` and dense ``input``
    and ``mat2`` (``input`` is ignored when ``beta`` is 0).

    >>> import ember
    >>> ember.sparse.addmm(ember.ones(2, 1), ember.eye(2).to_sparse(), ember.ones(2, 1), beta=2)
    tensor([[3.],
            [3.]])
    """
    if input.is_sparse:
        raise ShapeError(
            f"sparse.addmm: input must be dense, got a sparse_coo tensor of size "
            f"{tuple(input.shape)}"
        )
    out = product(mat1, mat2, "sparse.addmm", dense_grad=False)
    if alpha != 1:
        out = mul(out, alpha)
    if beta == 0:
        return out
    return add(mul(input, beta) if beta != 1 else input, out)


__all__ = ["mm", "spmm", "addmm", "product"]
