"""Linear-algebra primitives: matrix products (``MatMul``) and Einstein sums (``Einsum``).

mm, bmm, dot, outer and addmm are composites over these (in ``ember.functions.linalg``).

>>> import ember
>>> from ember.ops.base import apply
>>> apply(MATMUL, ember.ones(2, 3), ember.ones(3, 4)).shape
ember.Size([2, 4])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import dtypes as _dt
from .._errors import ShapeError
from .._shape import broadcast_shapes
from .._tensor import Tensor
from ..backend import blas as _blas
from ..backend.kernels import matmul as _gpu
from ..backend.overrides import register
from .base import Op, Spec, apply
from .broadcast import expand, sum_to
from .movement import Permute, reshape

_BF16 = np.dtype(_dt.bfloat16.np)


# (a.ndim, b.ndim capped at 3) -> PyTorch's grad_fn name for a @ b; others: UnsafeViewBackward0
_MATMUL_NAMES = {
    (2, 2): "MmBackward0",
    (1, 1): "DotBackward0",
    (2, 1): "MvBackward0",
    (1, 2): "SqueezeBackward4",
    (2, 3): "CloneBackward0",
}


@dataclass(frozen=True)
class MatMul(Op):
    """``a @ b`` with NumPy/PyTorch semantics: a 1-D ``a`` is a row (``b``: a column) that is
    dropped from the result again; leading (batch) dimensions broadcast."""

    saves_inputs = True

    def node_name(self, a, b) -> str:  # the ATen op PyTorch's matmul becomes for these ranks
        return _MATMUL_NAMES.get((a.ndim, min(b.ndim, 3)), "UnsafeViewBackward0")

    def forward(self, xp, a, b):
        if a.ndim >= 2 and b.ndim >= 2 and a.shape[-1] == 1:
            return a * b  # an outer product, exact: BLAS adds it to +0.0, losing -0.0 (PyTorch's)
        out = xp.matmul(a, b)
        return out if out.dtype == a.dtype else out.astype(a.dtype)  # ml_dtypes' bf16 -> f32

    def infer(self, a, b):
        sa, sb = tuple(a.shape), tuple(b.shape)
        return Spec(matmul_shape("matmul", sa, sb), a.dtype)

    def vjp(self, g, out, a, b):
        sa, sb = tuple(a.shape), tuple(b.shape)
        need_a, need_b = a._requires_grad, b._requires_grad
        if len(sa) == 2 and len(sb) == 2:  # the common case, kept cheap
            gb = None
            if need_b:  # in b's layout: a weight's .t() (F.linear) gets a gradient whose
                # transpose is contiguous, which its leaf then takes over without a copy
                if _column_major(b):
                    gb = transpose_last(matmul(transpose_last(g), a))
                else:
                    gb = matmul(transpose_last(a), g)
            return (matmul(g, transpose_last(b)) if need_a else None), gb
        # Lift 1-D operands to matrices (a row for ``a``, a column for ``b``) and the gradient
        # to the lifted product's shape; then it is the batched matrix case, whose broadcast
        # batch dims ``sum_to`` folds back; finally drop the lifted dims again.
        a2 = reshape(a, (1,) + sa) if len(sa) == 1 else a
        b2 = reshape(b, sb + (1,)) if len(sb) == 1 else b
        sa2, sb2 = tuple(a2.shape), tuple(b2.shape)
        batch = broadcast_shapes("matmul", sa2[:-2], sb2[:-2])
        g2 = reshape(g, batch + (sa2[-2], sb2[-1]))
        ga = gb = None
        if need_a:
            ga = reshape(sum_to(matmul(g2, transpose_last(b2)), sa2), sa)
        if need_b:
            if (
                len(sb2) == 2 and len(sa2) > 2 and sb2[0]
            ):  # batched @ matrix: one GEMM over all rows (in b's layout, as the 2-D case)
                k, n = sb2
                rows = _numel(sa2) // k
                a_rows, g_rows = reshape(a2, (rows, k)), reshape(g2, (rows, n))
                if _column_major(b2):
                    gb = transpose_last(matmul(transpose_last(g_rows), a_rows))
                else:
                    gb = matmul(transpose_last(a_rows), g_rows)
            else:
                gb = sum_to(matmul(transpose_last(a2), g2), sb2)
            if tuple(gb.shape) != sb:  # (a lifted 1-D b; a view would keep its grad a copy)
                gb = reshape(gb, sb)
        return ga, gb


@register(MatMul, "cuda")
def _matmul_cuda(op, xp, a, b):
    """cuBLAS with ember's TF32 setting, N-D @ 2-D folded into one GEMM, bfloat16 batches
    served (``ember.backend.kernels.matmul``)."""
    return _gpu.matmul(xp, a, b)


@register(MatMul, "cpu")
def _matmul_cpu(op, xp, a, b):
    """Large float32/float64 products split over numba's threads, one BLAS thread each
    (``ember.backend.blas``), and bfloat16 products through float32 BLAS; NotImplemented (the
    body) where that is off or for outer products."""
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] == 1 or a.dtype != b.dtype:
        return NotImplemented
    if a.dtype not in _blas.FLOATS:  # bfloat16: NumPy's product has no BLAS loop, float32's has
        return _blas.matmul(a, b).astype(_BF16) if a.dtype == _BF16 else NotImplemented
    if a.size * b.shape[-1] < _blas.MIN_SPLIT_WORK or not _blas.active():
        return NotImplemented  # small: the body, without more checks
    return _blas.matmul(a, b)


def _column_major(t) -> bool:
    """Whether ``t``'s array is a transposed contiguous matrix (not also a row-major one)."""
    flags = getattr(t._data, "flags", None)
    return flags is not None and flags.f_contiguous and not flags.c_contiguous


