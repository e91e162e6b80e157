"""Converters for ``ember.ops.linalg``: ``MatMul`` (NumPy semantics, as ONNX's) and
``Einsum`` (ember's equations are explicit, which ONNX's Einsum takes as they are)."""

from __future__ import annotations

from ..ops import linalg as L
from .context import converts


@converts(L.MatMul)
def _matmul(ctx, node, a, b):
    return ctx.add("MatMul", [a, b])


@converts(L.Einsum)
def _einsum(ctx, node, *xs):
    return ctx.add("Einsum", list(xs), equation=node.op.equation)
