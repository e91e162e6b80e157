"""Max pooling and unfold/fold (PyTorch's im2col / col2im shapes) as primitives.

Max pooling is three ops that differentiate into each other: ``MaxPool2d(x)`` picks each
window's first maximum; its gradient ``MaxPoolScatter(g, x)`` adds ``g`` at those positions;
that op's gradient (linear in ``g``) is ``MaxPoolGather(h, x)``. Average and adaptive pooling
are linear, so they are composites (a depthwise convolution, two small matrix products).

When the windows tile the input (kernel == stride, no padding or dilation: ``MaxPool2d(2)``)
each window offset is one strided slice, and pooling is kh * kw elementwise passes instead of
a gather of every window; the backward pass reuses the forward pass's maxima.

On a GPU, MaxPool2d and MaxPoolScatter are one kernel each (``ember.backend.kernels.pool``:
C-contiguous float inputs, any window). On the CPU, with numba installed, they have overrides
(``ember.backend.overrides``) for 2x2 tiled windows of C-contiguous or channels-last memory:
one numba loop each (``_pool_numba``), results in the input's layout. Other windows, and
everything until the kernel is compiled (in the background, cached on disk) or without numba,
run the NumPy body; MaxPoolGather is NumPy.

What the gradient reuses is kept per input array (``_remember`` / ``_recall``): the forward
pass of every pool of a network leaves its maxima for its
gradient, keyed by the input array and the pool's parameters, held by a weak reference to the
input (an entry dies with its input) and at most ``_SLOTS`` entries a thread. They are private
copies, so in-place ops on the pool's output cannot change them; an in-place change of the
input itself is refused by the autograd engine (version counter) before the gradient runs.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(MaxPool2d((2, 2), (2, 2), (0, 0), (1, 1), False), ember.arange(16.0).reshape(1, 1, 4, 4))
tensor([[[[ 5.,  7.],
          [13., 15.]]]])
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np

from .._config import state
from .._errors import ShapeError
from ..backend import overrides
from ..backend.arrays import may_hold, strided_view, sum_at
from ..backend.kernels import pool as _pool_kernels
from ..dtypes import is_float_np
from . import _pool_numba
from .base import Op, Spec, apply
from .conv import col2im, im2col

_local = threading.local()
_SLOTS = 32  # pools a thread's cache holds at once (oldest dropped first)


def _cache() -> dict:
    c = getattr(_local, "cache", None)
    if c is None:
        c = _local.cache = {}
    return c


def _remember(x, op, kind: str, data) -> None:
    """Keep ``data`` (``kind``: ``"max"``, ``"arg"`` or the numba kernel's ``"code"``) of pool
    ``op`` on input array ``x`` for its gradient: weakly referenced (an array type without weak
    references is held strongly, one such entry at a time, as before)."""
    c = _cache()
    key = (id(x), _fields(op))
    c.pop(key, None)
    try:
        ref = weakref.ref(x, lambda r, c=c, key=key: _forget(c, key, r))
        strong = None
    except TypeError:
        ref, strong = None, x
        for k in [k for k, e in c.items() if e[1] is not None]:
            del c[k]
    c[key] = (ref, strong, kind, data)
    while len(c) > _SLOTS:
        del c[next(iter(c))]


def _forget(c: dict, key, ref) -> None:
    e = c.get(key)
    if e is not None and e[0] is ref:
        del c[key]


def _recall(x, op, kind: str):
    """What ``_remember`` kept of ``kind`` for pool ``op`` on this very array ``x``, or None."""
    e = _cache().get((id(x), _fields(op)))
    if e is None or e[2] != kind:
        return None
    held = e[1] if e[0] is None else e[0]()
    return e[3] if held is x else None


def pool_out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output size (ceil mode drops a last window starting in the padding)."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


@dataclass(frozen=True)
class _PoolParams(Op):
    kernel: tuple = (1, 1)
    stride: tuple = (1, 1)
    padding: tuple = (0, 0)
    dilation: tuple = (1, 1)
    ceil_mode: bool = False

    def out_hw(self, h: int, w: int) -> tuple:
        return tuple(
            pool_out_size(n, k, s, p, d, self.ceil_mode)
            for n, k, s, p, d in zip((h, w), self.kernel, self.stride, self.padding, self.dilation)
        )

    def check(self, shape) -> tuple:
        if len(shape) != 4:
            raise ShapeError(f"max_pool2d: expected a 4-D input (N, C, H, W), got {tuple(shape)}")
        kh, kw = self.kernel
        if self.padding[0] * 2 > kh or self.padding[1] * 2 > kw:
            raise ShapeError(
                f"max_pool2d: padding {self.padding} should be at most half of kernel size "
                f"{self.kernel}"
            )
        ho, wo = self.out_hw(shape[2], shape[3])
        if ho <= 0 or wo <= 0:
            raise ShapeError(
                f"max_pool2d: input {tuple(shape)} is too small for kernel {self.kernel} "
                f"(output would be {(ho, wo)})"
            )
        return ho, wo

    def windows(self, xp, x):
        """(N, C, Ho, Wo, kh*kw) copy of each window (padding is -inf) and the padded width."""
        n, c, h, w = x.shape
        ho, wo = self.out_hw(h, w)
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = (
            self.kernel,
            self.stride,
            self.padding,
            self.dilation,
        )
        hp = max(h + 2 * ph, (ho - 1) * sh + dh * (kh - 1) + 1)
        wp = max(w + 2 * pw, (wo - 1) * sw + dw * (kw - 1) + 1)
        if (hp, wp) != (h, w):
            low = -np.inf if is_float_np(x.dtype) else np.iinfo(x.dtype).min
            xpad = xp.full((n, c, hp, wp), low, dtype=x.dtype)
            xpad[:, :, ph : ph + h, pw : pw + w] = x
        else:
            xpad = x
        s = xpad.strides
        view = strided_view(
            xpad,
            (n, c, ho, wo, kh, kw),
            (s[0], s[1], s[2] * sh, s[3] * sw, s[2] * dh, s[3] * dw),
        )
        return view.reshape(n, c, ho, wo, kh * kw), hp, wp

    def flat_positions(self, xp, x, arg, hp: int, wp: int):
        """Flat indices into the padded (N, C, Hp, Wp) input of each window's chosen element."""
        n, c, ho, wo = arg.shape
        (_, kw), (sh, sw), (dh, dw) = self.kernel, self.stride, self.dilation
        rows = xp.arange(ho).reshape(1, 1, ho, 1) * sh + (arg // kw) * dh
        cols = xp.arange(wo).reshape(1, 1, 1, wo) * sw + (arg % kw) * dw
        planes = xp.arange(n * c).reshape(n, c, 1, 1)
        return (planes * hp + rows) * wp + cols

    def argmax(self, xp, x):
        """Each window's chosen element: the first maximum, or the last NaN (PyTorch's rule)."""
        win, hp, wp = self.windows(xp, x)
        arg = win.argmax(axis=-1)
        if is_float_np(x.dtype) and may_hold(xp, lambda: xp.isnan(x)):
            nan = xp.isnan(win)
            last = win.shape[-1] - 1 - nan[..., ::-1].argmax(axis=-1)
            arg = xp.where(nan.any(axis=-1), last, arg)
        return arg, hp, wp

    def tiled(self, shape) -> bool:
        """The common case: windows tile the input (kernel == stride, no padding or dilation,
        no ceil-mode window hanging over the edge). Then each window offset (i, j) is one
        strided slice of the input, and pooling is kh * kw elementwise passes instead of a
        gather of every window."""
        if self.kernel != self.stride or self.padding != (0, 0) or self.dilation != (1, 1):
            return False
        ho, wo = self.out_hw(shape[2], shape[3])
        return ho * self.kernel[0] <= shape[2] and wo * self.kernel[1] <= shape[3]

    def offsets(self, x):
        """(i * kw + j, strided (N, C, Ho, Wo) slice of x at window offset (i, j)), tiled case."""
        (kh, kw), (ho, wo) = self.kernel, self.out_hw(x.shape[2], x.shape[3])
        for i in range(kh):
            for j in range(kw):
                yield i * kw + j, x[:, :, i : i + ho * kh : kh, j : j + wo * kw : kw]

    def tiled_max(self, xp, x):
        """Window maxima, NaN propagating (tiled case)."""
        slices = self.offsets(x)
        best = next(slices)[1].copy(order="K")  # keeps x's memory layout (channels-last too)
        for _, v in slices:
            xp.maximum(best, v, out=best)
        return best

    def tiled_hits(self, xp, x):
        """(offset, hit) for each window offset, ``hit`` marking where that offset holds its
        window's chosen element: PyTorch's rule (``val > max || isnan(val)``), so the first
        maximum on ties (ReLU zeros), and the last NaN where there are NaNs.

        The maxima come from the forward pass on the same ``x`` where it kept them
        (``_remember``; the autograd engine has checked ``x`` unchanged since: version counter)."""
        best = _recall(x, self, "max")
        if best is None:
            best = self.tiled_max(xp, x)
        if is_float_np(x.dtype) and may_hold(xp, lambda: xp.isnan(best)):
            slices = self.offsets(x)
            best = next(slices)[1].copy()
            arg = xp.zeros(best.shape, dtype=np.int32)
            for o, v in slices:
                better = (v > best) | (v != v)
                xp.copyto(best, v, where=better)
                xp.copyto(arg, o, where=better)
            for o, _ in self.offsets(x):
                yield o, arg == o
            return
        taken = None
        for o, v in self.offsets(x):
            hit = v == best
            if taken is None:
                taken = hit.copy()
            else:
                xp.logical_and(hit, xp.logical_not(taken), out=hit)
                xp.logical_or(taken, hit, out=taken)
            yield o, hit


@dataclass(frozen=True)
class MaxPool2d(_PoolParams):
    """Window maxima of an (N, C, H, W) input."""

    saves_inputs = True
    node_name = "MaxPool2DWithIndicesBackward0"

    def forward(self, xp, x):
        if self.tiled(x.shape):
            out = self.tiled_max(xp, x)
            if state.grad_enabled:  # a copy: the output may be changed in place
                _remember(x, self, "max", out.copy(order="K"))
            return out
        win, _, _ = self.windows(xp, x)
        return win.max(axis=-1)

    def infer(self, x):
        ho, wo = self.check(x.shape)
        return Spec((x.shape[0], x.shape[1], ho, wo), x.dtype)

    def vjp(self, g, out, x):
        return (apply(MaxPoolScatter(*_fields(self)), g, x),)


@dataclass(frozen=True)
class MaxPoolScatter(_PoolParams):
    """Gradient of MaxPool2d: add each ``g`` at its window's maximum in ``x``."""

    saves_inputs = True

    def forward(self, xp, g, x):
        n, c, h, w = x.shape
        if self.tiled(x.shape):
            (kh, kw), (ho, wo) = self.kernel, g.shape[2:]
            out = xp.empty_like(x, dtype=g.dtype)  # x's memory layout
            out[:, :, ho * kh :] = 0  # rows and columns no window covers
            out[:, :, :, wo * kw :] = 0
            exact = is_float_np(x.dtype) and may_hold(xp, lambda: ~xp.isfinite(g))
            views = dict(self.offsets(out))
            for o, hit in self.tiled_hits(xp, x):
                if exact:  # g * 0 would spread a NaN or Inf of g to the other positions
                    views[o][...] = xp.where(hit, g, 0)
                else:
                    xp.multiply(g, hit, out=views[o])
            return out
        arg, hp, wp = self.argmax(xp, x)
        flat = self.flat_positions(xp, x, arg, hp, wp).ravel()
        size = n * c * hp * wp
        out = sum_at(flat, g.ravel(), size)
        ph, pw = self.padding
        return out.reshape(n, c, hp, wp)[:, :, ph : ph + h, pw : pw + w]

    def infer(self, g, x):
        return Spec(tuple(x.shape), g.dtype)

    def vjp(self, h, out, g, x):
        return (apply(MaxPoolGather(*_fields(self)), h, x) if g._requires_grad else None, None)


@dataclass(frozen=True)
class MaxPoolGather(_PoolParams):
    """Pick ``h`` at each window's maximum of ``x`` (the adjoint of MaxPoolScatter)."""

    saves_inputs = True

    def forward(self, xp, h, x):
        n, c, hh, ww = x.shape
        if self.tiled(x.shape):
            views = dict(self.offsets(h))
            out = None
            for o, hit in self.tiled_hits(xp, x):
                if out is None:
                    out = xp.zeros(hit.shape, dtype=h.dtype)
                xp.copyto(out, views[o], where=hit)
            return out
        arg, hp, wp = self.argmax(xp, x)
        ph, pw = self.padding
        hpad = xp.zeros((n, c, hp, wp), dtype=h.dtype)
        hpad[:, :, ph : ph + hh, pw : pw + ww] = h
        return hpad.reshape(-1)[self.flat_positions(xp, x, arg, hp, wp)]

    def infer(self, h, x):
        ho, wo = self.check(x.shape)
        return Spec((x.shape[0], x.shape[1], ho, wo), h.dtype)

    def vjp(self, g, out, h, x):
        return (apply(MaxPoolScatter(*_fields(self)), g, x) if h._requires_grad else None, None)


@dataclass(frozen=True)
class MaxPoolIndices(_PoolParams):
    """PyTorch's ``return_indices``: flat positions in each (H, W) plane, as int64."""

    differentiable = False

    def forward(self, xp, x):
        n, c, h, w = x.shape
        if self.tiled(x.shape):
            arg = None
            for o, hit in self.tiled_hits(xp, x):
                arg = hit.astype(np.int64) * o if arg is None else arg + hit * o
            hp = wp = 0
        else:
            arg, hp, wp = self.argmax(xp, x)
        ho, wo = arg.shape[2:]
        (_, kw), (sh, sw), (ph, pw), (dh, dw) = (
            self.kernel,
            self.stride,
            self.padding,
            self.dilation,
        )
        rows = xp.arange(ho).reshape(1, 1, ho, 1) * sh + (arg // kw) * dh - ph
        cols = xp.arange(wo).reshape(1, 1, 1, wo) * sw + (arg % kw) * dw - pw
        return (rows * w + cols).astype(np.int64)

    def infer(self, x):
        from .. import dtypes

        ho, wo = self.check(x.shape)
        return Spec((x.shape[0], x.shape[1], ho, wo), dtypes.int64)


def _fields(p: _PoolParams) -> tuple:
    return (p.kernel, p.stride, p.padding, p.dilation, p.ceil_mode)


def _two_by_two(op, shape) -> bool:
    """Whether ``op``'s windows are 2x2 tiles, the case with kernels of their own."""
    return op.kernel == (2, 2) and op.tiled(shape)


@overrides.register(MaxPool2d, "cpu")
def _max_pool_cpu(op: MaxPool2d, xp, x):
    """A C-contiguous or channels-last float input: one numba pass for the maxima and each
    window's chosen element, kept for the gradient (``_max_pool_scatter_cpu``); 2x2 tiles by
    their own kernel, any other window (up to 255 taps: ResNet's 3x3, stride 2, padding 1) by
    ``_pool_numba.pooled``."""
    two = _two_by_two(op, x.shape)
    if _pool_numba.memory(x) is None or op.kernel[0] * op.kernel[1] > 255:
        return NotImplemented
    mod = _pool_numba.kernels(x.dtype) if two else _pool_numba.window_kernels(x.dtype)
    if mod is None:
        return NotImplemented
    shape = (x.shape[0], x.shape[1], *op.out_hw(x.shape[2], x.shape[3]))
    if two:
        out, code = _pool_numba.maxima(mod, xp, x, shape)
    else:
        out, code = _pool_numba.pooled(mod, op, x, shape)
    if state.grad_enabled:
        _remember(x, op, "code", code)
    return out


@overrides.register(MaxPoolScatter, "cpu")
def _max_pool_scatter_cpu(op: MaxPoolScatter, xp, g, x):
    """A C-contiguous or channels-last float input: one numba pass puts ``g`` at each window's
    chosen element, read from what the forward pass kept or found in ``x`` again
    (``_pool_numba.scatter`` for 2x2 tiles, ``_pool_numba.scattered`` for other windows)."""
    two = _two_by_two(op, x.shape)
    if _pool_numba.memory(x) is None or op.kernel[0] * op.kernel[1] > 255:
        return NotImplemented
    if two:
        mod = _pool_numba.kernels(g.dtype, x.dtype)
    else:
        mod = _pool_numba.window_kernels(g.dtype, x.dtype)
    if mod is None:
        return NotImplemented
    code = _recall(x, op, "code")
    if two:
        return _pool_numba.scatter(mod, g, x, code)
    return _pool_numba.scattered(mod, op, g, x, code)


@overrides.register(MaxPool2d, "cuda")
def _max_pool_cuda(op: MaxPool2d, xp, x):
    """One kernel (``ember/backend/kernels/pool.py``); NotImplemented where it does not serve."""
    hw = op.out_hw(x.shape[2], x.shape[3]) if x.ndim == 4 else (0, 0)
    return _pool_kernels.max_pool(xp, x, *_fields(op)[:4], hw)


@overrides.register(MaxPoolScatter, "cuda")
def _max_pool_scatter_cuda(op: MaxPoolScatter, xp, g, x):
    """One kernel, a thread per input element (no atomics); NotImplemented where it does not
    serve."""
    return _pool_kernels.max_pool_scatter(xp, g, x, *_fields(op)[:4])


@dataclass(frozen=True)
class Unfold(Op):
    """PyTorch's ``unfold`` (im2col): (N, C, H, W) -> (N, C * kh * kw, L)."""

    kernel: tuple = (1, 1)
    dilation: tuple = (1, 1)
    padding: tuple = (0, 0)
    stride: tuple = (1, 1)

    def forward(self, xp, x):
        n, c = x.shape[:2]
        kh, kw = self.kernel
        cols, ho, wo = im2col(xp, x, self.kernel, self.stride, self.padding, self.dilation)
        cols = cols.reshape(n, ho * wo, kh, kw, c).transpose(0, 4, 2, 3, 1)
        return xp.array(cols, copy=True, order="C").reshape(n, c * kh * kw, ho * wo)

    def infer(self, x):
        from .conv import out_size

        if len(x.shape) != 4:
            raise ShapeError(f"unfold: expected a 4-D input (N, C, H, W), got {tuple(x.shape)}")
        n, c, h, w = x.shape
        ho, wo = (
            out_size(s, k, st, p, d)
            for s, k, st, p, d in zip((h, w), self.kernel, self.stride, self.padding, self.dilation)
        )
        if ho <= 0 or wo <= 0:
            raise ShapeError(
                f"unfold: input {tuple(x.shape)} is too small for kernel {self.kernel}"
            )
        return Spec((n, c * self.kernel[0] * self.kernel[1], ho * wo), x.dtype)

    def vjp(self, g, out, x):
        h, w = x.shape[2:]
        return (apply(Fold((h, w), self.kernel, self.dilation, self.padding, self.stride), g),)


@dataclass(frozen=True)
class Fold(Op):
    """PyTorch's ``fold`` (col2im, summing overlaps): (N, C * kh * kw, L) -> (N, C, H, W)."""

    output_size: tuple = (1, 1)
    kernel: tuple = (1, 1)
    dilation: tuple = (1, 1)
    padding: tuple = (0, 0)
    stride: tuple = (1, 1)

    def forward(self, xp, cols):
        n, ckk, length = cols.shape
        kh, kw = self.kernel
        c = ckk // (kh * kw)
        rows = cols.reshape(n, c, kh, kw, length).transpose(0, 4, 2, 3, 1).reshape(n * length, -1)
        h, w = self.output_size
        return col2im(xp, rows, (n, c, h, w), self.kernel, self.stride, self.padding, self.dilation)

    def infer(self, cols):
        from .conv import out_size

        n, ckk, length = cols.shape
        kh, kw = self.kernel
        if ckk % (kh * kw):
            raise ShapeError(
                f"fold: expected size of input's dimension 1 to be divisible by the product of "
                f"kernel_size, but got input.size(1)={ckk} and kernel_size={self.kernel}"
            )
        h, w = self.output_size
        blocks = out_size(h, kh, self.stride[0], self.padding[0], self.dilation[0]) * out_size(
            w, kw, self.stride[1], self.padding[1], self.dilation[1]
        )
        if blocks != length:
            raise ShapeError(
                f"fold: expected input's dimension 2 to match the calculated number of sliding "
                f"blocks {blocks}, but got input.size(2)={length}"
            )
        return Spec((n, ckk // (kh * kw), h, w), cols.dtype)

    def vjp(self, g, out, cols):
        return (apply(Unfold(self.kernel, self.dilation, self.padding, self.stride), g),)
