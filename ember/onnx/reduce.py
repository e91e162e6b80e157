"""Converters for ``ember.ops.reduce``: sum, prod, amax / amin, max / min values, argmax /
argmin, cumsum, all / any, the helpers of norms and logsumexp (``SafeRoot``, ``LseShift``),
``Cumprod`` (no ONNX operator: a masked product over a triangle), the positions of cummax /
cummin and of mode (``CumArgExtreme``, ``ModeIndex``: no ONNX operator either), and
``Argsort`` (sort, topk, median, kthvalue, quantile) as ``TopK``."""

from __future__ import annotations

import numpy as np

from ..functions.sorting import Argsort
from ..ops import reduce as R
from .context import converts


def _dt(value) -> np.dtype:
    return np.dtype(value.dtype)


@converts(R.Sum)
def _sum(ctx, node, x):
    return ctx.reduce("ReduceSum", x, node.op.axis, node.op.keepdim)


@converts(R.Prod)
def _prod(ctx, node, x):
    axis = None if node.op.axis is None else (node.op.axis,)
    return ctx.reduce("ReduceProd", x, axis, node.op.keepdim)


def _extreme(ctx, node, x, axes, keepdim: bool, is_min: bool) -> str:
    kind = "ReduceMin" if is_min else "ReduceMax"
    if _dt(node.inputs[0]).kind == "b":  # no bool kernels before opset 20
        return ctx.cast(ctx.reduce(kind, ctx.cast(x, np.int32), axes, keepdim), np.bool_)
    return ctx.reduce(kind, x, axes, keepdim)


@converts(R.Amax)
def _amax(ctx, node, x):
    op = node.op
    return _extreme(ctx, node, x, op.axis, op.keepdim, op.is_min)


@converts(R.SelectArg)
def _select_arg(ctx, node, x):
    op = node.op
    if not node.inputs[0].shape:
        return ctx.add("Identity", [x])
    return _extreme(ctx, node, x, (op.dim,), op.keepdim, op.is_min)


@converts(R.ArgReduce)
def _arg_reduce(ctx, node, x):
    op = node.op
    ndim = len(node.inputs[0].shape)
    kind = "ArgMin" if op.is_min else "ArgMax"
    if op.dim is None or ndim == 0:
        flat = ctx.add("Reshape", [x, ctx.ints([-1])])
        out = ctx.add(kind, [flat], axis=0, keepdims=0)
        if op.keepdim and ndim:
            out = ctx.add("Reshape", [out, ctx.ints([1] * ndim)])
        return out
    return ctx.add(kind, [x], axis=op.dim, keepdims=1 if op.keepdim else 0)


@converts(R.Cumsum)
def _cumsum(ctx, node, x):
    if not node.inputs[0].shape:
        return ctx.add("Identity", [x])
    axis = ctx.const(np.asarray(node.op.dim, dtype=np.int64))
    return ctx.add("CumSum", [x, axis], reverse=1 if node.op.reverse else None)


@converts(R.AllAny)
def _all_any(ctx, node, x):
    op = node.op
    b = x if _dt(node.inputs[0]).kind == "b" else ctx.cast(x, np.bool_)
    if not op.is_any:
        b = ctx.add("Not", [b])
    # count the true (all: the false) elements: right for empty reductions too
    count = ctx.reduce("ReduceSum", ctx.cast(b, np.int64), op.axis, op.keepdim)
    zero = ctx.scalar(0, np.int64)
    out = ctx.add("Greater" if op.is_any else "Equal", [count, zero])
    return ctx.cast(out, _dt(node.output)) if _dt(node.output).kind != "b" else out


@converts(R.SafeRoot)
def _safe_root(ctx, node, s):
    if node.op.p == 2:
        return ctx.add("Sqrt", [s])
    return ctx.add("Pow", [s, ctx.scalar(1.0 / node.op.p, _dt(node.output))])


@converts(R.LseShift)
def _lse_shift(ctx, node, x):
    axis = node.op.axis
    m = ctx.reduce("ReduceMax", x, axis, True)
    bad = ctx.add("Or", [ctx.add("IsNaN", [m]), ctx.add("IsInf", [m])])
    return ctx.add("Where", [bad, ctx.scalar(0, _dt(node.output)), m])


@converts(R.Cumprod)
def _cumprod(ctx, node, x):
    """No ONNX operator: out[..., i] = prod over j <= i, as a masked product over an (n, n)
    lower triangle (n the size of ``dim``, which must be known)."""
    shape = node.inputs[0].shape
    if not shape:
        return ctx.add("Identity", [x])
    dim = node.op.dim % len(shape)
    n = shape[dim]
    if not isinstance(n, int):
        raise ctx.error("cumprod along a dynamic axis is not supported")
    last = len(shape) - 1
    if dim != last:
        perm = [d for d in range(len(shape)) if d != dim] + [dim]
        x = ctx.add("Transpose", [x], perm=perm)
    rows = ctx.unsqueeze(x, [-2])  # (..., 1, n)
    tri = ctx.const(np.tril(np.ones((n, n), dtype=bool)))
    masked = ctx.add("Where", [tri, rows, ctx.scalar(1, _dt(node.output))])
    out = ctx.reduce("ReduceProd", masked, [-1], False)
    if dim != last:
        inverse = list(range(last))
        inverse.insert(dim, last)
        out = ctx.add("Transpose", [out], perm=inverse)
    return out


