"""Sparse COO primitives: the arithmetic of ``ember.sparse`` on its (indices, values) pairs.

A sparse COO tensor is ``indices`` (int64, ``(sparse_dim, nnz)``) and ``values`` (``(nnz,
*dense)``); repeated indices add up. These ops take the two as ordinary tensors, so autograd,
``ember.compile`` and both devices see plain ops; the gradients reach the values (dense
tensors), never the indices. Every op's vjp is another op of this file:

- ``SparseToDense(shape)``: the dense tensor (a scatter-add of the values at their indices);
  its vjp is ``SparseGather``, and ``SparseGather``'s is ``SparseToDense``;
- ``SpMM(rows, transpose)``: sparse matrix @ dense matrix as a gather of the dense rows by
  column index, scaled by the values and scatter-added into the output rows (``transpose``:
  the sparse matrix's transpose); its gradients are ``SpMM`` (for the dense matrix) and
  ``SampledDot`` (for the values), and ``SampledDot``'s are ``SpMM`` again;
- ``SparseCooTensorWithDimsAndTensors``: the values of a new sparse tensor built from values
  with history (its node is the sparse tensor's ``grad_fn``, named as PyTorch names it).

>>> import ember
>>> from ember.ops.base import apply
>>> i, v = ember.tensor([[0, 1, 1], [1, 0, 0]]), ember.tensor([1.0, 2.0, 3.0])
>>> apply(SparseToDense((2, 2)), i, v)
tensor([[0., 1.],
        [5., 0.]])
>>> apply(SpMM(2), i, v, ember.ones(2, 3))
tensor([[1., 1., 1.],
        [5., 5., 5.]])
"""

from __future__ import annotations

from dataclasses import dataclass

from .._errors import DTypeError, ShapeError
from ..backend.arrays import scatter_add
from .base import Op, Spec, apply
from .linalg import matmul, transpose_last


def _check_coo(op: str, indices, values, sparse_dim: int | None = None) -> None:
    """``indices`` (sparse_dim, nnz) int64 and ``values`` (nnz, ...) agree, or an error."""
    si, sv = tuple(indices.shape), tuple(values.shape)
    if len(si) != 2 or not sv or si[1] != sv[0] or (sparse_dim is not None and si[0] != sparse_dim):
        raise ShapeError(
            f"{op}: indices of shape {si} and values of shape {sv} are not a COO pair "
            f"(indices (sparse_dim{'' if sparse_dim is None else '=' + str(sparse_dim)}, nnz), "
            "values (nnz, ...))"
        )
    if indices.dtype.name != "int64":
        raise DTypeError(f"{op}: indices must be int64, got {indices.dtype}")


@dataclass(frozen=True)
class SparseToDense(Op):
    """The dense tensor of ``shape`` holding ``values`` at ``indices`` (repeats add up).
    Inputs: ``indices, values``."""

    shape: tuple
    saves_inputs = "cross"

    def forward(self, xp, indices, values):
        out = xp.zeros(self.shape, values.dtype)
        scatter_add(out, tuple(indices), values)
        return out

    def infer(self, indices, values):
        _check_coo("to_dense", indices, values)
        want = (indices.shape[1],) + tuple(self.shape[indices.shape[0] :])
        if tuple(values.shape) != want or indices.shape[0] > len(self.shape):
            raise ShapeError(
                f"to_dense: values of shape {tuple(values.shape)} with {indices.shape[0]} sparse "
                f"dims do not fit size {self.shape} (expected values {want})"
            )
        return Spec(self.shape, values.dtype)

    def vjp(self, g, out, indices, values):
        return None, apply(SparseGather(), indices, g)