def _numel(shape: tuple) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def matmul_shape(op: str, sa: tuple, sb: tuple) -> tuple:
    """The shape of ``a @ b``, or a ShapeError naming ``op`` and both shapes."""
    if not sa or not sb:
        raise ShapeError(f"{op}: both arguments need at least 1 dimension, got {sa} and {sb}")
    k1 = sa[-1]
    k2 = sb[-2] if len(sb) > 1 else sb[0]
    if k1 != k2:
        raise ShapeError(f"{op}: shapes {sa} and {sb} cannot be multiplied ({k1} != {k2})")
    try:
        batch = broadcast_shapes(op, sa[:-2], sb[:-2])
    except ShapeError:
        raise ShapeError(
            f"{op}: shapes {sa} and {sb} cannot be multiplied: batch dimensions {sa[:-2]} and "
            f"{sb[:-2]} do not broadcast"
        ) from None
    rows = sa[-2:-1] if len(sa) > 1 else ()
    cols = sb[-1:] if len(sb) > 1 else ()
    return batch + rows + cols


def matmul(a, b):
    return apply(MATMUL, a, b)


def transpose_last(x):
    n = x.ndim
    return apply(Permute(tuple(range(n - 2)) + (n - 1, n - 2)), x)


MATMUL = MatMul()


