"""Convolution as im2col + one matrix product, channels-last (the lecture's method, made fast).

Three primitives close under differentiation, so gradients of any order are more convolutions:

- ``Conv2d(x, w)``            -> y   (N, C, H, W) * (O, C/g, kh, kw) -> (N, O, Ho, Wo)
- ``Conv2dGradInput(g, w)``   -> dx  (also the forward of ConvTranspose2d)
- ``Conv2dGradWeight(x, g)``  -> dw

The patches are gathered from a channels-last (N, H, W, C) copy of the padded input, so each
patch row (kh, kw, C) is contiguous runs of memory and the product is a single GEMM with
K = kh * kw * C / groups. Outputs come back as NCHW-shaped views of channels-last memory, which
is exactly the layout the next convolution wants (no transpose copy there).

>>> import ember
>>> from ember.ops.base import apply
>>> x, w = ember.ones(1, 1, 4, 4), ember.ones(2, 1, 3, 3)
>>> apply(Conv2d((1, 1), (1, 1), (1, 1), 1), x, w).shape
ember.Size([1, 2, 4, 4])
"""

from __future__ import annotations

from dataclasses import dataclass

from .._errors import ShapeError
from .base import Op, Spec, apply


def out_size(size: int, k: int, s: int, p: int, d: int) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _padded_nhwc(xp, x, padding):
    """x (N, C, H, W) -> zero-padded channels-last (N, H + 2ph, W + 2pw, C), one copy."""
    n, c, h, w = x.shape
    ph, pw = padding
    out = xp.empty((n, h + 2 * ph, w + 2 * pw, c), dtype=x.dtype)
    if ph or pw:
        out[:, :ph] = 0
        out[:, h + ph :] = 0
        out[:, ph : h + ph, :pw] = 0
        out[:, ph : h + ph, w + pw :] = 0
    out[:, ph : h + ph, pw : w + pw] = x.transpose(0, 2, 3, 1)
    return out


def _patches(xp, xpad, kh, kw, ho, wo, stride, dilation):
    """A (N, Ho, Wo, kh, kw, C) strided view of the padded channels-last input."""
    n, _, _, c = xpad.shape
    s_n, s_h, s_w, s_c = xpad.strides
    shape = (n, ho, wo, kh, kw, c)
    strides = (s_n, s_h * stride[0], s_w * stride[1], s_h * dilation[0], s_w * dilation[1], s_c)
    return xp.lib.stride_tricks.as_strided(xpad, shape, strides, writeable=False)


def im2col(xp, x, kernel, stride, padding, dilation):
    """x (N, C, H, W) -> cols (N * Ho * Wo, kh * kw * C) with the patch in (kh, kw, C) order."""
    n, c, h, w = x.shape
    kh, kw = kernel
    ho = out_size(h, kh, stride[0], padding[0], dilation[0])
    wo = out_size(w, kw, stride[1], padding[1], dilation[1])
    view = _patches(xp, _padded_nhwc(xp, x, padding), kh, kw, ho, wo, stride, dilation)
    return view.reshape(n * ho * wo, kh * kw * c), ho, wo


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
            out[:, i * dh : i * dh + sh * (ho - 1) + 1 : sh, j * dw : j * dw + sw * (wo - 1) + 1 : sw] += patches[:, :, :, i, j]
    return out[:, ph : ph + h, pw : pw + w].transpose(0, 3, 1, 2)


def _weight_matrix(w, groups: int):
    """(O, C/g, kh, kw) -> (g, kh * kw * C/g, O/g), matching im2col's (kh, kw, C) order."""
    o, cg, kh, kw = w.shape
    return w.reshape(groups, o // groups, cg, kh, kw).transpose(0, 3, 4, 2, 1).reshape(
        groups, kh * kw * cg, o // groups
    )


