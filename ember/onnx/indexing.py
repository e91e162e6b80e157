"""Converters for ``ember.ops.indexing``: basic indexing (``Slice``, ``Squeeze``,
``Unsqueeze``), advanced indexing (``Gather`` / ``GatherND``), gather (``GatherElements``),
scatter and scatter_add (``ScatterElements``), and the positions of the run-time index checks
(``IndexInRange``, ``MaskedPositions``: ONNX cannot raise). Writes into part of a tensor
(``x[i] = v``, ``index_put``, writes through a view) become one ``ScatterElements`` on the flat
tensor, at positions computed at export time (so they need the tensor's full shape)."""

from __future__ import annotations

import math

import numpy as np

from .._shape import broadcast_shapes
from ..ops import indexing as I
from ..static.dims import Dim
from .context import INT64_MAX, INT64_MIN, converts


@converts(I.BasicIndex, dims=True)
def _basic_index(ctx, node, x):
    starts, ends, axes, steps, squeeze, new = [], [], [], [], [], []
    d = p = 0  # input dim, output dim
    for k in node.op.key:
        if k is None:
            new.append(p)
            p += 1
            continue
        if type(k) is tuple:
            _, start, stop, step = k
            step = 1 if step is None else step
            if start in (None, 0) and stop is None and step == 1:  # the whole dim
                d += 1
                p += 1
                continue
            if start is None:
                start = 0 if step > 0 else INT64_MAX
            if stop is None:
                stop = INT64_MAX if step > 0 else INT64_MIN
            starts.append(start)
            ends.append(stop)
            steps.append(step)
            axes.append(d)
            p += 1
        else:  # an int: a slice of one, squeezed away
            starts.append(k)
            ends.append(k + 1 if k != -1 else INT64_MAX)
            steps.append(1)
            axes.append(d)
            squeeze.append(d)
        d += 1
    if starts:
        x = ctx.add(
            "Slice", [x, ctx.shape(starts), ctx.shape(ends), ctx.ints(axes), ctx.ints(steps)]
        )
    x = ctx.squeeze(x, squeeze)
    x = ctx.unsqueeze(x, new)
    if not starts and not squeeze and not new:
        x = ctx.add("Identity", [x])
    return x


@converts(I.AdvIndex, dims=True)
def _adv_index(ctx, node, x, *idx):
    return _gather_adv(ctx, x, node.inputs[0].shape, node.op.key, node.inputs[1:], idx)


def _gather_adv(ctx, x: str, shape, key, values, idx) -> str:
    """``x[key]`` (an advanced key: ``":"`` or the position of an index tensor) with NumPy's
    rule for where the indexed dims go."""
    pos = [i for i, k in enumerate(key) if k != ":"]
    if len(pos) == 1:  # one index tensor: Gather keeps its place
        return ctx.add("Gather", [x, idx[key[pos[0]]]], axis=pos[0])
    vals = [values[key[p]] for p in pos]
    names = [idx[key[p]] for p in pos]
    b = broadcast_shapes("index", *[tuple(v.shape) for v in vals])
    cols = []
    for v, name in zip(vals, names):
        if str(v.dtype) != "int64":
            name = ctx.cast(name, "int64")
        if tuple(v.shape) != b or any(isinstance(s, Dim) for s in v.shape):
            name = ctx.add("Expand", [name, ctx.shape(b)])
        cols.append(ctx.unsqueeze(name, [-1]))
    stacked = ctx.add("Concat", cols, axis=-1)
    rest = [i for i in range(len(shape)) if i not in pos]
    if pos != list(range(len(pos))):
        x = ctx.add("Transpose", [x], perm=pos + rest)
    out = ctx.add("GatherND", [x, stacked])
    first = pos[0]
    if pos == list(range(first, pos[-1] + 1)) and first > 0:  # adjacent: back in place
        nb = len(b)
        perm = [nb + i for i in range(first)] + list(range(nb))
        perm += [nb + i for i in range(first, len(rest))]
        out = ctx.add("Transpose", [out], perm=perm)
    return out


# -- writes: positions computed once, then one ScatterElements on the flat tensor ----------


def _positions(ctx, shape) -> np.ndarray:
    if any(isinstance(s, Dim) for s in shape):
        raise ctx.error("writing into part of a tensor needs its full shape (no dynamic axis)")
    return np.arange(math.prod(shape), dtype=np.int64).reshape(shape)


def _scatter_flat(ctx, base: str, shape, where: str, value: str, add: bool = False) -> str:
    """``base`` (of ``shape``) with ``value`` (broadcast to ``where``'s shape) written (or
    added) at the flat positions ``where``."""
    if add and ctx.opset < 16:
        raise ctx.error("accumulating writes need opset 16 or later (pass opset_version=16)")
    flat = ctx.ints([-1])
    value = ctx.add("Expand", [value, ctx.add("Shape", [where])])
    out = ctx.add(
        "ScatterElements",
        [
            ctx.add("Reshape", [base, flat]),
            ctx.add("Reshape", [where, flat]),
            ctx.add("Reshape", [value, flat]),
        ],
        axis=0,
        reduction="add" if add else None,
    )
    return ctx.add("Reshape", [out, ctx.ints(shape)])


