"""Converters for the neural-network primitives: convolution (``Conv2d`` -> ``Conv``, its
input gradient ``Conv2dGradInput`` -> ``ConvTranspose``, which is what ``conv_transpose2d``
records), pooling (``MaxPool2d`` and its indices -> ``MaxPool``), ``unfold`` (a grouped
convolution with one-hot kernels) and ``fold`` (``Col2Im``, opset 18), softmax, log-softmax,
layer normalization (``LayerNormalize`` -> ``LayerNormalization``, opset 17, or its formula;
its affine part ``Affine`` -> ``Mul`` / ``Add``),
batch normalization (``BatchNormalize`` -> ``BatchNormalization`` with the statistics as inputs;
``BatchMoments``, training's batch statistics, -> ``ReduceMean`` s), binary cross-entropy and the
negative log-likelihood (``NllLoss`` -> ``NegativeLogLikelihoodLoss``).
Composites (linear, avg pooling...) arrive as the primitives they are
made of."""

from __future__ import annotations

import numpy as np

from ..ops import attention as At
from ..ops import conv as C
from ..ops import loss as Lo
from ..ops import norm as Nm
from ..ops import pool as P
from ..ops import rnn as R
from ..ops import softmax as S
from ..static.dims import Dim
from .context import converts


def _pair(x) -> list:
    return [int(v) for v in x]


def _pads(padding) -> list:
    ph, pw = _pair(padding)
    return [ph, pw, ph, pw]


@converts(C.Conv2d)
def _conv(ctx, node, x, w):
    op = node.op
    return ctx.add(
        "Conv",
        [x, w],
        strides=_pair(op.stride),
        pads=_pads(op.padding),
        dilations=_pair(op.dilation),
        group=int(op.groups),
    )


@converts(C.Conv2dGradInput, dims=True)
def _conv_transpose(ctx, node, g, w):
    op = node.op
    hw = op.x_shape[2:]
    if any(isinstance(s, Dim) for s in hw):
        raise ctx.error("the output's height and width must be known (not a dynamic axis)")
    _, _, kh, kw = node.inputs[1].shape
    gh, gw = node.inputs[0].shape[2:]
    if isinstance(gh, Dim) or isinstance(gw, Dim):
        raise ctx.error("the input's height and width must be known (not a dynamic axis)")
    (sh, sw), (ph, pw), (dh, dw) = _pair(op.stride), _pair(op.padding), _pair(op.dilation)
    out_pad = [
        int(hw[0]) - ((gh - 1) * sh - 2 * ph + dh * (kh - 1) + 1),
        int(hw[1]) - ((gw - 1) * sw - 2 * pw + dw * (kw - 1) + 1),
    ]
    return ctx.add(
        "ConvTranspose",
        [g, w],
        strides=[sh, sw],
        pads=[ph, pw, ph, pw],
        dilations=[dh, dw],
        group=int(op.groups),
        output_padding=out_pad if any(out_pad) else None,
    )


def _pool_attrs(op) -> dict:
    return dict(
        kernel_shape=_pair(op.kernel),
        strides=_pair(op.stride),
        pads=_pads(op.padding),
        dilations=_pair(op.dilation),
        ceil_mode=1 if op.ceil_mode else 0,
    )


@converts(P.MaxPool2d)
def _max_pool(ctx, node, x):
    return ctx.add("MaxPool", [x], **_pool_attrs(node.op))


@converts(P.MaxPoolIndices, dims=True)
def _max_pool_indices(ctx, node, x):
    _, idx = ctx.add("MaxPool", [x], n_out=2, **_pool_attrs(node.op))
    # ONNX's indices count over the whole (N, C, H, W) tensor; PyTorch's within each plane
    h, w = node.inputs[0].shape[2:]
    if isinstance(h, Dim) or isinstance(w, Dim):
        hh = ctx.dim(h) if isinstance(h, Dim) else ctx.ints([h])
        ww = ctx.dim(w) if isinstance(w, Dim) else ctx.ints([w])
        plane = ctx.add("Mul", [hh, ww])
    else:
        plane = ctx.const(np.asarray(h * w, dtype=np.int64))
    return ctx.add("Mod", [idx, plane])


@converts(P.Unfold)
def _unfold(ctx, node, x):
    op = node.op
    n, c, _, _ = node.inputs[0].shape
    if isinstance(c, Dim):
        raise ctx.error("the number of channels must be known")
    kh, kw = _pair(op.kernel)
    k = kh * kw
    eye = np.eye(k, dtype=np.dtype(node.inputs[0].dtype)).reshape(k, 1, kh, kw)
    weight = ctx.const(np.tile(eye, (c, 1, 1, 1)))  # channel c*k + i*kw + j picks x[c] at (i, j)
    out = ctx.add(
        "Conv",
        [x, weight],
        strides=_pair(op.stride),
        pads=_pads(op.padding),
        dilations=_pair(op.dilation),
        group=int(c),
    )
    return ctx.add("Reshape", [out, ctx.ints([0, c * k, -1])])


