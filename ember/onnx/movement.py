"""Converters for shape and movement ops (``ember.ops.movement``, ``ember.ops.broadcast``,
``ember.ops.pad``): reshape, permute, cat, flip, roll, expand, sum_to, pad. Shapes holding
unknown sizes (``Dim``) become small shape computations on the inputs' ``Shape``."""

from __future__ import annotations

import numpy as np

from ..ops import broadcast as B
from ..ops import movement as M
from ..ops import pad as P
from ..static.dims import Dim, DimValue
from .context import INT64_MAX, INT64_MIN, converts


@converts(M.Reshape, dims=True)
def _reshape(ctx, node, x):
    shape = node.op.shape
    zero = any(not isinstance(s, Dim) and s == 0 for s in shape)
    allow = 1 if zero and ctx.opset >= 14 else None  # a literal 0 is a size, not "keep"
    if zero and allow is None:
        raise ctx.error("reshaping to a size of 0 needs opset 14 or later (pass opset_version=14)")
    unknown = [i for i, s in enumerate(shape) if isinstance(s, Dim)]
    if len(unknown) == 1 and not zero:  # one unknown size: ONNX infers it (-1)
        target = ctx.ints(-1 if isinstance(s, Dim) else int(s) for s in shape)
    else:
        target = ctx.shape(shape)
    return ctx.add("Reshape", [x, target], allowzero=allow)


@converts(M.Permute)
def _permute(ctx, node, x):
    return ctx.add("Transpose", [x], perm=list(node.op.dims))


@converts(M.Cat)
def _cat(ctx, node, *xs):
    return ctx.add("Concat", list(xs), axis=node.op.dim)


@converts(M.Flip)
def _flip(ctx, node, x):
    dims = list(node.op.dims)
    if not dims:
        return ctx.add("Identity", [x])
    k = len(dims)
    return ctx.add(
        "Slice",
        [x, ctx.ints([-1] * k), ctx.ints([INT64_MIN] * k), ctx.ints(dims), ctx.ints([-1] * k)],
    )


def _roll_axis(ctx, x: str, shift: int, axis: int, size) -> str:
    if not isinstance(size, Dim):
        shift = shift % size if size else 0
    if shift == 0:
        return x
    # the last ``shift`` elements, then the rest (needs |shift| < size for unknown sizes)
    tail = ctx.add("Slice", [x, ctx.ints([-shift]), ctx.ints([INT64_MAX]), ctx.ints([axis])])
    head = ctx.add("Slice", [x, ctx.ints([0]), ctx.ints([-shift]), ctx.ints([axis])])
    return ctx.add("Concat", [tail, head], axis=axis)


@converts(M.Roll, dims=True)
def _roll(ctx, node, x):
    op = node.op
    shape = node.inputs[0].shape
    if op.dims is None:
        n = 1
        for s in shape:
            n = n * s
        flat = ctx.add("Reshape", [x, ctx.ints([-1])])
        rolled = _roll_axis(ctx, flat, op.shifts[0], 0, n)
        return ctx.add("Reshape", [rolled, ctx.add("Shape", [x])])
    for shift, d in zip(op.shifts, op.dims):
        x = _roll_axis(ctx, x, shift, d % len(shape), shape[d])
    return x


@converts(B.Expand, dims=True)
def _expand(ctx, node, x):
    shape = list(node.op.shape)
    xs = node.inputs[0].shape
    lead = len(shape) - len(xs)
    for i, s in enumerate(xs):  # a size x already has: 1 (ONNX's Expand broadcasts both ways)
        if isinstance(shape[lead + i], Dim) and (isinstance(s, Dim) or s != 1):
            shape[lead + i] = 1
    return ctx.add("Expand", [x, ctx.shape(shape)])


@converts(B.SumTo, dims=True)
def _sum_to(ctx, node, x):
    xs, shape = node.inputs[0].shape, node.op.shape
    lead = len(xs) - len(shape)
    axes = list(range(lead)) + [
        lead + i
        for i, s in enumerate(shape)
        if not isinstance(s, Dim)
        and s == 1
        and (isinstance(xs[lead + i], Dim) or xs[lead + i] != 1)
    ]
    if not axes:
        return ctx.add("Identity", [x])
    summed = ctx.reduce("ReduceSum", x, axes, True)
    return ctx.squeeze(summed, list(range(lead)))


@converts(P.Pad)
def _pad(ctx, node, x):
    widths = node.op.widths
    pads = [int(b) for b, _ in widths] + [int(a) for _, a in widths]
    if not any(pads):
        return ctx.add("Identity", [x])
    value = ctx.scalar(node.op.value, np.dtype(node.inputs[0].dtype))
    return ctx.add("Pad", [x, ctx.ints(pads), value], mode="constant")


def _has_div(e) -> bool:
    return (
        isinstance(e, tuple) and e[0] != "dim" and (e[0] == "/" or _has_div(e[1]) or _has_div(e[2]))
    )


@converts(DimValue, dims=True)
def _dim_value(ctx, node, *inputs):
    """A number computed from input sizes (``x.mean()`` over a dynamic axis divides by it)."""
    expr = node.op.expr
    floating = _has_div(expr)
    v = ctx.dim_expr(expr, lambda i, k: (inputs[i], k), floating)
    v = ctx.add("Reshape", [v, ctx.ints([])])
    return ctx.cast(v, node.op.dtype)