def _where(ctx, node, shape, basic, adv, idx) -> str:
    pos = _positions(ctx, shape)
    if basic:
        pos = I.BasicIndex(basic).forward(np, pos)
    where = ctx.const(np.array(pos))
    if adv is not None:
        where = _gather_adv(ctx, where, pos.shape, adv, node.inputs[-len(idx) :], idx)
    return where


def _zeros(ctx, node, shape) -> str:
    return ctx.const(np.zeros(tuple(int(s) for s in shape), np.dtype(node.output.dtype)))


@converts(I.IndexPut)
def _index_put(ctx, node, x, v, *idx):
    shape = node.inputs[0].shape
    where = _where(ctx, node, shape, node.op.basic, node.op.adv, idx)
    return _scatter_flat(ctx, x, shape, where, v)


@converts(I.BasicIndexGrad)
def _basic_index_grad(ctx, node, g):
    shape = node.op.shape
    where = _where(ctx, node, shape, node.op.key, None, ())
    return _scatter_flat(ctx, _zeros(ctx, node, shape), shape, where, g)


@converts(I.BasicIndexGrads)
def _basic_index_grads(ctx, node, *gs):
    shape = node.op.shape
    add = not I._tiles(node.op.keys, shape)  # overlapping pieces add up
    out = _zeros(ctx, node, shape)
    for key, g in zip(node.op.keys, gs):
        out = _scatter_flat(ctx, out, shape, _where(ctx, node, shape, key, None, ()), g, add)
    return out


@converts(I.AdvIndexGrad)
def _adv_index_grad(ctx, node, g, *idx):
    shape = node.op.shape
    where = _where(ctx, node, shape, (), node.op.key, idx)
    return _scatter_flat(ctx, _zeros(ctx, node, shape), shape, where, g, add=True)


@converts(I.CopySlices)
def _copy_slices(ctx, node, base, src):
    shape = node.inputs[0].shape
    pos = _positions(ctx, shape)
    for op in node.op.ops:  # the view's ops, replayed on the positions
        pos = op.forward(np, pos)
    return _scatter_flat(ctx, base, shape, ctx.const(np.array(pos)), src)


def _crop_to(ctx, name: str, shape, target, skip: int | None = None) -> str:
    """``name`` (of ``shape``) sliced to ``target`` in every dim but ``skip``."""
    axes, ends = [], []
    for d, (s, t) in enumerate(zip(shape, target)):
        if d == skip or isinstance(s, Dim) or isinstance(t, Dim) or s == t:
            continue
        axes.append(d)
        ends.append(t)
    if not axes:
        return name
    return ctx.add("Slice", [name, ctx.ints([0] * len(axes)), ctx.ints(ends), ctx.ints(axes)])


@converts(I.Gather)
def _gather(ctx, node, x, index):
    dim = node.op.dim
    x = _crop_to(ctx, x, node.inputs[0].shape, node.inputs[1].shape, skip=dim)
    return ctx.add("GatherElements", [x, index], axis=dim)


@converts(I.Scatter, I.ScatterAdd)
def _scatter(ctx, node, x, index, src):
    add = isinstance(node.op, I.ScatterAdd)
    if add and ctx.opset < 16:
        raise ctx.error("scatter_add needs opset 16 or later (pass opset_version=16)")
    src = _crop_to(ctx, src, node.inputs[2].shape, node.inputs[1].shape)
    return ctx.add(
        "ScatterElements", [x, index, src], axis=node.op.dim, reduction="add" if add else None
    )


@converts(I.IndexInRange)
def _index_in_range(ctx, node, index):
    """Negative positions counted from the end. ONNX has no way to raise: the check is left to
    the Gather / ScatterElements that reads the positions (an index at or past the size fails
    there; one below ``-size`` may read from the end instead)."""
    if str(node.inputs[0].dtype) != "int64":
        index = ctx.cast(index, np.int64)
    zero = ctx.scalar(0, np.int64)
    wrapped = ctx.add("Add", [index, ctx.scalar(node.op.size, np.int64)])
    return ctx.add("Where", [ctx.add("Less", [index, zero]), wrapped, index])


@converts(I.MaskedPositions)
def _masked_positions(ctx, node, mask):
    """The running count of True, less one, at least 0. The count check is left to the Gather
    that reads the source (a position past its end fails there)."""
    flat = ctx.cast(ctx.add("Reshape", [mask, ctx.ints([-1])]), np.int64)
    counts = ctx.add("CumSum", [flat, ctx.const(np.asarray(0, dtype=np.int64))])
    one, zero = ctx.scalar(1, np.int64), ctx.scalar(0, np.int64)
    return ctx.add("Max", [ctx.add("Sub", [counts, one]), zero])