@converts(P.Fold)
def _fold(ctx, node, cols):
    op = node.op
    if ctx.opset < 18:
        raise ctx.error("fold (Col2Im) needs opset 18 or later (pass opset_version=18)")
    return ctx.add(
        "Col2Im",
        [cols, ctx.ints(_pair(op.output_size)), ctx.ints(_pair(op.kernel))],
        strides=_pair(op.stride),
        pads=_pads(op.padding),
        dilations=_pair(op.dilation),
    )


@converts(S.Softmax)
def _softmax(ctx, node, x):
    return ctx.add("Softmax", [x], axis=node.op.dim)


@converts(Nm.LayerNormalize)
def _layer_norm(ctx, node, x):
    op = node.op
    shape = node.inputs[0].shape
    dt = np.dtype(node.output.dtype)
    inner = shape[len(shape) - op.axes :]
    if ctx.opset >= 17 and all(isinstance(s, int) for s in inner):
        scale = ctx.const(np.ones(inner, dtype=dt))
        return ctx.add("LayerNormalization", [x, scale], axis=-op.axes, epsilon=float(op.eps))
    axes = tuple(range(len(shape) - op.axes, len(shape)))
    c = ctx.add("Sub", [x, ctx.reduce("ReduceMean", x, axes, True)])
    var = ctx.reduce("ReduceMean", ctx.add("Mul", [c, c]), axes, True)
    std = ctx.add("Sqrt", [ctx.add("Add", [var, ctx.scalar(op.eps, dt)])])
    return ctx.add("Mul", [c, ctx.add("Reciprocal", [std])])


@converts(Nm.Affine)
def _affine(ctx, node, y, *wb):
    """layer / group norm's ``y * weight + bias``: ``Mul`` and ``Add``, the parameters given
    trailing ones where dims follow theirs (group norm's spatial dims)."""
    op = node.op
    pshape = [int(s) for s in node.inputs[1].shape]
    trail = len(node.inputs[0].shape) - op.start - len(pshape)
    if trail:
        shape = ctx.ints(pshape + [1] * trail)
        wb = [ctx.add("Reshape", [t, shape]) for t in wb]
    out = ctx.add("Mul", [y, wb[0]]) if op.weight else y
    return ctx.add("Add", [out, wb[-1]]) if op.bias else out


@converts(Nm.BatchMoments)
def _batch_moments(ctx, node, x):
    shape, dt = node.inputs[0].shape, np.dtype(node.output.dtype)
    if np.dtype(node.inputs[0].dtype) != dt:
        x = ctx.cast(x, dt)
    axes = [0] + list(range(2, len(shape)))
    mean = ctx.reduce("ReduceMean", x, axes, True)
    c = ctx.add("Sub", [x, mean])
    var = ctx.reduce("ReduceMean", ctx.add("Mul", [c, c]), axes, True)
    flat = ctx.ints([1, -1])
    parts = [ctx.add("Reshape", [v, flat]) for v in (mean, var)]
    return ctx.add("Concat", parts, axis=0)


@converts(Nm.BatchNormalize)
def _batch_normalize(ctx, node, x, stats, *wb):
    op, c = node.op, node.inputs[0].shape[1]
    dt = np.dtype(node.output.dtype)
    if isinstance(c, Dim) and not (op.weight and op.bias):
        raise ctx.error("batch norm without weight or bias needs a known number of channels")
    if np.dtype(node.inputs[1].dtype) != dt:
        stats = ctx.cast(stats, dt)
    mean, var = (ctx.add("Gather", [stats, ctx.const(np.asarray(i, np.int64))]) for i in (0, 1))
    vals = list(wb)
    for i, (present, fill) in enumerate(((op.weight, 1.0), (op.bias, 0.0))):
        if not present:
            vals.insert(i, ctx.const(np.full(int(c), fill, dt)))
        elif np.dtype(node.inputs[2 + i - (not op.weight)].dtype) != dt:
            vals[i] = ctx.cast(vals[i], dt)
    return ctx.add("BatchNormalization", [x, *vals, mean, var], epsilon=float(op.eps))