def _grouped_cols(cols, groups: int, k: int):
    """cols (M, kh*kw*C) -> (g, M, kh*kw*C/g)."""
    if groups == 1:
        return cols[None]
    m = cols.shape[0]
    c = cols.shape[1] // k
    return cols.reshape(m, k, groups, c // groups).transpose(2, 0, 1, 3).reshape(groups, m, -1)


def _ungroup_cols(gcols, groups: int, k: int):
    """(g, M, kh*kw*C/g) -> (M, kh*kw*C): the inverse of _grouped_cols."""
    if groups == 1:
        return gcols[0]
    g, m, kc = gcols.shape
    return gcols.reshape(g, m, k, kc // k).transpose(1, 2, 0, 3).reshape(m, -1)


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

    def forward(self, xp, x, w):
        n = x.shape[0]
        o, _, kh, kw = w.shape
        cols, ho, wo = im2col(xp, x, (kh, kw), self.stride, self.padding, self.dilation)
        out = xp.matmul(_grouped_cols(cols, self.groups, kh * kw), _weight_matrix(w, self.groups))
        out = out.transpose(1, 0, 2).reshape(n, ho, wo, o) if self.groups > 1 else out[0].reshape(n, ho, wo, o)
        return out.transpose(0, 3, 1, 2)

    def infer(self, x, w):
        return Spec(conv_output_shape(x.shape, w.shape, self), x.dtype)

    def vjp(self, g, out, x, w):
        p = (self.stride, self.padding, self.dilation, self.groups)
        return (
            apply(Conv2dGradInput(tuple(x.shape), *p), g, w) if x._requires_grad else None,
            apply(Conv2dGradWeight(tuple(w.shape), *p), x, g) if w._requires_grad else None,
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
        (ph, pw), (dh, dw) = self.padding, self.dilation
        full = (dh * (kh - 1) - ph, dw * (kw - 1) - pw)
        n, _, ho, wo = g.shape
        same_size = (ho + 2 * full[0] - dh * (kh - 1), wo + 2 * full[1] - dw * (kw - 1))
        if self.stride == (1, 1) and min(full) >= 0 and same_size == tuple(self.x_shape[2:]):
            # stride 1: dx is a convolution of g with the flipped, in/out-swapped kernel, which
            # gathers (one im2col) instead of scattering (kh * kw strided adds of col2im).
            wt = w.reshape(self.groups, o // self.groups, cg, kh, kw).transpose(0, 2, 1, 3, 4)
            wt = wt.reshape(cg * self.groups, o // self.groups, kh, kw)[:, :, ::-1, ::-1]
            return Conv2d((1, 1), full, self.dilation, self.groups).forward(xp, g, wt)
        g2 = g.transpose(0, 2, 3, 1).reshape(n * ho * wo, o)
        wm = _weight_matrix(w, self.groups)  # (G, K, O/G)
        if self.groups == 1:
            cols = g2 @ wm[0].T
        else:
            gg = g2.reshape(-1, self.groups, o // self.groups).transpose(1, 0, 2)
            cols = _ungroup_cols(xp.matmul(gg, wm.transpose(0, 2, 1)), self.groups, kh * kw)
        return col2im(xp, cols, self.x_shape, (kh, kw), self.stride, self.padding, self.dilation)

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
        n, _, ho, wo = g.shape
        cols, _, _ = im2col(xp, x, (kh, kw), self.stride, self.padding, self.dilation)
        g2 = g.transpose(0, 2, 3, 1).reshape(n * ho * wo, o)
        gcols = _grouped_cols(cols, self.groups, kh * kw)  # (G, M, K)
        gg = g2.reshape(-1, self.groups, o // self.groups).transpose(1, 0, 2)  # (G, M, O/G)
        dw = xp.matmul(gcols.transpose(0, 2, 1), gg)  # (G, K, O/G) with K in (kh, kw, Cg) order
        dw = dw.reshape(self.groups, kh, kw, cg, o // self.groups).transpose(0, 4, 3, 1, 2)
        return xp.ascontiguousarray(dw.reshape(o, cg, kh, kw))

    def infer(self, x, g):
        return Spec(self.w_shape, x.dtype)

    def vjp(self, h, out, x, g):
        p = (self.stride, self.padding, self.dilation, self.groups)
        return (
            apply(Conv2dGradInput(tuple(x.shape), *p), g, h) if x._requires_grad else None,
            apply(Conv2d(*p), x, h) if g._requires_grad else None,
        )


def conv_output_shape(x_shape, w_shape, p) -> tuple:
    """Output shape of a 2-D convolution, or a ShapeError naming the mismatch."""
    if len(x_shape) != 4 or len(w_shape) != 4:
        raise ShapeError(
            f"conv2d: expected a 4-D input (N, C, H, W) and a 4-D weight (O, C/groups, kh, kw), "
            f"got input {tuple(x_shape)} and weight {tuple(w_shape)}"
        )
    n, c, h, w = x_shape
    o, cg, kh, kw = w_shape
    if c != cg * p.groups:
        raise ShapeError(
            f"conv2d: expected input with {cg * p.groups} channels, got {c} (input shape "
            f"{tuple(x_shape)}, weight shape {tuple(w_shape)}, groups={p.groups})"
        )
    if o % p.groups:
        raise ShapeError(f"conv2d: out channels {o} not divisible by groups {p.groups}")
    ho = out_size(h, kh, p.stride[0], p.padding[0], p.dilation[0])
    wo = out_size(w, kw, p.stride[1], p.padding[1], p.dilation[1])
    if ho <= 0 or wo <= 0:
        raise ShapeError(
            f"conv2d: input {tuple(x_shape)} (padded by {p.padding}) is smaller than the "
            f"dilated kernel {(kh, kw)} with dilation {p.dilation}: output would be {(ho, wo)}"
        )
    return (n, o, ho, wo)