# -- einsum -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Einsum(Op):
    """``numpy.einsum`` on an explicit equation such as ``"ij,jk->ik"`` (no ``...``, no
    implicit output: ``ember.einsum`` normalizes PyTorch's equations to this form and
    broadcasts operands first, so every letter has one size).

    The gradient of operand ``i`` is itself an Einsum: contract the output gradient with the
    other operands onto ``i``'s letters. Two cases need more than that, both handled inside
    this one rule rather than by extra primitives: letters that only operand ``i`` has (summed
    away: their gradient is broadcast back with ``expand``) and letters repeated within operand
    ``i`` (a diagonal: the gradient is placed on it by contracting with identity matrices,
    ``"i,ij->ij"``). Every step is an ember op, so higher orders work. We keep one einsum
    primitive instead of lowering to permute/reshape/matmul because NumPy's ``optimize`` path
    already does that lowering (to BLAS) in C, and the gradient stays one short rule.
    """

    equation: str
    saves_inputs = True

    def forward(self, xp, *arrays):
        if arrays[0].dtype == _BF16:  # NumPy's einsum refuses ml_dtypes' bfloat16
            f32 = [a.astype(np.float32) for a in arrays]
            return xp.einsum(self.equation, *f32, optimize=len(arrays) > 1).astype(_BF16)
        out = xp.einsum(self.equation, *arrays, optimize=len(arrays) > 1)
        if len(arrays) == 1 and xp.may_share_memory(out, arrays[0]):
            out = out.copy()  # NumPy returns views for transposes/diagonals; an op's output
        return out  # must not alias its input unless the op says is_view

    def infer(self, *specs):
        ins, out = parse_explicit(self.equation)
        sizes = letter_sizes("einsum", ins, [tuple(s.shape) for s in specs])
        return Spec(tuple(sizes[c] for c in out), specs[0].dtype)

    def vjp(self, g, out, *operands):
        ins, out_subs = parse_explicit(self.equation)
        sizes = letter_sizes("einsum", ins, [tuple(t.shape) for t in operands])
        used = set("".join(ins))
        grads = []
        for i, t in enumerate(operands):
            if not t._requires_grad:
                grads.append(None)
                continue
            grads.append(_einsum_grad(i, ins, out_subs, operands, g, sizes, used))
        return tuple(grads)


def _einsum_grad(i, ins, out_subs, operands, g, sizes, used):
    subs = ins[i]
    unique = "".join(dict.fromkeys(subs))
    terms = [s for j, s in enumerate(ins) if j != i] + [out_subs]
    tensors = [t for j, t in enumerate(operands) if j != i] + [g]
    available = set("".join(terms))
    kept = "".join(c for c in unique if c in available)
    grad = einsum(",".join(terms) + "->" + kept, *tensors)
    if kept != unique:  # letters only this operand has were summed away: broadcast back
        grad = reshape(grad, tuple(sizes[c] if c in available else 1 for c in unique))
        grad = expand(grad, tuple(sizes[c] for c in unique))
    if unique != subs:  # repeated letters: put the gradient on the diagonal
        free = iter(c for c in _LETTERS if c not in used)
        renamed, eyes, seen = [], [], set()
        for c in subs:
            if c in seen:
                fresh = next(free)
                renamed.append(fresh)
                eyes.append(c + fresh)
            else:
                seen.add(c)
                renamed.append(c)
        xp = g.device.xp
        consts = [Tensor._make(xp.eye(sizes[e[0]], dtype=g.dtype.np)) for e in eyes]
        grad = einsum(",".join([unique] + eyes) + "->" + "".join(renamed), grad, *consts)
    return grad


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def einsum(equation: str, *tensors):
    """An explicit-form ``Einsum`` (a plain view-free copy when it is the identity)."""
    return apply(Einsum(equation), *tensors)


def parse_explicit(equation: str) -> tuple[list, str]:
    lhs, out = equation.split("->")
    return lhs.split(","), out


def letter_sizes(op: str, ins: list, shapes: list) -> dict:
    """Each letter's size, checking that every operand agrees."""
    sizes: dict = {}
    for k, (subs, shape) in enumerate(zip(ins, shapes)):
        if len(subs) != len(shape):
            raise ShapeError(
                f"{op}: the number of subscripts in the equation ({len(subs)}) does not match "
                f"the number of dimensions ({len(shape)}) for operand {k} of shape {shape}"
            )
        for c, s in zip(subs, shape):
            if sizes.setdefault(c, s) != s:
                raise ShapeError(
                    f"{op}: subscript {c} has size {s} for operand {k} of shape {shape}, which "
                    f"does not match the previously seen size {sizes[c]}"
                )
    return sizes