@converts(At.Attention)
def _attention(ctx, node, q, k, v):
    """``Softmax(q * scale @ k^T [+ causal -inf above the diagonal]) @ v``."""
    op, n = node.op, len(node.inputs[0].shape)
    dt = np.dtype(node.output.dtype)
    kt = ctx.add("Transpose", [k], perm=[*range(n - 2), n - 1, n - 2])
    scores = ctx.add("MatMul", [ctx.add("Mul", [q, ctx.scalar(op.scale, dt)]), kt])
    if op.causal:
        lq, lk = node.inputs[0].shape[-2], node.inputs[1].shape[-2]
        if isinstance(lq, Dim) or isinstance(lk, Dim):
            raise ctx.error("causal attention needs known sequence lengths")
        mask = np.where(np.triu(np.ones((lq, lk), dtype=bool), 1), -np.inf, 0.0).astype(dt)
        scores = ctx.add("Add", [scores, ctx.const(mask)])
    return ctx.add("MatMul", [ctx.add("Softmax", [scores], axis=-1), v])


@converts(S.LogSoftmax)
def _log_softmax(ctx, node, x):
    return ctx.add("LogSoftmax", [x], axis=node.op.dim)


@converts(Lo.BinaryCrossEntropy)
def _bce(ctx, node, x, t):
    dt = np.dtype(node.output.dtype)
    one, floor = ctx.scalar(1, dt), ctx.scalar(-100, dt)
    lo = ctx.add("Max", [ctx.add("Log", [x]), floor])
    l1 = ctx.add("Max", [ctx.add("Log", [ctx.add("Sub", [one, x])]), floor])
    return ctx.add("Sub", [ctx.add("Mul", [ctx.add("Sub", [t, one]), l1]), ctx.add("Mul", [t, lo])])


@converts(Lo.NllLoss)
def _nll_loss(ctx, node, logp, target):
    op = node.op
    extra = {} if op.ignore is None else {"ignore_index": int(op.ignore)}
    return ctx.add("NegativeLogLikelihoodLoss", [logp, target], reduction=op.reduction, **extra)


def _steps(ctx, node):
    """(T, the walk's order of steps) of a recurrence's node, and a slicer of its gates."""
    t = node.inputs[0].shape[0]
    n = node.inputs[2 if isinstance(node.op, R.GRURecurrence) else 3].shape[0]
    if isinstance(t, Dim):
        raise ctx.error("a recurrence over a sequence of unknown length (export a fixed one)")

    def part(x, j):
        return ctx.add("Slice", [x, ctx.ints([j * n]), ctx.ints([(j + 1) * n]), ctx.ints([1])])

    def step(xs, k):
        return ctx.add("Gather", [xs, ctx.const(np.asarray(k, np.int64))], axis=0)

    return t, (range(t - 1, -1, -1) if node.op.reverse else range(t)), part, step


def _packed(ctx, rows) -> str:
    return ctx.add("Concat", [ctx.unsqueeze(r, [0]) for r in rows], axis=0)


@converts(R.LSTMRecurrence)
def _lstm_recurrence(ctx, node, xs, h, c, w):
    """The steps unrolled (the sequence length is the traced one), into the op's packed
    (6T + 1, B, H) layout: hidden states, last cell, cell states, activated gates."""
    t, order, part, step = _steps(ctx, node)
    hs, cs, gates = [None] * t, [None] * t, [None] * t
    for k in order:
        pre = ctx.add("Add", [ctx.add("MatMul", [h, w]), step(xs, k)])
        i, f, o = (ctx.add("Sigmoid", [part(pre, j)]) for j in (0, 1, 3))
        g = ctx.add("Tanh", [part(pre, 2)])
        c = ctx.add("Add", [ctx.add("Mul", [f, c]), ctx.add("Mul", [i, g])])
        h = ctx.add("Mul", [o, ctx.add("Tanh", [c])])
        hs[k], cs[k], gates[k] = h, c, (i, f, g, o)
    return _packed(ctx, hs + [c] + cs + [q for k in range(t) for q in gates[k]])


@converts(R.GRURecurrence)
def _gru_recurrence(ctx, node, xs, h, w, b):
    """The steps unrolled, into the op's packed (5T, B, H) layout: hidden states, reset and
    update gates, candidates, recurrent candidate terms."""
    t, order, part, step = _steps(ctx, node)
    hs, rs, zs, cs, hns = ([None] * t for _ in range(5))
    for k in order:
        x = step(xs, k)
        gh = ctx.add("Add", [ctx.add("MatMul", [h, w]), b])
        r, z = (ctx.add("Sigmoid", [ctx.add("Add", [part(x, j), part(gh, j)])]) for j in (0, 1))
        hn = part(gh, 2)
        c = ctx.add("Tanh", [ctx.add("Add", [part(x, 2), ctx.add("Mul", [r, hn])])])
        h = ctx.add("Add", [c, ctx.add("Mul", [z, ctx.add("Sub", [h, c])])])
        hs[k], rs[k], zs[k], cs[k], hns[k] = h, r, z, c, hn
    return _packed(ctx, hs + rs + zs + cs + hns)
