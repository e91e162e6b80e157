"""Dense linear-algebra primitives for ``ember.linalg``: inverse, solve, log|det|, Cholesky,
symmetric eigendecomposition and singular values, each with its vector-Jacobian product in
ember ops (so second order works too). They act on the last two dims, batched.

On the CPU (NumPy) bfloat16 / float16 are computed in float32 and cast back.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(Inv(), ember.eye(2) * 2)
tensor([[0.5000, 0.0000],
        [0.0000, 0.5000]])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Op, Spec, apply
from .elementwise import const_like, where
from .linalg import matmul, transpose_last


def _work(a):
    return a if a.dtype in (np.float32, np.float64) else a.astype(np.float32)


def _mT(x):  # noqa: N802
    return transpose_last(x)


@dataclass(frozen=True)
class Inv(Op):
    """The inverse of square matrices."""

    saves_output = True

    def forward(self, xp, a):
        return xp.linalg.inv(_work(a)).astype(a.dtype, copy=False)

    def infer(self, a):
        return Spec(tuple(a.shape), a.dtype)

    def vjp(self, g, out, a):
        t = _mT(out)
        return (-matmul(matmul(t, g), t),)


@dataclass(frozen=True)
class Solve(Op):
    """X with ``A X = B`` for square A and matrix B (batched, broadcast batch dims)."""

    saves_inputs = True
    saves_output = True

    def forward(self, xp, a, b):
        return xp.linalg.solve(_work(a), _work(b)).astype(b.dtype, copy=False)

    def infer(self, a, b):
        from .._shape import broadcast_shapes

        batch = broadcast_shapes("solve", tuple(a.shape[:-2]), tuple(b.shape[:-2]))
        return Spec(tuple(batch) + tuple(b.shape[-2:]), b.dtype)

    def vjp(self, g, out, a, b):
        from .broadcast import sum_to

        gb = apply(Solve(), _mT(a), g)
        ga = -matmul(gb, _mT(out)) if a._requires_grad else None
        return (
            sum_to(ga, tuple(a.shape)) if ga is not None else None,
            sum_to(gb, tuple(b.shape)) if b._requires_grad else None,
        )


@dataclass(frozen=True)
class LogAbsDet(Op):
    """log |det A|."""

    saves_inputs = True

    def forward(self, xp, a):
        _, logabs = xp.linalg.slogdet(_work(a))
        return xp.asarray(logabs).astype(a.dtype, copy=False)

    def infer(self, a):
        return Spec(tuple(a.shape[:-2]), a.dtype)

    def vjp(self, g, out, a):
        from .movement import reshape

        gg = reshape(g, tuple(g.shape) + (1, 1))
        return (gg * _mT(apply(Inv(), a)),)


@dataclass(frozen=True)
class Cholesky(Op):
    """The lower-triangular L with ``A = L L^T`` (symmetric positive-definite A)."""

    saves_output = True

    def forward(self, xp, a):
        return xp.linalg.cholesky(_work(a)).astype(a.dtype, copy=False)

    def infer(self, a):
        return Spec(tuple(a.shape), a.dtype)

    def vjp(self, g, out, a):
        # Murray (2016): P = Phi(L^T gL), S = L^-T P L^-1, gA = (S + S^T) / 2, where Phi keeps
        # the lower triangle and halves the diagonal.
        p = matmul(_mT(out), g)
        n = p.shape[-1]
        lower = const_like(p, np.tril(np.ones((n, n), dtype=bool)), bool)
        p = where(lower, p * const_like(p, 1 - 0.5 * np.eye(n)), const_like(p, 0))
        inv_l = apply(Inv(), out)
        s = matmul(matmul(_mT(inv_l), p), inv_l)
        return (0.5 * (s + _mT(s)),)


def _eye_like(x):
    """The identity matrix of ``x``'s last dimension, a constant with ``x``'s dtype and device."""
    return const_like(x, np.eye(x.shape[-1]))


@dataclass(frozen=True)
class EighValues(Op):
    """Eigenvalues (ascending) of symmetric matrices; see ``EighVectors``."""

    saves_inputs = True

    def forward(self, xp, a):
        return xp.linalg.eigh(_work(a))[0].astype(a.dtype, copy=False)

    def infer(self, a):
        return Spec(tuple(a.shape[:-1]), a.dtype)

    def vjp(self, g, out, a):
        v = apply(EighVectors(), a)
        return (matmul(v * g.unsqueeze(-2), _mT(v)),)


@dataclass(frozen=True)
class EighVectors(Op):
    """Orthonormal eigenvectors (columns) of symmetric matrices, in ``EighValues``' order.

    Gradient: ``V (F * (V^T gV)) V^T`` symmetrized, with ``F_ij = 1 / (w_j - w_i)`` off the
    diagonal (undefined for repeated eigenvalues, as in PyTorch)."""

    saves_inputs = True
    saves_output = True

    def forward(self, xp, a):
        return xp.linalg.eigh(_work(a))[1].astype(a.dtype, copy=False)

    def infer(self, a):
        return Spec(tuple(a.shape), a.dtype)

    def vjp(self, g, out, a):
        w = apply(EighValues(), a)
        gap = w.unsqueeze(-2) - w.unsqueeze(-1)  # [i, j] = w_j - w_i
        eye = _eye_like(gap)
        f = (1 - eye) / (gap + eye)
        inner = f * matmul(_mT(out), g)
        ga = matmul(matmul(out, inner), _mT(out))
        return (0.5 * (ga + _mT(ga)),)


@dataclass(frozen=True)
class SingularValues(Op):
    """Singular values (descending); gradient ``U diag(gS) V^T``."""

    saves_inputs = True

    def forward(self, xp, a):
        return xp.linalg.svd(_work(a), compute_uv=False).astype(a.dtype, copy=False)

    def infer(self, a):
        return Spec(tuple(a.shape[:-2]) + (min(a.shape[-2:]),), a.dtype)

    def vjp(self, g, out, a):
        u, vh = apply(SvdU(), a), apply(SvdVh(), a)
        return (matmul(u * g.unsqueeze(-2), vh),)


@dataclass(frozen=True)
class SvdU(Op):
    """The left singular vectors of the reduced SVD (no gradient: see ``linalg.svd``)."""

    differentiable = False

    def forward(self, xp, a):
        return xp.linalg.svd(_work(a), full_matrices=False)[0].astype(a.dtype, copy=False)

    def infer(self, a):
        k = min(a.shape[-2:])
        return Spec(tuple(a.shape[:-1]) + (k,), a.dtype)


@dataclass(frozen=True)
class SvdVh(Op):
    """The right singular vectors (rows) of the reduced SVD (no gradient)."""

    differentiable = False

    def forward(self, xp, a):
        return xp.linalg.svd(_work(a), full_matrices=False)[2].astype(a.dtype, copy=False)

    def infer(self, a):
        k = min(a.shape[-2:])
        return Spec(tuple(a.shape[:-2]) + (k, a.shape[-1]), a.dtype)
