"""Convolution as im2col + one matrix product, channels-last (the lecture's method, made fast).

Three primitives close under differentiation, so gradients of any order are more convolutions:

- ``Conv2d(x, w)``            -> y   (N, C, H, W) * (O, C/g, kh, kw) -> (N, O, Ho, Wo)
- ``Conv2dGradInput(g, w)``   -> dx  (also the forward of ConvTranspose2d)
- ``Conv2dGradWeight(x, g)``  -> dw

The patches are gathered from a channels-last (N, H, W, C) copy of the padded input, so each
patch row (kh, kw, C) is contiguous runs of memory and the product is a single GEMM with
K = kh * kw * C / groups. Outputs come back as NCHW-shaped views of channels-last memory, which
is exactly the layout the next convolution wants (no transpose copy there; a 1x1 unpadded
convolution then reads its input in place).

Where the time goes (64x64x32x32 input, 64 3x3 filters, float32): the three GEMMs dominate;
the rest is the channels-last padded copy and the im2col gather. Both of those are transient,
so they live in per-thread scratch buffers that are reused from call to call: a fresh 150 MB
patch matrix costs ~20 ms of page faults on every call, more than the gather itself. The
scratch buffers keep the largest size seen (``release_scratch()`` frees them). Large copies
are split over the cores (NumPy releases the GIL while copying). Conv2dGradWeight reuses the
patches of the forward pass when that was the thread's last convolution of the same input.

On the GPU (CuPy) each primitive's CUDA override (registered at the end of this file) asks
NVIDIA's cuDNN frontend (``ember.backend.kernels.conv``: fprop, dgrad and wgrad graphs, cached
per shape); without it, or for a case cuDNN has no plan for, the override declines and the same
im2col + GEMM code below runs on CuPy arrays (cuBLAS GEMMs, following the float32 matmul
precision setting; scratch buffers are then fresh device arrays, ``backend.memory.scratch``).

Two choices by shape: few input channels (LeNet's first layer) gather channel-first
("planar") patches, whose rows are whole output rows instead of runs of kw * C values; the
input gradient gathers (a convolution with the flipped kernel) when O <= C and otherwise
scatters (one GEMM per kernel offset, added into a window of the padded gradient).

>>> import ember
>>> from ember.ops.base import apply
>>> x, w = ember.ones(1, 1, 4, 4), ember.ones(2, 1, 3, 3)
>>> apply(Conv2d((1, 1), (1, 1), (1, 1), 1), x, w).shape
ember.Size([1, 2, 4, 4])
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import numpy as np

from .._errors import ShapeError
from ..backend import memory as _memory
from ..backend import overrides
from ..backend.arrays import strided_view
from ..backend.kernels import conv as _cudnn
from ..backend.memory import scratch as _scratch
from .base import Op, Spec, apply

_local = threading.local()


def release_scratch() -> None:
    """Free this thread's convolution scratch buffers.

    >>> release_scratch()
    """
    _memory.release_scratch()
    _local.cols_of = None


_pool = None
_pool_pid = None
_PARALLEL_BYTES = 1 << 22
# copies are memory-bound: a few threads saturate the memory bus
_WORKERS = min(
    len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 8
)


def _copy(dst, src) -> None:
    """``dst[...] = src``, split over the CPU cores for large arrays (NumPy drops the GIL)."""
    global _pool, _pool_pid
    workers = _WORKERS
    axis = 0 if dst.shape[0] >= workers else 1
    if (
        workers == 1
        or dst.ndim < 2
        or dst.shape[axis] < workers
        or dst.nbytes < _PARALLEL_BYTES
        or type(dst) is not np.ndarray
    ):
        dst[...] = src
        return
    if _pool is None or _pool_pid != os.getpid():  # a forked child has none of the threads
        from concurrent.futures import ThreadPoolExecutor

        _pool = ThreadPoolExecutor(workers - 1, thread_name_prefix="ember-copy")
        _pool_pid = os.getpid()
    n = dst.shape[axis]
    bounds = [n * i // workers for i in range(workers + 1)]

    def part(i: int) -> None:
        index = (slice(None),) * axis + (slice(bounds[i], bounds[i + 1]),)
        dst[index] = src[index]

    futures = [_pool.submit(part, i) for i in range(1, workers)]
    part(0)
    for f in futures:
        f.result()


def out_size(size: int, k: int, s: int, p: int, d: int) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _padded_nhwc(xp, x, padding, slot: str | None = None):
    """x (N, C, H, W) -> zero-padded channels-last (N, H + 2ph, W + 2pw, C).

    No copy when there is no padding and x is already channels-last memory (the output of a
    previous convolution); otherwise one copy, into scratch memory when ``slot`` is given.
    """
    n, c, h, w = x.shape
    ph, pw = padding
    nhwc = x.transpose(0, 2, 3, 1)
    if not (ph or pw) and nhwc.flags.c_contiguous:
        return nhwc
    shape = (n, h + 2 * ph, w + 2 * pw, c)
    out = _scratch(xp, slot, shape, x.dtype) if slot else xp.empty(shape, dtype=x.dtype)
    if ph or pw:
        out[:, :ph] = 0
        out[:, h + ph :] = 0
        out[:, ph : h + ph, :pw] = 0
        out[:, ph : h + ph, w + pw :] = 0
    _copy(out[:, ph : h + ph, pw : w + pw], nhwc)
    return out


def _patches(xp, xpad, kh, kw, ho, wo, stride, dilation):
    """A (N, Ho, Wo, kh, kw, C) strided view of the padded channels-last input."""
    n, _, _, c = xpad.shape
    s_n, s_h, s_w, s_c = xpad.strides
    shape = (n, ho, wo, kh, kw, c)
    strides = (s_n, s_h * stride[0], s_w * stride[1], s_h * dilation[0], s_w * dilation[1], s_c)
    return strided_view(xpad, shape, strides)


def planar(x_shape, kernel, stride, groups: int) -> bool:
    """Whether a convolution gathers channel-first ("planar", Caffe's) patches: for few
    channels, whose channels-last patch rows would be short runs of kw * C values, while planar
    rows are runs of a whole output row (stride 1 along the width)."""
    return groups == 1 and stride[1] == 1 and 2 * kernel[1] * x_shape[1] <= x_shape[3]


def im2col(
    xp,
    x,
    kernel,
    stride,
    padding,
    dilation,
    slot: str | None = None,
    reuse: bool = False,
    layout: str = "nhwc",
):
    """x (N, C, H, W) -> cols (N * Ho * Wo, kh * kw * C) with the patch in (kh, kw, C) order,
    or with ``layout="planar"`` (N, C * kh * kw, Ho * Wo).

    With a scratch ``slot`` the result may live in (or be a view of) this thread's scratch
    memory, or of ``x``: only for callers that are done with it before the next convolution.
    The ``"cols"`` slot remembers whose patches it holds, so that the weight gradient that
    follows a forward pass (the usual order for the last convolution of a network) can
    ``reuse`` them: only for Conv2dGradWeight, whose input ``x`` the autograd engine has checked
    to be unchanged since the forward pass (version counter); a forward pass never reuses.
    """
    n, c, h, w = x.shape
    kh, kw = kernel
    ho = out_size(h, kh, stride[0], padding[0], dilation[0])
    wo = out_size(w, kw, stride[1], padding[1], dilation[1])
    m, k = n * ho * wo, kh * kw * c
    if slot is None:
        view = _patches(xp, _padded_nhwc(xp, x, padding), kh, kw, ho, wo, stride, dilation)
        return view.reshape(m, k), ho, wo
    tag = (kernel, stride, padding, dilation, layout)
    held = getattr(_local, "cols_of", None) if reuse else None
    if held is not None and held[0] is x and held[1] == tag:
        return held[2], ho, wo
    if layout == "planar":
        xpad = _padded_nchw(xp, x, padding)
        s_n, s_c, s_h, s_w = xpad.strides
        shape = (n, c, kh, kw, ho, wo)
        strides = (s_n, s_c, s_h * dilation[0], s_w * dilation[1], s_h * stride[0], s_w * stride[1])
        view = strided_view(xpad, shape, strides)
        cols = _scratch(xp, slot, shape, x.dtype)
        final = (n, k, ho * wo)
    else:
        xpad = _padded_nhwc(xp, x, padding, "pad")
        if (kh, kw) == (1, 1) and stride == (1, 1) and xpad.flags.c_contiguous:
            return xpad.reshape(m, k), ho, wo  # a 1x1 convolution reads the input in place
        view = _patches(xp, xpad, kh, kw, ho, wo, stride, dilation)
        cols = _scratch(xp, slot, (n, ho, wo, kh, kw, c), x.dtype)
        final = (m, k)
    if slot == "cols":
        _local.cols_of = None  # being overwritten
    _copy(cols, view)
    cols = cols.reshape(final)
    if slot == "cols":
        _local.cols_of = (x, tag, cols)
    return cols, ho, wo


def _padded_nchw(xp, x, padding):
    """x zero-padded in its own (N, C, H, W) layout, in scratch memory (x itself if unpadded)."""
    ph, pw = padding
    if not (ph or pw):
        return x
    n, c, h, w = x.shape
    out = _scratch(xp, "pad", (n, c, h + 2 * ph, w + 2 * pw), x.dtype)
    out[:, :, :ph] = 0
    out[:, :, h + ph :] = 0
    out[:, :, ph : h + ph, :pw] = 0
    out[:, :, ph : h + ph, w + pw :] = 0
    _copy(out[:, :, ph : h + ph, pw : w + pw], x)
    return out


def col2im(xp, cols, x_shape, kernel, stride, padding, dilation):
    """The adjoint of im2col: scatter-add (N*Ho*Wo, kh*kw*C) patch rows back to (N, C, H, W)."""
    n, c, h, w = x_shape
    kh, kw = kernel
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    ho = out_size(h, kh, sh, ph, dh)
    wo = out_size(w, kw, sw, pw, dw)
    patches = cols.reshape(n, ho, wo, kh, kw, c)
    out = xp.zeros((n, h + 2 * ph, w + 2 * pw, c), dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dh, i * dh + sh * (ho - 1) + 1, sh)
            cols_ = slice(j * dw, j * dw + sw * (wo - 1) + 1, sw)
            out[:, rows, cols_] += patches[:, :, :, i, j]
    return out[:, ph : ph + h, pw : pw + w].transpose(0, 3, 1, 2)


def _weight_matrix(xp, w, groups: int):
    """(O, C/g, kh, kw) -> contiguous (g, kh * kw * C/g, O/g), matching im2col's order."""
    o, cg, kh, kw = w.shape
    wm = w.reshape(groups, o // groups, cg, kh, kw).transpose(0, 3, 4, 2, 1)
    return xp.ascontiguousarray(wm).reshape(groups, kh * kw * cg, o // groups)


def _grouped(a, groups: int, k: int):
    """(M, k * C) in (k, C) order -> (g, M, k * C/g) in (k, C/g) order (a copy when g > 1)."""
    if groups == 1:
        return a[None]
    m, kc = a.shape
    c = kc // k
    return a.reshape(m, k, groups, c // groups).transpose(2, 0, 1, 3).reshape(groups, m, -1)


def _ungrouped(a, groups: int, k: int):
    """(g, M, k * C/g) -> (M, k * C): the inverse of _grouped."""
    if groups == 1:
        return a[0]
    g, m, kc = a.shape
    return a.reshape(g, m, k, kc // k).transpose(1, 2, 0, 3).reshape(m, -1)


def _nhwc_rows(g):
    """(N, O, Ho, Wo) -> (N * Ho * Wo, O): free for channels-last memory, else one copy."""
    n, o, ho, wo = g.shape
    return g.transpose(0, 2, 3, 1).reshape(n * ho * wo, o)


def _keep_dtype(out, like):
    """``out`` in ``like``'s dtype: NumPy's bfloat16 (ml_dtypes) matmul answers in float32."""
    return out if out.dtype == like.dtype else out.astype(like.dtype)


@dataclass(frozen=True)
class _ConvParams(Op):
    stride: tuple = (1, 1)
    padding: tuple = (0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    saves_inputs = True


@dataclass(frozen=True)
class Conv2d(_ConvParams):
    """2-D cross-correlation (PyTorch's conv2d) without bias."""

    _slot = "cols"

    def forward(self, xp, x, w):
        n = x.shape[0]
        o, _, kh, kw = w.shape
        g = self.groups
        if planar(x.shape, (kh, kw), self.stride, g):
            cols, ho, wo = im2col(
                xp,
                x,
                (kh, kw),
                self.stride,
                self.padding,
                self.dilation,
                self._slot,
                layout="planar",
            )
            out = xp.matmul(w.reshape(o, -1), cols)  # (N, O, Ho * Wo): NCHW
            return _keep_dtype(out.reshape(n, o, ho, wo), x)
        cols, ho, wo = im2col(xp, x, (kh, kw), self.stride, self.padding, self.dilation, self._slot)
        wm = _weight_matrix(xp, w, g)
        if g == 1:
            out = xp.matmul(cols, wm[0])
        else:
            out = _ungrouped(xp.matmul(_grouped(cols, g, kh * kw), wm), g, 1)
        return _keep_dtype(out.reshape(n, ho, wo, o).transpose(0, 3, 1, 2), x)

    def infer(self, x, w):
        return Spec(conv_output_shape(x.shape, w.shape, self), x.dtype)

    def vjp(self, g, out, x, w):
        p = (self.stride, self.padding, self.dilation, self.groups)
        return (
            apply(Conv2dGradInput(tuple(x.shape), *p), g, w) if x._requires_grad else None,
            apply(Conv2dGradWeight(tuple(w.shape), *p), x, g) if w._requires_grad else None,
        )


@dataclass(frozen=True)
class _GradInputConv(Conv2d):
    """Conv2d's forward for Conv2dGradInput's stride-1 case, in a scratch slot of its own (so
    the forward pass's patches stay for Conv2dGradWeight)."""

    _slot = "cols_t"


@dataclass(frozen=True)
class Conv2dGradInput(Op):
    """dx = conv2d's input gradient for output gradient g (the transposed convolution)."""

    x_shape: tuple = ()
    stride: tuple = (1, 1)
    padding: tuple = (0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    saves_inputs = True

    def forward(self, xp, g, w):
        o, cg, kh, kw = w.shape
        groups = self.groups
        (ph, pw), (dh, dw) = self.padding, self.dilation
        full = (dh * (kh - 1) - ph, dw * (kw - 1) - pw)
        n, _, ho, wo = g.shape
        same_size = (ho + 2 * full[0] - dh * (kh - 1), wo + 2 * full[1] - dw * (kw - 1))
        gather = o <= cg * groups  # gathering reads kh*kw*O values per pixel, scattering kh*kw*C
        if (
            gather
            and self.stride == (1, 1)
            and min(full) >= 0
            and same_size == tuple(self.x_shape[2:])
        ):
            # stride 1: dx is a convolution of g with the flipped, in/out-swapped kernel, which
            # gathers (one im2col) instead of scattering (kh * kw strided adds of col2im).
            wt = w.reshape(groups, o // groups, cg, kh, kw).transpose(0, 2, 1, 3, 4)
            wt = wt.reshape(cg * groups, o // groups, kh, kw)[:, :, ::-1, ::-1]
            conv = _GradInputConv((1, 1), full, self.dilation, groups)
            return overrides.run(conv, xp, g, wt)  # cuDNN's fprop where it serves
        return self._scatter(xp, g, w)

    def _scatter(self, xp, g, w):
        """dx by scattering: for each kernel offset (i, j), one GEMM g (M, O) @ w_ij (O, C)
        gives contiguous (N, Ho, Wo, C) contributions, added into a strided window of the
        padded channels-last dx (runs of Wo * C values at stride 1)."""
        o, cg, kh, kw = w.shape
        groups, og = self.groups, o // self.groups
        n, c, h, wd = self.x_shape
        _, _, ho, wo = g.shape
        (sh, sw), (ph, pw), (dh, dw) = self.stride, self.padding, self.dilation
        g2 = _nhwc_rows(g)  # (M, O)
        if groups > 1:
            g2 = g2.reshape(-1, groups, og).transpose(1, 0, 2)  # (G, M, O/G)
        # (kh, kw, G, O/G, C/G): each offset's weights as matrices, one contiguous copy
        wk = xp.ascontiguousarray(w.reshape(groups, og, cg, kh, kw).transpose(3, 4, 0, 1, 2))
        out = xp.zeros((n, h + 2 * ph, wd + 2 * pw, c), dtype=g.dtype)
        part = _scratch(xp, "cols_t", (groups, g2.shape[-2], cg), g.dtype)
        for i in range(kh):
            rows = slice(i * dh, i * dh + sh * (ho - 1) + 1, sh)
            for j in range(kw):
                cols = slice(j * dw, j * dw + sw * (wo - 1) + 1, sw)
                if groups == 1:
                    xp.matmul(g2, wk[i, j, 0], out=part[0])
                    out[:, rows, cols] += part[0].reshape(n, ho, wo, c)
                else:
                    xp.matmul(g2, wk[i, j], out=part)
                    out[:, rows, cols] += (
                        part.reshape(groups, n, ho, wo, cg)
                        .transpose(1, 2, 3, 0, 4)
                        .reshape(n, ho, wo, c)
                    )
        return out[:, ph : ph + h, pw : pw + wd].transpose(0, 3, 1, 2)

    def infer(self, g, w):
        return Spec(self.x_shape, g.dtype)

    def vjp(self, h, out, g, w):
        p = (self.stride, self.padding, self.dilation, self.groups)
        return (
            apply(Conv2d(*p), h, w) if g._requires_grad else None,
            apply(Conv2dGradWeight(tuple(w.shape), *p), h, g) if w._requires_grad else None,
        )


@dataclass(frozen=True)
class Conv2dGradWeight(Op):
    """dw = conv2d's weight gradient for input x and output gradient g."""

    w_shape: tuple = ()
    stride: tuple = (1, 1)
    padding: tuple = (0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    saves_inputs = True

    def forward(self, xp, x, g):
        o, cg, kh, kw = self.w_shape
        groups = self.groups
        if planar(x.shape, (kh, kw), self.stride, groups):
            cols, ho, wo = im2col(
                xp,
                x,
                (kh, kw),
                self.stride,
                self.padding,
                self.dilation,
                "cols",
                reuse=True,
                layout="planar",
            )
            g3 = g.reshape(g.shape[0], o, ho * wo)
            dw = xp.matmul(g3, cols.transpose(0, 2, 1)).sum(axis=0)  # (O, C * kh * kw)
            return _keep_dtype(dw.reshape(o, cg, kh, kw), x)
        cols, _, _ = im2col(
            xp, x, (kh, kw), self.stride, self.padding, self.dilation, "cols", reuse=True
        )
        g2 = _nhwc_rows(g)
        if groups == 1:
            dw = xp.matmul(cols.T, g2)[None]  # (1, K, O): K in (kh, kw, C) order
        else:
            gg = g2.reshape(-1, groups, o // groups).transpose(1, 0, 2)  # (G, M, O/G)
            dw = xp.matmul(_grouped(cols, groups, kh * kw).transpose(0, 2, 1), gg)
        dw = dw.reshape(groups, kh, kw, cg, o // groups).transpose(0, 4, 3, 1, 2)
        return _keep_dtype(xp.ascontiguousarray(dw).reshape(o, cg, kh, kw), x)

    def infer(self, x, g):
        return Spec(self.w_shape, x.dtype)

    def vjp(self, h, out, x, g):
        p = (self.stride, self.padding, self.dilation, self.groups)
        return (
            apply(Conv2dGradInput(tuple(x.shape), *p), g, h) if x._requires_grad else None,
            apply(Conv2d(*p), x, h) if g._requires_grad else None,
        )


# -- CUDA overrides: cuDNN graphs where the frontend serves the call, else the forwards above ---


@overrides.register(Conv2d, "cuda")
def _conv2d_cuda(op, xp, x, w):
    return _cudnn.fprop(xp, x, w, op.stride, op.padding, op.dilation, op.groups)


@overrides.register(Conv2dGradInput, "cuda")
def _conv2d_grad_input_cuda(op, xp, g, w):
    return _cudnn.dgrad(xp, g, w, op.x_shape, op.stride, op.padding, op.dilation, op.groups)


@overrides.register(Conv2dGradWeight, "cuda")
def _conv2d_grad_weight_cuda(op, xp, x, g):
    return _cudnn.wgrad(xp, x, g, op.w_shape, op.stride, op.padding, op.dilation, op.groups)


def conv_output_shape(x_shape, w_shape, p) -> tuple:
    """Output shape of a 2-D convolution, or a ShapeError naming the mismatch."""
    if len(x_shape) != 4 or len(w_shape) != 4:
        raise ShapeError(
            f"conv2d: expected a 4-D input (N, C, H, W) and a 4-D weight (O, C/groups, kh, kw), "
            f"got input {tuple(x_shape)} and weight {tuple(w_shape)}"
        )
    n, c, h, w = x_shape
    o, cg, kh, kw = w_shape
    if p.groups <= 0:
        raise ShapeError(f"conv2d: groups must be a positive integer, got {p.groups}")
    if c != cg * p.groups:
        raise ShapeError(
            f"conv2d: expected input with {cg * p.groups} channels, got {c} (input shape "
            f"{tuple(x_shape)}, weight shape {tuple(w_shape)}, groups={p.groups})"
        )
    if o % p.groups:
        raise ShapeError(
            f"conv2d: out channels {o} (weight shape {tuple(w_shape)}) not divisible by "
            f"groups {p.groups}"
        )
    if min(p.stride) <= 0 or min(p.dilation) <= 0 or min(p.padding) < 0:
        raise ShapeError(
            f"conv2d: stride {p.stride} and dilation {p.dilation} must be positive and padding "
            f"{p.padding} non-negative"
        )
    ho = out_size(h, kh, p.stride[0], p.padding[0], p.dilation[0])
    wo = out_size(w, kw, p.stride[1], p.padding[1], p.dilation[1])
    if ho <= 0 or wo <= 0:
        raise ShapeError(
            f"conv2d: input {tuple(x_shape)} (padded by {p.padding}) is smaller than the "
            f"dilated kernel {(kh, kw)} with dilation {p.dilation}: output would be {(ho, wo)}"
        )
    return (n, o, ho, wo)