def _along_last(ctx, node, x):
    """``x`` with ``node.op.dim`` moved last, in a type the Reduce and Equal kernels all take
    (float32 / float64, other floats as float32, integers and bools as int64), and ``(n, back)``:
    the size of that dim (which must be known) and the permutation that undoes the move."""
    shape = node.inputs[0].shape
    dim, last = node.op.dim, len(shape) - 1
    n = shape[dim]
    if not isinstance(n, int):
        raise ctx.error(f"{node.op.name} along a dynamic axis is not supported")
    dt = _dt(node.inputs[0])
    if dt.kind != "f":
        x = ctx.cast(x, np.int64)
    elif dt not in (np.float32, np.float64):
        x = ctx.cast(x, np.float32)
    back = list(range(last + 1))
    if dim != last:
        perm = [d for d in back if d != dim] + [dim]
        x = ctx.add("Transpose", [x], perm=perm)
        back = list(range(last))
        back.insert(dim, last)
    return x, n, back


def _restore(ctx, out, back):
    return out if back == sorted(back) else ctx.add("Transpose", [out], perm=back)


def _extreme_fill(ctx, node, highest: bool):
    """The value no element beats: +-inf for floats, the int64 bound otherwise."""
    if _dt(node.inputs[0]).kind == "f":
        dt = np.float64 if _dt(node.inputs[0]) == np.float64 else np.float32
        return ctx.scalar(np.inf if highest else -np.inf, dt)
    info = np.iinfo(np.int64)
    return ctx.scalar(info.max if highest else info.min, np.int64)


def _prefix(ctx, values, tri, fill, kind: str):
    """``kind`` (ReduceMax / ReduceMin) of ``values`` over each prefix along the last axis:
    over an (n, n) lower triangle, as for cumprod."""
    masked = ctx.add("Where", [tri, ctx.unsqueeze(values, [-2]), fill])
    return ctx.reduce(kind, masked, [-1], False)


@converts(R.CumArgExtreme)
def _cum_arg_extreme(ctx, node, x):
    """No ONNX operator: the running extreme over a lower triangle, then the latest position
    holding it (or a NaN, after which only NaNs count), again over the triangle."""
    shape = node.inputs[0].shape
    if 0 in shape:
        return ctx.const(np.zeros(shape, np.int64))
    is_min = node.op.is_min
    x, n, back = _along_last(ctx, node, x)
    tri = ctx.const(np.tril(np.ones((n, n), dtype=bool)))
    best = _prefix(
        ctx, x, tri, _extreme_fill(ctx, node, is_min), "ReduceMin" if is_min else "ReduceMax"
    )
    hit = ctx.add("Equal", [x, best])
    if _dt(node.inputs[0]).kind == "f":
        nan = ctx.add("IsNaN", [x])
        seen = _prefix(ctx, ctx.cast(nan, np.int64), tri, ctx.scalar(0, np.int64), "ReduceMax")
        seen = ctx.cast(seen, np.bool_)
        hit = ctx.add("Or", [ctx.add("And", [hit, ctx.add("Not", [seen])]), nan])
    positions = ctx.add(
        "Where", [hit, ctx.const(np.arange(n, dtype=np.int64)), ctx.scalar(0, np.int64)]
    )
    index = _prefix(ctx, positions, tri, ctx.scalar(0, np.int64), "ReduceMax")
    return _restore(ctx, index, back)


@converts(R.ModeIndex)
def _mode_index(ctx, node, x):
    """No ONNX operator: each element's count of equals (an (n, n) comparison, so n^2 memory
    per slice), the smallest value of the largest count, and its last position."""
    shape = node.inputs[0].shape
    if 0 in shape:
        return ctx.const(np.zeros(node.output.shape, np.int64))
    x, n, back = _along_last(ctx, node, x)
    eq = ctx.add("Equal", [ctx.unsqueeze(x, [-1]), ctx.unsqueeze(x, [-2])])  # NaN: distinct
    counts = ctx.reduce("ReduceSum", ctx.cast(eq, np.int64), [-1], False)
    top = ctx.add("Equal", [counts, ctx.reduce("ReduceMax", counts, [-1], True)])
    if _dt(node.inputs[0]).kind == "f":  # NaN sorts last: the mode only where all are NaN
        top = ctx.add("And", [top, ctx.add("Not", [ctx.add("IsNaN", [x])])])
    fill = _extreme_fill(ctx, node, True)
    winner = ctx.reduce("ReduceMin", ctx.add("Where", [top, x, fill]), [-1], True)
    where = ctx.add("Equal", [x, winner])
    positions = ctx.add(
        "Where", [where, ctx.const(np.arange(n, dtype=np.int64)), ctx.scalar(-1, np.int64)]
    )
    index = ctx.reduce("ReduceMax", positions, [-1], True)
    index = ctx.add("Max", [index, ctx.scalar(0, np.int64)])  # all NaN: the first
    return _restore(ctx, index, back)


_TOPK_TYPES = {np.dtype(t) for t in ("float32", "float64", "int32", "int64")}


@converts(Argsort, dims=True)
def _argsort(ctx, node, x):
    """Argsort as TopK over the whole axis (``largest`` for descending): TopK puts the lower
    index first among equal values, as the stable argsort does. Types onnxruntime's TopK lacks
    (bool, small ints, half floats) are sorted as float64, which holds them exactly."""
    shape = node.inputs[0].shape
    if not shape:
        return ctx.const(np.zeros((), np.int64))
    dim = node.op.dim % len(shape)
    if _dt(node.inputs[0]) not in _TOPK_TYPES:
        x = ctx.cast(x, np.float64)
    _, idx = ctx.add(
        "TopK",
        [x, ctx.shape([shape[dim]])],
        n_out=2,
        axis=dim,
        largest=1 if node.op.descending else 0,
        sorted=1,
    )
    return idx
