"""Linear-algebra primitives: matrix products.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(MATMUL, ember.ones(2, 3), ember.ones(3, 4)).shape
ember.Size([2, 4])
"""

from __future__ import annotations

from dataclasses import dataclass

from .._errors import ShapeError
from .._shape import broadcast_shapes
from .base import Op, Spec, apply
from .broadcast import sum_to


@dataclass(frozen=True)
class MatMul(Op):
    """``a @ b`` with NumPy/PyTorch semantics: 1-D operands are promoted and squeezed back,
    leading (batch) dimensions broadcast."""

    saves_inputs = True

    def forward(self, xp, a, b):
        return xp.matmul(a, b)

    def infer(self, a, b):
        sa, sb = tuple(a.shape), tuple(b.shape)
        if not sa or not sb:
            raise ShapeError(f"matmul: both arguments need at least 1 dimension, got {sa} and {sb}")
        k1 = sa[-1]
        k2 = sb[-2] if len(sb) > 1 else sb[0]
        if k1 != k2:
            raise ShapeError(
                f"matmul: shapes {sa} and {sb} cannot be multiplied ({k1} != {k2})"
            )
        batch = broadcast_shapes("matmul", sa[:-2], sb[:-2])
        rows = sa[-2:-1] if len(sa) > 1 else ()
        cols = sb[-1:] if len(sb) > 1 else ()
        return Spec(batch + rows + cols, a.dtype)

    def vjp(self, g, out, a, b):
        a_shape, b_shape = tuple(a.shape), tuple(b.shape)
        if len(a_shape) == 2 and len(b_shape) == 2:  # the common case, kept cheap
            return (
                matmul(g, transpose_last(b)) if a._requires_grad else None,
                matmul(transpose_last(a), g) if b._requires_grad else None,
            )
        from .movement import reshape

        a2 = reshape(a, (1,) + a_shape) if len(a_shape) == 1 else a
        b2 = reshape(b, b_shape + (1,)) if len(b_shape) == 1 else b
        g2 = g
        if len(a_shape) == 1:
            g2 = reshape(g2, tuple(g2.shape[:-1]) + (1,) + tuple(g2.shape[-1:]) if len(b_shape) > 1 else tuple(g2.shape) + (1,))
        if len(b_shape) == 1:
            g2 = reshape(g2, tuple(g2.shape) + (1,))
        ga = gb = None
        if a._requires_grad:
            ga = sum_to(matmul(g2, transpose_last(b2)), tuple(a2.shape))
            ga = reshape(ga, a_shape)
        if b._requires_grad:
            gb = sum_to(matmul(transpose_last(a2), g2), tuple(b2.shape))
            gb = reshape(gb, b_shape)
        return ga, gb


def matmul(a, b):
    return apply(MATMUL, a, b)


def transpose_last(x):
    from .movement import Permute

    n = x.ndim
    return apply(Permute(tuple(range(n - 2)) + (n - 1, n - 2)), x)


MATMUL = MatMul()
