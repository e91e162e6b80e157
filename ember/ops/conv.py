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
the rest is the channels-last padded copy and the im2col gather. On the host a batch whose
patch matrix exceeds twice ``backend.memory.block_bytes`` (256 MiB) is gathered a block of
images at a time (``_spans``), each block's GEMM writing straight into its rows of the output
(the weight gradient adds the blocks' products up), so the scratch is a block instead of the
whole patch matrix. Smaller batches go in one block: small blocks lose badly when another
process shares the cores (each GEMM waits for BLAS's threads) and a blocked forward pass leaves
no patches for the weight gradient to reuse (figures in ``backend/memory.py``). The transient
buffers live in per-thread scratch that is reused from call to call
(``backend.memory.scratch``; a fresh patch matrix costs page faults on every call) and keeps
the largest size seen (``release_scratch()`` frees it). The host GEMMs go through
``backend.blas.matmul``: split over numba's threads, one OpenBLAS thread each (numba's gather
and scatter loops split their images the same way). Large copies are split over the cores
(NumPy releases the GIL while copying) only when BLAS leaves cores idle.

Conv2dGradWeight reuses the patches of the forward pass instead of gathering them again. On the
host, while gradients are recorded, a forward pass whose patch matrix is at most ``KEEP_BYTES``
(32 MiB: heap memory that glibc reuses, ``backend/malloc.py``) gathers it into an array of its
own and keeps it for the weight gradient, keyed by the input array (held weakly: an entry dies
with its input) and the geometry, at most ``KEEP_BYTES`` a thread in all (oldest dropped
first); every layer of a small network then skips one gather per step (measured 0.2-0.35 ms a
layer on the digits model's 8x8 and 4x4 maps, about 8.5 MB kept in all). Larger patch matrices
go to scratch, and serve the weight gradient only when theirs was the thread's last
convolution of the same input, gathered in one block.

On the GPU (CuPy) each primitive's CUDA override (registered at the end of this file) asks
NVIDIA's cuDNN frontend (``ember.backend.kernels.conv``: fprop, dgrad and wgrad graphs, cached
per shape); without it, or for a case cuDNN has no plan for, the override declines and the same
im2col + GEMM code below runs on CuPy arrays (cuBLAS GEMMs, following the float32 matmul
precision setting; scratch buffers are then fresh device arrays, ``backend.memory.scratch``).

A convolution whose output is one pixel per image (a 3x3 layer on 1x1 maps, where eight taps
read padding) is one product of the input window and the taps that meet it on the CPU
(``_conv_pixel``: ResNet-18's last stage on 32x32 images, 512 channels, forward and both
gradients 13 -> 2.1 ms, PyTorch's 4.4). One input channel with few filters (a grey image's
first layer) goes to a direct kernel on the CPU instead (``_direct_numba``: no patch matrix;
LeNet-5's first layer 430-616 -> 236-272 us), as does its weight gradient where the patches
would be large (else it gathers them itself).

Two choices by shape: few input channels gather channel-first ("planar") patches, a
(C * kh * kw, N * Ho * Wo) matrix whose rows are runs of whole output rows instead of runs of
kw * C values (one channel too, without numba or with many filters); its transpose times the
weight matrix is one GEMM for the whole batch with channels-last rows out, as for the other
convolutions (a product per image, (O, K) @ (K, Ho * Wo), took 640 us on LeNet-5's first layer
against 420-500 us); the input gradient gathers (a convolution with the flipped kernel) when
O <= C and otherwise scatters (one GEMM per kernel offset, added into a window of the padded
gradient; on the CPU with numba, one GEMM for all offsets and one pass adding the patch rows:
LeNet-5's second layer 3.2 -> 1.3 ms).

>>> import ember
>>> from ember.ops.base import apply
>>> x, w = ember.ones(1, 1, 4, 4), ember.ones(2, 1, 3, 3)
>>> apply(Conv2d((1, 1), (1, 1), (1, 1), 1), x, w).shape
ember.Size([1, 2, 4, 4])
"""

from __future__ import annotations

import os
import threading
import weakref
from dataclasses import dataclass

import numpy as np

from .. import _config
from .. import dtypes as _dt
from .._config import state
from .._errors import ShapeError
from ..backend import blas as _blas
from ..backend import memory as _memory
from ..backend import overrides
from ..backend.arrays import strided_view
from ..backend.kernels import conv as _cudnn
from ..backend.memory import scratch as _scratch
from . import _conv_numba, _conv_pixel, _direct_numba, _transpose_numba, _winograd
from .base import Op, Spec, apply

_local = threading.local()


def release_scratch() -> None:
    """Free this thread's convolution scratch buffers.

    >>> release_scratch()
    """
    _memory.release_scratch()
    _local.cols_of = None
    _local.kept = None


KEEP_BYTES = 32 << 20  # forward patches kept for weight gradients, per thread


def _kept() -> dict:
    k = getattr(_local, "kept", None)
    if k is None:
        k = _local.kept = {}
    return k


def _keep(x, tag, cols) -> None:
    """Keep ``cols`` (the patches of ``x`` for geometry ``tag``) for the weight gradient, while
    ``x`` lives; the oldest entries go first beyond ``KEEP_BYTES`` in all."""
    k = _kept()
    key = (id(x), tag)
    k.pop(key, None)
    ref = weakref.ref(x, lambda r, k=k, key=key: _drop(k, key, r))
    k[key] = (ref, cols)
    total = sum(e[1].nbytes for e in k.values())
    while total > KEEP_BYTES:
        first = next(iter(k))
        total -= k.pop(first)[1].nbytes


def _drop(k: dict, key, ref) -> None:
    e = k.get(key)
    if e is not None and e[0] is ref:
        del k[key]


def _recall(x, tag):
    """The patches ``_keep`` holds of this very array ``x`` for geometry ``tag``, or None; the
    entry is dropped (a weight gradient takes them once: they free as the backward pass goes)."""
    k = getattr(_local, "kept", None)
    e = k.get((id(x), tag)) if k else None
    if e is None or e[0]() is not x:
        return None
    del k[(id(x), tag)]
    return e[1]


_pool = None
_pool_pid = None
_PARALLEL_BYTES = 1 << 22
_CORES = _config.CORES


# Copies are memory-bound: a few threads saturate the memory bus. Split them over the cores only
# when BLAS leaves cores idle: with BLAS on every core (the default) the copy threads only
# compete with its threads (measured on 2 cores: no gain when the machine is quiet, 13-16%
# slower when it is busy), and blocked convolutions copy one block at a time.
_WORKERS = min(_CORES, 8) if _config.blas_threads() < _CORES else 1


def _copy(dst, src) -> None:
    """``dst[...] = src``, split over the CPU cores for large arrays (NumPy drops the GIL)."""
    global _pool, _pool_pid
    cap = _config.settings.num_threads  # ember.set_num_threads
    workers = _WORKERS if cap is None else max(1, min(_WORKERS, cap))
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
    keep: bool = False,
    fill=None,
):
    """x (N, C, H, W) -> cols (N * Ho * Wo, kh * kw * C) with the patch in (kh, kw, C) order,
    or with ``layout="planar"`` (C * kh * kw, N * Ho * Wo): a patch per column, whose rows are
    runs of whole output rows.

    With a scratch ``slot`` the result may live in (or be a view of) this thread's scratch
    memory, or of ``x``: only for callers that are done with it before the next convolution.
    The ``"cols"`` slot remembers whose patches it holds, so that the weight gradient that
    follows a forward pass (the usual order for the last convolution of a network) can
    ``reuse`` them: only for Conv2dGradWeight, whose input ``x`` the autograd engine has checked
    to be unchanged since the forward pass (version counter); a forward pass never reuses.
    A forward pass over the whole batch asks to ``keep`` its patches for that (the module's
    notes say when it does). ``fill(x, cols, stride, padding, dilation, layout)``, where given
    (the CPU override's numba gathers), writes the patches itself or answers False.
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
    if reuse:
        kept = _recall(x, tag)
        if kept is not None:
            return kept, ho, wo
        held = getattr(_local, "cols_of", None)
        if held is not None and held[0] is x and held[1] == tag:
            return held[2], ho, wo
    # a forward pass's patches of its own, kept for the weight gradient (see the module's notes)
    keep = (
        keep
        and slot == "cols"
        and xp is np
        and state.grad_enabled
        and m * k * x.itemsize <= KEEP_BYTES
        and type(x) is np.ndarray
    )
    if layout == "planar":
        shape = (c, kh, kw, n, ho, wo)
        final = (k, m)
        view = None  # a fill function gathers from x itself; else the strided view below
    else:
        shape = (n, ho, wo, kh, kw, c)
        final = (m, k)
        if fill is not None and (kh, kw) != (1, 1):
            view = None  # the fill function gathers from x itself
        else:
            xpad = _padded_nhwc(xp, x, padding, "pad")
            if (kh, kw) == (1, 1) and stride == (1, 1) and xpad.flags.c_contiguous:
                return xpad.reshape(m, k), ho, wo  # a 1x1 convolution reads the input in place
            view = _patches(xp, xpad, kh, kw, ho, wo, stride, dilation)
    if keep:
        cols = np.empty(shape, x.dtype)
    else:
        cols = _scratch(xp, slot, shape, x.dtype)
        if slot == "cols":
            _local.cols_of = None  # being overwritten
    if view is not None:
        _copy(cols, view)
    elif fill is None or not fill(x, cols, stride, padding, dilation, layout):
        if layout == "planar":
            xpad = _padded_nchw(xp, x, padding)
            s_n, s_c, s_h, s_w = xpad.strides
            d, st = dilation, stride
            strides = (s_c, s_h * d[0], s_w * d[1], s_n, s_h * st[0], s_w * st[1])
            view = strided_view(xpad, shape, strides)
        else:
            xpad = _padded_nhwc(xp, x, padding, "pad")
            view = _patches(xp, xpad, kh, kw, ho, wo, stride, dilation)
        _copy(cols, view)
    cols = cols.reshape(final)
    if keep:
        _keep(x, tag, cols)
    elif slot == "cols":
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


def _spans(xp, n: int, image_bytes: int) -> list[tuple[int, int]]:
    """The batch split into blocks of images ``[(b0, b1), ...]`` whose patch matrices
    (``image_bytes`` each) fill about the device's block size (``memory.block_bytes``) or more:
    nearly equal blocks of one image at least; one block when the whole batch's patches are
    under twice the block size.

    >>> _spans(np, 64, 40 << 20)[:3], _spans(np, 64, 1 << 20)
    ([(0, 3), (3, 6), (6, 9)], [(0, 64)])
    """
    budget = _memory.block_bytes(xp)
    if budget is None or n <= 1:
        return [(0, n)]
    blocks = max(1, min(n, image_bytes * n // budget))
    return [(n * i // blocks, n * (i + 1) // blocks) for i in range(blocks)]


def _forget_blocks(spans, slot: str) -> None:
    """After a blocked gather the ``"cols"`` slot holds the last block's patches only: drop its
    tag so that no weight gradient takes them for the whole input's (nor keeps that input alive)."""
    if slot == "cols" and len(spans) > 1:
        _local.cols_of = None


_product_dtypes: dict = {}


def _product_dtype(xp, dtype):
    """The dtype ``xp.matmul`` answers for two ``dtype`` operands (bfloat16 -> float32 in NumPy),
    so a blocked product can write into a preallocated output: what an unblocked one returns."""
    key = (xp.__name__, np.dtype(dtype))
    out = _product_dtypes.get(key)
    if out is None:
        one = xp.ones((1, 1), dtype=dtype)
        out = _product_dtypes[key] = xp.matmul(one, one).dtype
    return out


def _weight_matrix(xp, w, groups: int):
    """(O, C/g, kh, kw) -> contiguous (g, kh * kw * C/g, O/g), matching im2col's order. A large
    host weight of one group: a blocked transposing copy to (C, kh * kw, O), then whole rows of
    O values moved (a 512x512 3x3 weight: 4.6 -> 1.7 ms; NumPy's one copy reads it strided)."""
    o, cg, kh, kw = w.shape
    if groups == 1 and xp is np and w.flags.c_contiguous:
        t = _transpose_numba.transposed(w.reshape(o, -1))
        if t is not None:
            t = np.ascontiguousarray(t.reshape(cg, kh * kw, o).transpose(1, 0, 2))
            return t.reshape(1, kh * kw * cg, o)
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


_matmul = _blas.matmul_on


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
    node_name = "ConvolutionBackward0"

    def forward(self, xp, x, w):
        return self.compute(xp, x, w)

    def compute(self, xp, x, w, fill=None):
        """The forward pass, with the patches of channels-last inputs gathered by ``fill``
        where given (see ``im2col``; the CPU override's numba kernel)."""
        n, c, h, wd = x.shape
        o, _, kh, kw = w.shape
        g = self.groups
        s, p, d = self.stride, self.padding, self.dilation
        ho, wo = out_size(h, kh, s[0], p[0], d[0]), out_size(wd, kw, s[1], p[1], d[1])
        spans = _spans(xp, n, ho * wo * kh * kw * c * x.itemsize)
        dtype = _product_dtype(xp, x.dtype)
        layout = "planar" if planar(x.shape, (kh, kw), s, g) else "nhwc"
        # (K, O): the planar patch order (C, kh, kw) is the weight's own
        wm = w.reshape(o, -1).T[None] if layout == "planar" else _weight_matrix(xp, w, g)
        rows = ho * wo
        out = xp.empty((n * rows, o), dtype=dtype)  # channels-last rows
        for b0, b1 in spans:
            xb = x if len(spans) == 1 else x[b0:b1]
            one = len(spans) == 1
            cols, _, _ = im2col(
                xp, xb, (kh, kw), s, p, d, self._slot, keep=one, fill=fill, layout=layout
            )
            dst = out[b0 * rows : b1 * rows]
            if layout == "planar":
                _matmul(xp, cols.T, wm[0], out=dst)
            elif g == 1:
                _matmul(xp, cols, wm[0], out=dst)
            else:
                dst[...] = _ungrouped(xp.matmul(_grouped(cols, g, kh * kw), wm), g, 1)
        _forget_blocks(spans, self._slot)
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


def _gathers(op, w, ho: int, wo: int) -> bool:
    """Whether ``Conv2dGradInput`` gathers: stride 1, no more output than input channels
    (gathering reads kh*kw*O values per pixel, scattering kh*kw*C), and the flipped kernel's
    "full" convolution of the output gradient has the input's size."""
    o, cg, kh, kw = w.shape
    (ph, pw), (dh, dw) = op.padding, op.dilation
    full = (dh * (kh - 1) - ph, dw * (kw - 1) - pw)
    same_size = (ho + 2 * full[0] - dh * (kh - 1), wo + 2 * full[1] - dw * (kw - 1))
    return (
        o <= cg * op.groups
        and op.stride == (1, 1)
        and min(full) >= 0
        and same_size == tuple(op.x_shape[2:])
    )


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
        if _gathers(self, w, ho, wo):
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
        # (kh, kw, G, O/G, C/G): each offset's weights as matrices, one contiguous copy
        wk = xp.ascontiguousarray(w.reshape(groups, og, cg, kh, kw).transpose(3, 4, 0, 1, 2))
        out = xp.zeros((n, h + 2 * ph, wd + 2 * pw, c), dtype=g.dtype)
        for b0, b1 in _spans(xp, n, ho * wo * kh * kw * c * g.itemsize):
            nb = b1 - b0
            g2 = _nhwc_rows(g[b0:b1])  # (Mb, O)
            if groups > 1:
                g2 = g2.reshape(-1, groups, og).transpose(1, 0, 2)  # (G, Mb, O/G)
            part = _scratch(xp, "cols_t", (groups, g2.shape[-2], cg), g.dtype)
            dx = out[b0:b1]
            for i in range(kh):
                rows = slice(i * dh, i * dh + sh * (ho - 1) + 1, sh)
                for j in range(kw):
                    cols = slice(j * dw, j * dw + sw * (wo - 1) + 1, sw)
                    if groups == 1:
                        _matmul(xp, g2, wk[i, j, 0], out=part[0])
                        dx[:, rows, cols] += part[0].reshape(nb, ho, wo, c)
                    else:
                        xp.matmul(g2, wk[i, j], out=part)
                        dx[:, rows, cols] += (
                            part.reshape(groups, nb, ho, wo, cg)
                            .transpose(1, 2, 3, 0, 4)
                            .reshape(nb, ho, wo, c)
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
        n, c = x.shape[:2]
        ho, wo = g.shape[2:]
        s, p, d = self.stride, self.padding, self.dilation
        spans = _spans(xp, n, ho * wo * kh * kw * c * x.itemsize)
        layout = "planar" if planar(x.shape, (kh, kw), s, groups) else "nhwc"
        acc = None
        for b0, b1 in spans:
            whole = len(spans) == 1
            xb, gb = (x, g) if whole else (x[b0:b1], g[b0:b1])
            # only a whole-batch gather can be the forward pass's patches (reuse)
            cols, _, _ = im2col(xp, xb, (kh, kw), s, p, d, "cols", reuse=whole, layout=layout)
            if layout == "planar" or groups == 1:
                mk = cols.T if layout == "planar" else cols  # (M, K)
                part = _matmul(xp, _nhwc_rows(gb).T, mk)  # (O, K): K in im2col's order
            else:
                gg = _nhwc_rows(gb).reshape(-1, groups, o // groups).transpose(1, 0, 2)
                part = xp.matmul(_grouped(cols, groups, kh * kw).transpose(0, 2, 1), gg)
            if acc is None:  # block sums of half types add up in float32
                acc = part if whole else part.astype(np.promote_types(part.dtype, np.float32))
            else:
                acc += part
        _forget_blocks(spans, "cols")
        if layout == "planar":  # (O, K), K in (C, kh, kw) order: the weight's own
            return _keep_dtype(acc.reshape(o, cg, kh, kw), x)
        if groups == 1:  # (O, K), K in (kh, kw, C) order: a copy of rows of kh * kw values
            return _keep_dtype(
                xp.ascontiguousarray(acc.reshape(o, kh, kw, cg).transpose(0, 3, 1, 2)), x
            )
        dw = acc.reshape(groups, kh, kw, cg, o // groups).transpose(0, 4, 3, 1, 2)
        return _keep_dtype(xp.ascontiguousarray(dw).reshape(o, cg, kh, kw), x)

    def infer(self, x, g):
        return Spec(self.w_shape, x.dtype)

    def vjp(self, h, out, x, g):
        p = (self.stride, self.padding, self.dilation, self.groups)
        return (
            apply(Conv2dGradInput(tuple(x.shape), *p), g, h) if x._requires_grad else None,
            apply(Conv2d(*p), x, h) if g._requires_grad else None,
        )


# -- CPU overrides: Winograd (``_winograd``), else the bodies above with numba (``_conv_numba``) -


def _conv2d_winograd(op, xp, x, w):
    """Conv2d by Winograd F(2x2, 3x3) (``_winograd``) where it applies and measured faster,
    else NotImplemented. A forward pass while gradients are recorded keeps its transformed
    input tiles for the weight gradient (``_conv2d_grad_weight_cpu``), as im2col keeps its
    patches: the two take the same ``pays`` decision, so a layer's forward pass and weight
    gradient go the same way."""
    if not _winograd.applies(w.shape[2:], op.stride, op.dilation, op.groups, x, w):
        return NotImplemented
    n, c, h, wd = x.shape
    ho, wo = h + 2 * op.padding[0] - 2, wd + 2 * op.padding[1] - 2
    if not _winograd.pays(n, c, w.shape[0], ho, wo):
        return NotImplemented
    if (
        op._slot != "cols"  # the input gradient's
        or not state.grad_enabled
        or _winograd.tiles_bytes(x.shape, w.shape[0], op.padding, x.dtype) > KEEP_BYTES
    ):
        return _winograd.conv3x3(xp, x, w, op.padding)
    out = _winograd.conv3x3(xp, x, w, op.padding, keep=True)
    if out is NotImplemented:
        return out
    y, v = out
    _keep(x, ("winograd", op.padding), v)
    return y


_BF16 = np.dtype(_dt.bfloat16.np)


def _in_float32(op, xp, a, b):
    """``op`` on two bfloat16 host arrays, computed on float32 copies (exact: the float32 fast
    paths, Winograd and the numba kernels, serve it) and rounded once; None for other dtypes.
    NumPy has no bfloat16 loops of its own worth taking (``docs/amp.md``)."""
    if xp is not np or a.dtype != _BF16 or b.dtype != _BF16:
        return None
    return overrides.run(op, xp, a.astype(np.float32), b.astype(np.float32)).astype(_BF16)


@overrides.register(Conv2d, "cpu")
def _conv2d_cpu(op, xp, x, w):
    """Conv2d (and the input gradient's gathering convolution, which inherits it): one input
    channel with few filters by the direct kernel (``_direct_numba``), Winograd where it serves
    (``_conv2d_winograd``), else the op's body with the channels-last patches gathered in one
    numba pass; bfloat16 through float32 (``_in_float32``); NotImplemented without the
    kernels."""
    if (out := _in_float32(op, xp, x, w)) is not None:
        return out
    win = _conv_pixel.window(op, x.shape, w.shape)
    if _conv_pixel.applies(win, x, w):
        return _conv_pixel.conv(x, w, win)
    if _direct_numba.applies(op, x, w, w.shape[2:], w.shape[0]):
        out = _direct_numba.conv(x, w, op.padding)
        if out is not NotImplemented:
            return out
    out = _conv2d_winograd(op, xp, x, w)
    if out is not NotImplemented:
        return out
    mod = _conv_numba.kernels(x.dtype)
    if mod is None:
        return NotImplemented
    return op.compute(xp, x, w, _conv_numba.filler(mod))


@overrides.register(Conv2dGradInput, "cpu")
def _conv2d_grad_input_cpu(op, xp, g, w):
    """The input gradient: for stride 1 and 3x3, Winograd's convolution of ``g`` with the
    flipped, in/out-swapped kernel (padding 2 - p) where it measured faster; else the
    scattering input gradient (more output than input channels, or a stride) as one GEMM
    for all kernel offsets and one numba pass adding the patch rows into the padded gradient;
    NotImplemented (the op's body) where it gathers, for groups, without the kernel, or when
    the patch rows would exceed ``backend.memory.block_bytes``."""
    if (out := _in_float32(op, xp, g, w)) is not None:
        return out
    win = _conv_pixel.window(op, op.x_shape, w.shape)
    if _conv_pixel.applies(win, g, w):
        return _conv_pixel.grad_input(g, w, op.x_shape, win)
    o, cg, kh, kw = w.shape
    n, c, h, wd = op.x_shape
    _, _, ho, wo = g.shape
    if (
        _winograd.applies((kh, kw), op.stride, op.dilation, op.groups, g, w)
        and max(op.padding) <= 2
        and _winograd.pays(n, o, c, h, wd)
    ):
        full = (2 - op.padding[0], 2 - op.padding[1])
        out = _winograd.conv3x3(xp, g, w, full, swap=True)
        if out is not NotImplemented:
            return out
    if op.groups != 1 or g.dtype != w.dtype or _gathers(op, w, ho, wo):
        return NotImplemented
    if n * ho * wo * kh * kw * c * g.itemsize > _memory.block_bytes(xp):
        return NotImplemented
    mod = _conv_numba.kernels(g.dtype)
    if mod is None:
        return NotImplemented
    (ph, pw), (sh, sw), (dh, dw) = op.padding, op.stride, op.dilation
    wk = xp.ascontiguousarray(w.transpose(0, 2, 3, 1)).reshape(o, kh * kw * c)
    cols = _matmul(xp, _nhwc_rows(g), wk).reshape(n, ho, wo, kh, kw, c)
    out = xp.zeros((n, h + 2 * ph, wd + 2 * pw, c), dtype=g.dtype)
    mod.scatter(cols, out, sh, sw, dh, dw)
    return out[:, ph : ph + h, pw : pw + wd].transpose(0, 3, 1, 2)


@overrides.register(Conv2dGradWeight, "cpu")
def _conv2d_grad_weight_cpu(op, xp, x, g):
    """The weight gradient of a one-channel input by the direct kernel where its patches would
    be large (``_direct_numba.pays_grad_weight``); by Winograd (``_winograd.grad_weight3x3``)
    where the forward pass took it (the same ``pays``): from the transformed tiles it kept,
    or, where none are held, transforming the input again block by block (64x64x32x32 -> 64,
    two threads: 23 ms against im2col's 43-46 ms); else NotImplemented (im2col)."""
    if (out := _in_float32(op, xp, x, g)) is not None:
        return out
    win = _conv_pixel.window(op, x.shape, op.w_shape)
    if _conv_pixel.applies(win, x, g):
        return _conv_pixel.grad_weight(x, g, op.w_shape, win)
    o, c, kh, kw = op.w_shape
    n, _, ho, wo = g.shape
    direct = _direct_numba.applies(op, x, g, (kh, kw), o)
    if direct and _direct_numba.pays_grad_weight(x, (kh, kw), g):
        out = _direct_numba.grad_weight(x, g, op.w_shape, op.padding)
        if out is not NotImplemented:
            return out
    if not (
        _winograd.applies((kh, kw), op.stride, op.dilation, op.groups, x, g)
        and _winograd.pays(n, c, o, ho, wo)
    ):
        return NotImplemented
    v = _recall(x, ("winograd", op.padding))
    return _winograd.grad_weight3x3(xp, x, g, op.padding, v)


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