@dataclass(frozen=True)
class SparseGather(Op):
    """The entries of ``dense`` at ``indices``: ``(nnz, *dense dims)``. Inputs: ``indices,
    dense``."""

    saves_inputs = "cross"

    def forward(self, xp, indices, dense):
        return dense[tuple(indices)]

    def infer(self, indices, dense):
        si = tuple(indices.shape)
        if len(si) != 2 or si[0] > len(dense.shape):
            raise ShapeError(
                f"sparse_mask: indices of shape {si} do not index a tensor of shape "
                f"{tuple(dense.shape)}"
            )
        return Spec((si[1],) + tuple(dense.shape[si[0] :]), dense.dtype)

    def vjp(self, g, out, indices, dense):
        return None, apply(SparseToDense(tuple(dense.shape)), indices, g)


@dataclass(frozen=True)
class SpMM(Op):
    """``S @ dense`` for the 2-D sparse ``S`` given by ``indices, values`` with ``rows`` rows
    (``S.T @ dense`` when ``transpose``). Inputs: ``indices, values, dense`` and optionally a
    dense stand-in for ``S`` (``port``, never read) that receives ``S``'s gradient densely, as
    ``torch.mm`` gives a sparse leaf."""

    rows: int
    transpose: bool = False
    saves_inputs = "cross"

    def _pair(self, indices):
        return (indices[1], indices[0]) if self.transpose else (indices[0], indices[1])

    def forward(self, xp, indices, values, dense, port=None):
        rows, cols = self._pair(indices)
        out = xp.zeros((self.rows, dense.shape[1]), dense.dtype)
        scatter_add(out, (rows,), values[:, None] * dense[cols])
        return out

    def infer(self, indices, values, dense, port=None):
        _check_coo("sparse.mm", indices, values, 2)
        if len(values.shape) != 1 or len(dense.shape) != 2:
            raise ShapeError(
                f"sparse.mm: expected 1-D values and a 2-D dense matrix, got values "
                f"{tuple(values.shape)} and dense {tuple(dense.shape)}"
            )
        if values.dtype != dense.dtype:
            raise DTypeError(
                f"sparse.mm: values ({values.dtype}) and dense ({dense.dtype}) differ in dtype"
            )
        return Spec((self.rows, dense.shape[1]), dense.dtype)

    def vjp(self, g, out, indices, values, dense, port=None):
        gv = apply(SampledDot(self.transpose), indices, g, dense) if values._requires_grad else None
        gd = None
        if dense._requires_grad:
            gd = apply(SpMM(dense.shape[0], not self.transpose), indices, values, g)
        if port is None:
            return None, gv, gd
        gp = matmul(g, transpose_last(dense))
        return None, gv, gd, (transpose_last(gp) if self.transpose else gp)


@dataclass(frozen=True)
class SampledDot(Op):
    """Per stored entry ``e`` at ``(r, c)``: ``a[r] . b[c]`` (``(c, r)`` when ``transpose``),
    the values' gradient of ``SpMM``. Inputs: ``indices, a, b``."""

    transpose: bool = False
    saves_inputs = True

    def forward(self, xp, indices, a, b):
        rows, cols = (indices[1], indices[0]) if self.transpose else (indices[0], indices[1])
        return (a[rows] * b[cols]).sum(axis=1)

    def infer(self, indices, a, b):
        return Spec((indices.shape[1],), a.dtype)

    def vjp(self, g, out, indices, a, b):
        ga = apply(SpMM(a.shape[0], self.transpose), indices, g, b) if a._requires_grad else None
        gb = None
        if b._requires_grad:
            gb = apply(SpMM(b.shape[0], not self.transpose), indices, g, a)
        return None, ga, gb


@dataclass(frozen=True)
class SparseCooTensorWithDimsAndTensors(Op):
    """The values of a sparse tensor built from values with history: a view of them."""

    is_view = True

    def forward(self, xp, values):
        return values[...]

    def infer(self, values):
        return Spec(tuple(values.shape), values.dtype)

    def vjp(self, g, out, values):
        return (g,)


__all__ = [
    "SparseToDense",
    "SparseGather",
    "SpMM",
    "SampledDot",
    "SparseCooTensorWithDimsAndTensors",
]
