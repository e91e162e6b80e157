"""Layer, group and batch normalization as primitives: ``F.layer_norm``, ``F.group_norm`` and
``F.batch_norm`` apply them on every device.

Layer normalization is one op each way, plus one for the affine part each way:

- ``LayerNormalize``: ``(x - mean) / sqrt(var + eps)`` over the last ``axes`` axes (biased
  variance, no affine part). Its ``forward`` is that formula in ``xp`` calls; on a GPU one
  kernel per row (``ember.backend.kernels.rows``) instead of about seven launches, on the CPU
  one numba loop per row (``_norm_numba``);
- ``LayerNormGradInput``: its input gradient from ``(g, x)`` in one op (the statistics
  recomputed per row: cheaper than keeping them), ``rstd * (g - mean(g) - xhat * mean(g *
  xhat))``, likewise one kernel / loop per row; its vjp is the closed-form second derivative
  in ember ops, so gradients of any order are exact;
- ``Affine``: ``y * weight + bias`` (each optional) with parameters spanning some dims of ``y``
  (the normalized dims for layer norm, the channels for group norm) in one pass, and
  ``AffineSums``, ``(g, y)`` -> [sum of g * y, sum of g] per parameter, both parameter
  gradients in one pass. Each one's vjp is made of the other.

The affine part stays an op of its own (not a field of ``LayerNormalize``, as PyTorch's
``native_layer_norm`` has it) so that ``LayerNormalize`` is the same op with and without one.
Group normalization is ``LayerNormalize`` on (N, groups, -1) and a per-channel ``Affine``.
Measured on 2 shared cores (float32, forward + backward with weight and bias, best of 15,
against the LayerNormalize + composite vjp + multiply / add this replaces): layer norm
32x64x256 4.5 -> 1.6 ms, 16x512x768 66 -> 20 ms; group norm 32x64x16x16 in 8 groups 4.6 ->
2.1 ms. Without numba (the NumPy bodies) 1.0x to 1.3x faster than before.

Batch normalization (per channel, dim 1, over the batch and every spatial position) is four
ops, so a training step's BatchNorm is two ops forward and two backward instead of about twenty:

- ``BatchMoments``: ``x`` -> ``(2, C)`` [mean, biased variance] (no gradient: see below), and
  ``RunningAverage`` folding them into a running buffer (written in place by ``F.batch_norm``);
- ``BatchNormalize``: ``(x, stats, [weight], [bias])`` -> ``(x - mean) * rstd * weight + bias``,
  as PyTorch's CPU kernel computes it (``x * scale + shift`` with per-channel ``scale``,
  ``shift``). ``training=True`` says that ``stats`` are ``x``'s own ``BatchMoments``, so the
  gradient for ``x`` is the whole batch-norm gradient (through the statistics too) and ``stats``
  gets none; ``training=False`` (running statistics) makes it a per-channel affine map;
- ``BatchNormSums``: ``(g, x, stats)`` -> ``(2, C)`` [sum of g, sum of g * xhat], the bias and
  weight gradients and the two sums the input gradient needs;
- ``BatchNormGradInput``: ``(g, x, stats, sums, [weight])`` -> the closed-form input gradient
  ``weight * rstd * (g - sum(g)/M - xhat * sum(g * xhat)/M)`` (training only: in eval it is
  ``g * weight * rstd``, written with ember ops).

float16 / bfloat16 inputs compute in float32 (statistics and sums are float32), float64 in
float64. On the CPU per-channel sums are matrix-vector products (``_channel_sum``, BLAS) or
``einsum``, not ``sum(axis=(0, 2))`` (measured 24 us vs 72 us on 64x32x8x8). On a GPU each op
is one CUDA kernel (two for the reductions: ``ember.backend.kernels.batchnorm``), with no cuBLAS
call, so a captured step (CUDA graph) records them. The vjps of the two backward
ops are the textbook second derivatives written in ember ops, with ``xhat`` recomputed from
``x`` in ember ops in training (``_xhat``), so gradients of any order are exact.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(LayerNormalize(1, 1e-5), ember.tensor([[1.0, 3.0]]))
tensor([[-1.0000,  1.0000]])
>>> apply(Affine(1, True, True), ember.tensor([[1.0, 3.0]]), ember.tensor([2.0, 1.0]),
...       ember.tensor([0.5, 0.5]))
tensor([[2.5000, 3.5000]])
>>> x = ember.tensor([[1.0], [3.0]])
>>> apply(BatchNormalize(0.0, True), x, apply(BatchMoments(), x))
tensor([[-1.],
        [ 1.]])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import dtypes as _dt
from .._errors import ShapeError
from ..backend.kernels import batchnorm as _bn_kernels
from ..backend.kernels import rows
from ..backend.kernels import sums as _sums
from ..backend.overrides import register
from . import _norm_numba
from .base import Op, Spec, apply
from .movement import Cat


def _row_dims(ndim: int, axes: int) -> tuple:
    return tuple(range(ndim - axes, ndim))


def _as_rows(xp, a, axes: int):
    """``a`` as a 2-D (rows, n) array over its last ``axes`` axes (a view where it can be)."""
    n = 1
    for s in a.shape[a.ndim - axes :]:
        n *= s
    return a.reshape(-1, n) if a.size else a.reshape(0, n)


def _row_moments(xp, w):
    """Per-row ``(mean, centred copy, biased variance)`` of a 2-D array, keepdims."""
    n = w.dtype.type(w.shape[1])
    mean = w.sum(axis=1, keepdims=True) / n
    c = w - mean
    if xp is np:
        var = np.einsum("ij,ij->i", c, c)[:, None] / n
    else:
        var = (c * c).mean(axis=1, keepdims=True)
    return mean, c, var


@dataclass(frozen=True)
class LayerNormalize(Op):
    """``(x - mean) * rsqrt(var + eps)`` over the last ``axes`` dimensions."""

    axes: int = 1
    eps: float = 1e-5
    saves_inputs = True

    def forward(self, xp, x):
        dims = _row_dims(x.ndim, self.axes)
        w = _dt.widen_half(x)
        mean = w.mean(axis=dims, keepdims=True)
        c = w - mean
        var = (c * c).mean(axis=dims, keepdims=True)
        return (c * (1 / xp.sqrt(var + w.dtype.type(self.eps)))).astype(x.dtype, copy=False)

    def infer(self, x):
        return Spec(tuple(x.shape), x.dtype)

    def vjp(self, g, out, x):
        if not x._requires_grad:
            return (None,)
        return (apply(LayerNormGradInput(self.axes, self.eps), g, x),)


@dataclass(frozen=True)
class LayerNormGradInput(Op):
    """``LayerNormalize``'s input gradient from ``(g, x)`` in one op:
    ``rstd * (g - mean(g) - xhat * mean(g * xhat))`` per row of the last ``axes`` dimensions,
    the statistics recomputed from ``x`` (on a GPU one kernel per row, ``rows.layer_norm_grad``;
    on the CPU one numba loop per row, ``_norm_numba``). Its vjp (second order) is the closed
    form written in ember ops, so gradients of any order are exact."""

    axes: int = 1
    eps: float = 1e-5
    saves_inputs = True

    def forward(self, xp, g, x):
        acc = _acc(xp, x.dtype)
        w = _as_rows(xp, x, self.axes).astype(acc, copy=False)
        ga = _as_rows(xp, g, self.axes).astype(acc, copy=False)
        n = acc(w.shape[1])
        _, c, var = _row_moments(xp, w)
        rstd = 1 / xp.sqrt(var + acc(self.eps))
        c *= rstd  # xhat
        if xp is np:
            gx = np.einsum("ij,ij->i", ga, c)[:, None] / n
        else:
            gx = (ga * c).mean(axis=1, keepdims=True)
        dx = ga - ga.sum(axis=1, keepdims=True) / n
        c *= gx
        dx -= c
        dx *= rstd
        return dx.reshape(x.shape).astype(x.dtype, copy=False)

    def infer(self, g, x):
        return Spec(tuple(x.shape), x.dtype)

    def vjp(self, u, out, g, x):
        # dx = r * (g - m(g) - xhat * m(g xhat)) per row (m: the row mean, r = rstd). Linear in
        # g with a self-adjoint projection: dg = r * (u - m(u) - xhat * m(u xhat)). Through x
        # (r and xhat both move; dr/dx = -r^3 (x - mean) / n):
        # dx = -r^2 * (b (g - m(g)) + a (u - m(u)) + xhat (m(u g) - m(u) m(g) - 3 a b)),
        # a = m(g xhat), b = m(u xhat).
        dims = _row_dims(x.ndim, self.axes)
        xa, ua, ga = _wide(x), _wide(u), _wide(g)
        c = xa - xa.mean(dim=dims, keepdim=True)
        r = ((c * c).mean(dim=dims, keepdim=True) + self.eps).rsqrt()
        xhat = c * r
        um = ua.mean(dim=dims, keepdim=True)
        b = (ua * xhat).mean(dim=dims, keepdim=True)
        dg = (r * (ua - um - xhat * b)).to(g.dtype) if g._requires_grad else None
        dx = None
        if x._requires_grad:
            gm = ga.mean(dim=dims, keepdim=True)
            a = (ga * xhat).mean(dim=dims, keepdim=True)
            k = (ua * ga).mean(dim=dims, keepdim=True) - um * gm - 3 * a * b
            dx = (-(r * r) * (b * (ga - gm) + a * (ua - um) + xhat * k)).to(x.dtype)
        return dg, dx


def _abc(shape, start: int, span: int) -> tuple:
    """``(A, C, L)``: the sizes before ``start``, of the ``span`` dims from it, and after."""
    a = c = ell = 1
    for i, s in enumerate(shape):
        if i < start:
            a *= s
        elif i < start + span:
            c *= s
        else:
            ell *= s
    return a, c, ell


@dataclass(frozen=True)
class Affine(Op):
    """``y * weight + bias`` (each optional, as the fields say), ``weight`` / ``bias`` spanning
    the dims of ``y`` from ``start`` (the normalized dims of ``layer_norm``, the channel dim of
    ``group_norm``) and broadcast over the others: one op instead of a multiply and an add, so
    one pass forward, and one ``AffineSums`` for both parameter gradients backward. Inputs and
    parameters share one dtype (the callers keep the composite otherwise)."""

    start: int = 1
    weight: bool = True
    bias: bool = True
    saves_inputs = True

    def params(self, xp, y, wb):
        """``(y as (A, C, L), weight (C, 1) or None, bias (C, 1) or None)``."""
        a, c, ell = _abc(y.shape, self.start, wb[0].ndim)
        w = wb[0].reshape(c, 1) if self.weight else None
        b = wb[-1].reshape(c, 1) if self.bias else None
        return y.reshape(a, c, ell), w, b

    def forward(self, xp, y, *wb):
        y3, w, b = self.params(xp, y, wb)
        out = y3 * w if w is not None else y3.copy()
        if b is not None:
            out += b
        return out.reshape(y.shape)

    def infer(self, y, *wb):
        for p in wb:
            want = tuple(y.shape[self.start : self.start + p.ndim])
            if tuple(p.shape) != want or p.dtype != y.dtype:
                raise ShapeError(
                    f"affine: parameter {tuple(p.shape)} {p.dtype} does not fit input "
                    f"{tuple(y.shape)} {y.dtype} from dim {self.start} (expected {want})"
                )
        return Spec(tuple(y.shape), y.dtype)

    def vjp(self, g, out, y, *wb):
        w = wb[0] if self.weight else None
        b = wb[-1] if self.bias else None
        need_w = w is not None and w._requires_grad
        need_b = b is not None and b._requires_grad
        dy = None
        if y._requires_grad:
            dy = apply(Affine(self.start, True, False), g, w) if w is not None else g
        sums = apply(AffineSums(self.start, wb[0].ndim), g, y) if need_w or need_b else None
        dw = sums[0] if need_w else None
        db = sums[1] if need_b else None
        return (dy,) + ((dw,) if self.weight else ()) + ((db,) if self.bias else ())


@dataclass(frozen=True)
class AffineSums(Op):
    """``(g, y)`` -> ``(2, *P)`` [sum of g * y, sum of g] over every dim of ``y`` but the
    ``span`` dims from ``start`` (``P``): ``Affine``'s weight and bias gradients in one pass
    (summed in float64 by the CPU kernel, float32 for 16-bit types by the NumPy body)."""

    start: int = 1
    span: int = 1
    saves_inputs = True

    def forward(self, xp, g, y):
        acc = _acc(xp, y.dtype)
        shape = y.shape[self.start : self.start + self.span]
        a, c, ell = _abc(y.shape, self.start, self.span)
        g3 = g.reshape(a, c, ell).astype(acc, copy=False)
        y3 = y.reshape(a, c, ell).astype(acc, copy=False)
        s = xp.empty((2, c), acc)
        if xp is np:
            np.einsum("acl,acl->c", g3, y3, out=s[0])
            np.einsum("acl->c", g3, out=s[1])
        else:  # no einsum: CuPy's calls cuBLAS, which a CUDA-graph capture refuses
            xp.sum(g3 * y3, axis=(0, 2), out=s[0])
            xp.sum(g3, axis=(0, 2), out=s[1])
        return s.reshape((2,) + tuple(shape)).astype(y.dtype, copy=False)

    def infer(self, g, y):
        return Spec((2,) + tuple(y.shape[self.start : self.start + self.span]), y.dtype)

    def vjp(self, c, out, g, y):
        # sums = (sum g * y, sum g): dg = c0 * y + c1, dy = c0 * g (both Affine)
        dg = apply(Affine(self.start, True, True), y, c[0], c[1]) if g._requires_grad else None
        dy = apply(Affine(self.start, True, False), g, c[0]) if y._requires_grad else None
        return dg, dy


@register(LayerNormalize, "cuda")
def _layer_norm_cuda(op, xp, x):
    return rows.layer_norm(xp, x, op.axes, op.eps)


@register(LayerNormGradInput, "cuda")
def _layer_norm_grad_input_cuda(op, xp, g, x):
    return rows.layer_norm_grad(xp, g, x, op.axes, op.eps)


# -- batch normalization ---------------------------------------------------------------------


def _acc(xp, dtype):
    """The compute dtype: float64 for float64, float32 for float32 / float16 / bfloat16."""
    return xp.float64 if dtype == xp.float64 else xp.float32


def _acc_dtype(dtype: _dt.DType) -> _dt.DType:
    return _dt.float64 if dtype is _dt.float64 else _dt.float32


def _rows(xp, x):
    """``x`` (N, C, *) as an (N, C, L) array of the compute dtype (a view where it can be)."""
    return x.reshape(x.shape[0], x.shape[1], -1).astype(_acc(xp, x.dtype), copy=False)


def _spread(xp, k, a):
    """A (C,) array ``k`` laid out to broadcast against ``a`` (N, C, L) viewed as (N, C * L):
    one long inner loop per sample instead of N * C loops of L (measured 1.6x to 2.4x faster
    on 64x32x8x8 and 64x64x4x4)."""
    m = a.shape[2]
    return k if m == 1 else xp.repeat(k, m)


def _flat(a):
    return a.reshape(a.shape[0], -1)


def _channel_sum(xp, a):
    """Per-channel sums ``(C,)`` of an (N, C, L) array: two matrix-vector products."""
    n, c, m = a.shape
    if m != 1:
        a = xp.matmul(a.reshape(n * c, m), xp.ones(m, a.dtype))
    return xp.matmul(xp.ones(n, a.dtype), a.reshape(n, c))


def _channel_dot(xp, a, b):
    """Per-channel sums of ``a * b`` for (N, C, L) arrays (on the CPU without the product's
    temporary)."""
    if xp is np:
        return np.einsum("ncl,ncl->c", a, b)
    return _channel_sum(xp, a * b)  # CuPy's einsum calls cuBLAS, which a capture refuses


def _count(shape) -> int:
    """Values per channel: everything but dim 1."""
    m = 1
    for i, s in enumerate(shape):
        if i != 1:
            m *= s
    return m


def _rstd(xp, stats, eps: float, acc):
    return 1 / xp.sqrt(stats[1].astype(acc, copy=False) + acc(eps))


def _channel(t, ndim: int):
    """A (C,) tensor shaped to broadcast along dim 1 of an ``ndim``-D one."""
    return t.reshape((1, -1) + (1,) * (ndim - 2))


def _dims(ndim: int) -> tuple:
    return (0,) + tuple(range(2, ndim))


def _wide(t):
    """``t`` in its compute dtype (float16 / bfloat16 -> float32)."""
    return t if t.dtype in (_dt.float32, _dt.float64) else t.float()


def _xhat(x, stats, eps: float, training: bool):
    """``(xhat, rstd)`` in ember ops on the compute dtype, ``rstd`` shaped (1, C, 1...). In
    training from ``x``'s own moments, so that derivatives through them are exact; in eval
    from ``stats``."""
    xa, nd = _wide(x), x.ndim
    if training:
        c = xa - xa.mean(dim=_dims(nd), keepdim=True)
        var = (c * c).mean(dim=_dims(nd), keepdim=True)
    else:
        c, var = xa - _channel(stats[0], nd), _channel(stats[1], nd)
    r = (var + eps).rsqrt()
    return c * r, r


def _project(v, xhat, dims):
    """``v - mean(v) - xhat * mean(v * xhat)`` per channel: the adjoint of xhat's dependence on
    x through the batch statistics (``d xhat = rstd * _project(d x)``); self-adjoint."""
    return v - v.mean(dim=dims, keepdim=True) - xhat * (v * xhat).mean(dim=dims, keepdim=True)


def _pair(a, b):
    """Two (C,) tensors as one (2, C)."""
    return apply(Cat(0), a.unsqueeze(0), b.unsqueeze(0))


@dataclass(frozen=True)
class BatchMoments(Op):
    """Per-channel mean and biased variance of ``x`` (N, C, *): a ``(2, C)`` array in the
    compute dtype. No gradient: ``BatchNormalize(training=True)`` differentiates through it."""

    differentiable = False

    def forward(self, xp, x):
        a = _rows(xp, x)
        m = a.dtype.type(_count(x.shape))
        mean = _channel_sum(xp, a) / m
        c = (_flat(a) - _spread(xp, mean, a)).reshape(a.shape)
        return xp.stack([mean, _channel_dot(xp, c, c) / m])

    def infer(self, x):
        return Spec((2, x.shape[1]), _acc_dtype(x.dtype))


@dataclass(frozen=True)
class RunningAverage(Op):
    """A running statistic's update from ``(running, stats)``: ``running * (1 - momentum) +
    stats[row] * factor * momentum`` in ``running``'s dtype, rounded step by step as PyTorch's
    ``running.mul_(1 - momentum).add_(...)``; ``row`` 0 is the batch mean, row 1 the biased
    variance with ``factor`` M / (M - 1) (Bessel's correction). ``F.batch_norm`` writes it in
    place (one op per running buffer instead of five; eagerly into the buffer's own array,
    ``out=``, with no copy after it).

    >>> import ember
    >>> apply(RunningAverage(1, 0.5, 2.0), ember.ones(2), ember.tensor([[0.0, 0.0], [1.0, 3.0]]))
    tensor([1.5000, 3.5000])
    """

    row: int = 0
    momentum: float = 0.1
    factor: float = 1.0
    differentiable = False
    writes_out = True  # ``out`` may be ``running`` itself: each value is read before written

    def forward(self, xp, running, stats, out=None):
        s = stats[self.row]
        if self.factor != 1.0:
            s = s * self.factor
        y = xp.multiply(running, running.dtype.type(1 - self.momentum), out=out)
        y += (s * self.momentum).astype(running.dtype)
        return y

    def infer(self, running, stats):
        return Spec(tuple(running.shape), running.dtype)


@dataclass(frozen=True)
class BatchNormalize(Op):
    """``(x - mean) * rstd * weight + bias`` per channel (dim 1); inputs ``(x, stats, [weight],
    [bias])`` (``weight`` / ``bias`` present as the fields say), ``stats`` (2, C) [mean, var].

    ``training=True``: ``stats`` are ``BatchMoments(x)`` and ``x``'s gradient goes through them.
    """

    eps: float = 1e-5
    training: bool = True
    weight: bool = False
    bias: bool = False
    saves_inputs = True
    node_name = "NativeBatchNormBackward0"

    def coefficients(self, xp, stats, *wb):
        """Per-channel ``(scale, shift)`` with ``y = x * scale + shift``, in the compute dtype."""
        acc = stats.dtype.type
        scale = _rstd(xp, stats, self.eps, acc)
        if self.weight:
            scale = scale * wb[0].astype(acc, copy=False)
        shift = -stats[0].astype(acc, copy=False) * scale
        if self.bias:
            shift = shift + wb[-1].astype(acc, copy=False)
        return scale, shift

    def forward(self, xp, x, stats, *wb):
        stats = stats.astype(_acc(xp, x.dtype), copy=False)
        scale, shift = self.coefficients(xp, stats, *wb)
        a = _rows(xp, x)
        y = _flat(a) * _spread(xp, scale, a)
        y += _spread(xp, shift, a)
        return y.reshape(x.shape).astype(x.dtype, copy=False)

    def infer(self, x, stats, *wb):
        return Spec(tuple(x.shape), x.dtype)

    def vjp(self, g, out, x, stats, *wb):
        w = wb[0] if self.weight else None
        b = wb[-1] if self.bias else None
        need_w = w is not None and w._requires_grad
        need_b = b is not None and b._requires_grad
        sums = None
        if need_w or need_b or (self.training and x._requires_grad):
            sums = apply(BatchNormSums(self.eps, self.training), g, x, stats)
        dx = None
        if x._requires_grad:
            if self.training:
                dx = apply(BatchNormGradInput(self.eps, self.weight), g, x, stats, sums, *wb[:1])
            else:
                scale = (stats[1] + self.eps).rsqrt()
                scale = scale * w if w is not None else scale
                dx = (g * _channel(scale, g.ndim)).to(x.dtype)
        if need_w and need_b and w.dtype == b.dtype:  # one cast of the pair (16-bit params)
            sums = sums.to(w.dtype)
        dw = sums[1].to(w.dtype) if need_w else None
        db = sums[0].to(b.dtype) if need_b else None
        return (dx, None) + ((dw,) if self.weight else ()) + ((db,) if self.bias else ())


@dataclass(frozen=True)
class BatchNormSums(Op):
    """``(g, x, stats)`` -> (2, C) [sum of g, sum of g * xhat] per channel, compute dtype."""

    eps: float = 1e-5
    training: bool = True
    saves_inputs = True

    def forward(self, xp, g, x, stats):
        acc = _acc(xp, x.dtype)
        stats = stats.astype(acc, copy=False)
        g3, a = _rows(xp, g), _rows(xp, x)
        c = (_flat(a) - _spread(xp, stats[0], a)).reshape(a.shape)
        sgx = _channel_dot(xp, g3, c) * _rstd(xp, stats, self.eps, acc)
        return xp.stack([_channel_sum(xp, g3), sgx])

    def infer(self, g, x, stats):
        return Spec((2, x.shape[1]), _acc_dtype(x.dtype))

    def vjp(self, c, out, g, x, stats):
        nd = x.ndim
        xhat, r = _xhat(x, stats, self.eps, self.training)
        c0, c1 = _channel(c[0], nd), _channel(c[1], nd)
        dg = (c0 + c1 * xhat).to(g.dtype) if g._requires_grad else None
        dx = None
        if x._requires_grad:
            ga = _wide(g)
            dx = c1 * r * (_project(ga, xhat, _dims(nd)) if self.training else ga)
            dx = dx.to(x.dtype)
        return dg, dx, None


@dataclass(frozen=True)
class BatchNormGradInput(Op):
    """Training batch norm's input gradient from ``(g, x, stats, sums, [weight])``, ``sums``
    being ``BatchNormSums(g, x, stats)``: ``weight * rstd * (g - A/M - xhat * B/M)``."""

    eps: float = 1e-5
    weight: bool = False
    saves_inputs = True

    def coefficients(self, xp, x_shape, stats, sums, *w):
        """Per-channel ``(k1, k2, k3)`` with ``dx = k1 * g + k2 * (x - mean) + k3``."""
        acc = stats.dtype.type
        m = acc(_count(x_shape))
        r = _rstd(xp, stats, self.eps, acc)
        k1 = r * w[0].astype(acc, copy=False) if self.weight else r
        sums = sums.astype(acc, copy=False)
        return k1, -k1 * r * sums[1] / m, -k1 * sums[0] / m

    def forward(self, xp, g, x, stats, sums, *w):
        acc = _acc(xp, x.dtype)
        stats = stats.astype(acc, copy=False)
        k1, k2, k3 = self.coefficients(xp, x.shape, stats, sums, *w)
        a = _rows(xp, x)
        t = _flat(a) - _spread(xp, stats[0], a)
        t *= _spread(xp, k2, a)
        t += _spread(xp, k3, a)
        t += _flat(_rows(xp, g)) * _spread(xp, k1, a)
        return t.reshape(x.shape).astype(x.dtype, copy=False)

    def infer(self, g, x, stats, sums, *w):
        return Spec(tuple(x.shape), x.dtype)

    def vjp(self, u, out, g, x, stats, sums, *w):
        nd, dims = x.ndim, _dims(x.ndim)
        m = _count(x.shape)
        xhat, r = _xhat(x, stats, self.eps, True)
        ua = _wide(u)
        wr = r * _channel(w[0], nd) if self.weight else r
        a, b = _channel(sums[0], nd), _channel(sums[1], nd)
        dg = (wr * ua).to(g.dtype) if g._requires_grad else None
        dsums = None
        if sums._requires_grad:
            wru = wr * ua
            dsums = _pair(-wru.sum(dim=dims) / m, -(wru * xhat).sum(dim=dims) / m)
            dsums = dsums.to(sums.dtype)
        inner = ua * (_wide(g) - a / m - xhat * b / m)  # u * dx / (weight * rstd)
        dw = None
        if self.weight and w[0]._requires_grad:
            dw = (inner.sum(dim=dims) * r.reshape(-1)).to(w[0].dtype)
        dx = None
        if x._requires_grad:
            k = inner.sum(dim=dims, keepdim=True)
            dx = (-(wr * r / m) * (k * xhat + b * _project(ua, xhat, dims))).to(x.dtype)
        return (dg, dx, None, dsums) + ((dw,) if self.weight else ())


@register(Affine, "cuda")
def _affine_cuda(op, xp, y, *wb):
    a, c, ell = _abc(y.shape, op.start, wb[0].ndim)
    w = wb[0] if op.weight else None
    b = wb[-1] if op.bias else None
    return _bn_kernels.affine(xp, y, w, b, a, c, ell)


@register(RunningAverage, "cuda")
def _running_average_cuda(op, xp, running, stats, out=None):
    return _bn_kernels.running_average(xp, running, stats, op.row, op.momentum, op.factor, out)


_running_average_cuda.writes_out = True  # F.batch_norm's update: into the buffer, no copy


@register(AffineSums, "cuda")
def _affine_sums_cuda(op, xp, g, y):
    """Layer norm's case (the parameters span the last dims): one column-sum kernel pass."""
    a, c, ell = _abc(y.shape, op.start, op.span)
    if ell != 1:
        return NotImplemented
    out = _sums.affine_sums(xp, g, y, a, c)
    if out is NotImplemented:
        return out
    return out.reshape((2,) + tuple(y.shape[op.start : op.start + op.span]))


@register(BatchMoments, "cuda")
def _batch_moments_cuda(op, xp, x):
    return _bn_kernels.moments(xp, x)


@register(BatchNormSums, "cuda")
def _batch_norm_sums_cuda(op, xp, g, x, stats):
    return _bn_kernels.sums(xp, g, x, stats, op.eps)


@register(BatchNormalize, "cuda")
def _batch_normalize_cuda(op, xp, x, stats, *wb):
    w = wb[0] if op.weight else None
    b = wb[-1] if op.bias else None
    return _bn_kernels.normalize(xp, x, stats, w, b, op.eps)


@register(BatchNormGradInput, "cuda")
def _batch_norm_grad_input_cuda(op, xp, g, x, stats, sums, *w):
    return _bn_kernels.grad_input(xp, g, x, stats, sums, w[0] if op.weight else None, op.eps)


# -- CPU overrides: one numba loop per op, in the input's own layout (``_norm_numba``) -------


def _numba_rows(x, axes: int, *others):
    """``(kernels, x as C-contiguous (rows, n), others likewise)`` where the numba layer-norm
    kernels serve ``x`` (float32 / float64, not empty, ``others`` of its dtype), else None."""
    mod = _norm_numba.row_kernels(x.dtype) if x.size else None
    if mod is None or any(o.dtype != x.dtype for o in others):
        return None
    return (mod,) + tuple(np.ascontiguousarray(_as_rows(np, a, axes)) for a in (x, *others))


@register(LayerNormalize, "cpu")
def _layer_norm_cpu(op, xp, x):
    found = _numba_rows(x, op.axes)
    if found is None:
        return NotImplemented
    mod, x2 = found
    y = np.empty(x2.shape, x.dtype)
    mod.layer_norm(x2, float(op.eps), y)
    return y.reshape(x.shape)


@register(Affine, "cpu")
def _affine_cpu(op, xp, y, *wb):
    """Batch norm's ``normalize`` kernel (per-channel ``y * scale + shift``) on the (A, C, L)
    view, as (A, 1, C) channels-last when L is 1 (layer norm's parameters span the rows)."""
    mod = _norm_numba.kernels(y.dtype) if y.size else None
    if mod is None or any(p.dtype != y.dtype for p in wb):
        return NotImplemented
    y3, w, b = op.params(np, np.ascontiguousarray(y), wb)
    a, c, ell = y3.shape
    w = np.ones(c, y.dtype) if w is None else np.ascontiguousarray(w.reshape(-1))
    b = np.zeros(c, y.dtype) if b is None else np.ascontiguousarray(b.reshape(-1))
    last = ell == 1
    view = y3.reshape(a, 1, c) if last else y3
    out = np.empty(view.shape, y.dtype)
    mod.normalize(view, last, w, b, out, _norm_numba.parts(view))
    return out.reshape(y.shape)


@register(AffineSums, "cpu")
def _affine_sums_cpu(op, xp, g, y):
    mod = _norm_numba.row_kernels(y.dtype) if y.size else None
    if mod is None or g.dtype != y.dtype:
        return NotImplemented
    abc = _abc(y.shape, op.start, op.span)
    out = np.empty((2, abc[1]), y.dtype)
    g3, y3 = (np.ascontiguousarray(a).reshape(abc) for a in (g, y))
    mod.affine_sums(g3, y3, out)
    return out.reshape((2,) + tuple(y.shape[op.start : op.start + op.span]))


@register(LayerNormGradInput, "cpu")
def _layer_norm_grad_input_cpu(op, xp, g, x):
    found = _numba_rows(x, op.axes, g)
    if found is None:
        return NotImplemented
    mod, x2, g2 = found
    dx = np.empty(x2.shape, x.dtype)
    mod.layer_norm_grad(g2, x2, float(op.eps), dx)
    return dx.reshape(x.shape)


def _numba_view(x):
    """``(kernels, 3-D view, last)`` where the numba kernels serve ``x``, else None."""
    mod = _norm_numba.kernels(x.dtype)
    if mod is None:
        return None
    v = _norm_numba.view(x)
    return None if v is None else (mod, *v)


@register(BatchMoments, "cpu")
def _batch_moments_cpu(op, xp, x):
    found = _numba_view(x)
    if found is None:
        return NotImplemented
    mod, x3, last = found
    stats = np.empty((2, x.shape[1]), _acc(np, x.dtype))
    mod.moments(x3, last, stats)
    return stats


@register(BatchNormalize, "cpu")
def _batch_normalize_cpu(op, xp, x, stats, *wb):
    found = _numba_view(x)
    if found is None:
        return NotImplemented
    mod, x3, last = found
    acc = _acc(np, x.dtype)
    scale, shift = op.coefficients(np, stats.astype(acc, copy=False), *wb)
    y, y3 = _norm_numba.like(x, last)
    scale, shift = np.ascontiguousarray(scale, acc), np.ascontiguousarray(shift, acc)
    mod.normalize(x3, last, scale, shift, y3, _norm_numba.parts(x3))
    return y


def _numba_backward(g, x, stats):
    """``(kernels, 3-D view of x, last, g in x's layout, accumulation dtype, stats in it)`` for
    the two backward kernels, or None where they do not serve (then the op's body runs)."""
    found = _numba_view(x) if g.dtype == x.dtype else None
    if found is None:
        return None
    mod, x3, last = found
    acc = _acc(np, x.dtype)
    return mod, x3, last, _norm_numba.as_layout(g, last), acc, stats.astype(acc, copy=False)


@register(BatchNormSums, "cpu")
def _batch_norm_sums_cpu(op, xp, g, x, stats):
    found = _numba_backward(g, x, stats)
    if found is None:
        return NotImplemented
    mod, x3, last, g3, acc, stats = found
    out = np.empty((2, x.shape[1]), acc)
    mod.sums(g3, x3, last, np.ascontiguousarray(stats[0]), out)
    out[1] *= _rstd(np, stats, op.eps, acc)
    return out


@register(BatchNormGradInput, "cpu")
def _batch_norm_grad_input_cpu(op, xp, g, x, stats, sums, *w):
    found = _numba_backward(g, x, stats)
    if found is None:
        return NotImplemented
    mod, x3, last, g3, acc, stats = found
    k1, k2, k3 = (
        np.ascontiguousarray(k, acc) for k in op.coefficients(np, x.shape, stats, sums, *w)
    )
    dx, dx3 = _norm_numba.like(x, last)
    mean = np.ascontiguousarray(stats[0])
    mod.grad_input(g3, x3, last, mean, k1, k2, k3, dx3, _norm_numba.parts(x3))
    return dx


__all__ = [
    "Affine",
    "AffineSums",
    "BatchMoments",
    "BatchNormGradInput",
    "BatchNormSums",
    "BatchNormalize",
    "LayerNormGradInput",
    "LayerNormalize",
]
