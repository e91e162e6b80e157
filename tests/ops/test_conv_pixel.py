"""Convolutions whose output is one pixel per image (``ember.ops._conv_pixel``): the CPU
overrides' one product over the live taps, against PyTorch and against the im2col body."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.backend import overrides
from ember.ops import _conv_pixel
from ember.ops import conv as C

# (x shape, w shape, stride, padding, dilation): every output one pixel
CASES = [
    ((4, 16, 1, 1), (8, 16, 3, 3), 1, 1, 1),  # ResNet-18's last stage on 32x32 images
    ((4, 8, 2, 2), (16, 8, 3, 3), 2, 1, 1),  # its first conv: four live taps of nine
    ((3, 5, 3, 3), (6, 5, 3, 3), 1, 0, 1),  # all taps live: the weight as it is
    ((2, 4, 1, 3), (5, 4, 3, 3), (1, 3), 1, 1),  # rows and columns differ
    ((2, 3, 5, 5), (4, 3, 3, 3), 1, 0, 2),  # dilation: every other input row and column
    ((2, 3, 3, 3), (4, 3, 3, 3), 1, 1, 2),  # dilation and padding: the centre tap alone
    ((2, 3, 1, 1), (4, 3, 1, 1), 1, 0, 1),  # a 1x1 convolution of a 1x1 map
]
IDS = [f"{x}-{w}-s{s}p{p}d{d}" for x, w, s, p, d in CASES]


def _data(xs, ws, dtype):
    rng = np.random.default_rng(0)
    return rng.standard_normal(xs).astype(dtype), (0.3 * rng.standard_normal(ws)).astype(dtype)


def _torch(x, w, s, p, d, g):
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    y = torch.nn.functional.conv2d(tx, tw, stride=s, padding=p, dilation=d)
    y.backward(torch.tensor(g))
    return y.detach().numpy(), tx.grad.numpy(), tw.grad.numpy()


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
def test_values_and_gradients_match_torch(case, dtype, layout, monkeypatch):
    xs, ws, s, p, d = case
    x, w = _data(xs, ws, dtype)
    spy = []
    for name in ("conv", "grad_input", "grad_weight"):
        real = getattr(_conv_pixel, name)
        spied = lambda *a, _r=real, _n=name: spy.append(_n) or _r(*a)  # noqa: E731
        monkeypatch.setattr(_conv_pixel, name, spied)
    ex = ember.tensor(x)
    if layout == "channels_last":
        ex = ember.tensor(np.ascontiguousarray(x.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2)
    ex.requires_grad_()
    ew = ember.tensor(w, requires_grad=True)
    y = ember.nn.functional.conv2d(ex, ew, stride=s, padding=p, dilation=d)
    g = np.linspace(-1, 1, y.numel()).reshape(y.shape).astype(dtype)
    y.backward(ember.tensor(g))
    assert sorted(spy) == ["conv", "grad_input", "grad_weight"]
    want = _torch(x, w, s, p, d, g)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for got, ref in zip((y.detach().numpy(), ex.grad.numpy(), ew.grad.numpy()), want):
        assert got.dtype == ref.dtype and got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_overrides_match_the_im2col_body(case):
    """The one rule of each op (its NumPy body, im2col) and the override agree."""
    xs, ws, s, p, d = case
    x, w = _data(xs, ws, np.float64)
    geo = (s if isinstance(s, tuple) else (s, s), (p, p), (d, d), 1)
    op = C.Conv2d(*geo)
    y = op.forward(np, x, w)
    np.testing.assert_allclose(overrides.run(op, np, x, w), y, rtol=1e-12, atol=1e-12)
    g = np.linspace(-1, 1, y.size).reshape(y.shape)
    gi = C.Conv2dGradInput(xs, *geo)
    np.testing.assert_allclose(
        overrides.run(gi, np, g, w), gi.forward(np, g, w), rtol=1e-12, atol=1e-12
    )
    gw = C.Conv2dGradWeight(ws, *geo)
    np.testing.assert_allclose(
        overrides.run(gw, np, x, g), gw.forward(np, x, g), rtol=1e-12, atol=1e-12
    )


def test_a_weight_that_only_meets_padding_is_skipped_as_in_torch():
    """An infinite weight at a tap that reads only padding: PyTorch's CPU convolution skips the
    tap (finite output), as the product over live taps does; im2col's 0 * inf would be NaN."""
    x, w = _data((2, 3, 1, 1), (4, 3, 3, 3), np.float32)
    w[0, 0, 0, 0] = np.inf
    w[1, 2, 2, 1] = np.nan
    y, gx, gw = _torch(x, w, 1, 1, 1, np.ones((2, 4, 1, 1), np.float32))
    assert np.isfinite(y).all() and np.isfinite(gx).all()
    ex, ew = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
    out = ember.nn.functional.conv2d(ex, ew, padding=1)
    out.backward(ember.ones(2, 4, 1, 1))
    np.testing.assert_allclose(out.detach().numpy(), y, rtol=1e-6)
    np.testing.assert_allclose(ex.grad.numpy(), gx, rtol=1e-6)
    np.testing.assert_array_equal(ew.grad.numpy(), gw)


@pytest.mark.parametrize(
    "x_shape, w_shape, stride, padding, dilation, groups",
    [
        ((2, 4, 2, 2), (4, 4, 3, 3), 1, 1, 1, 1),  # a 2x2 output
        ((2, 4, 1, 1), (4, 2, 3, 3), 1, 1, 1, 2),  # groups
        ((2, 4, 4, 4), (4, 4, 3, 3), 4, 0, 1, 1),  # one pixel, but ...
    ],
)
def test_window_is_none_where_the_product_does_not_serve(
    x_shape, w_shape, stride, padding, dilation, groups
):
    op = C.Conv2d((stride, stride), (padding, padding), (dilation, dilation), groups)
    win = _conv_pixel.window(op, x_shape, w_shape)
    if x_shape[2] == 4:  # 4x4 input, 3x3 kernel, stride 4: one pixel from the top-left 3x3
        assert win == ((slice(0, 3, 1), slice(0, 3)), (slice(0, 3, 1), slice(0, 3)))
    else:
        assert win is None


def test_mixed_and_integer_dtypes_decline():
    op = C.Conv2d((1, 1), (1, 1), (1, 1), 1)
    win = _conv_pixel.window(op, (1, 2, 1, 1), (3, 2, 3, 3))
    f32 = np.zeros((1, 2, 1, 1), np.float32)
    assert _conv_pixel.applies(win, f32, np.zeros((3, 2, 3, 3), np.float32))
    assert not _conv_pixel.applies(win, f32, np.zeros((3, 2, 3, 3), np.float64))
    assert not _conv_pixel.applies(win, f32.astype(np.int32), np.zeros((3, 2, 3, 3), np.int32))
    assert not _conv_pixel.applies(None, f32, np.zeros((3, 2, 3, 3), np.float32))
