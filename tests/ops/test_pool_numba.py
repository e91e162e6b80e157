"""The CPU override of max pooling (numba, ``ember.ops._pool_numba``: 2x2 tiles and any other
window) against the NumPy body, and the per-pool cache of what the forward pass leaves for the
gradient.

Each test that takes ``mode`` (``tests/ops/conftest.py``) runs with the NumPy bodies and with
the numba kernels.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

import ember
from ember.backend import jit as _jit
from ember.ops import _pool_numba
from ember.ops import pool as P

F = ember.nn.functional


def _step(x, args, layout):
    """Output, input gradient and the gradient of that gradient's sum of squares w.r.t. g."""
    xt = ember.tensor(x)
    if layout == "channels_last":
        xt = ember.tensor(np.ascontiguousarray(x.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2)
    elif layout == "strided":
        xt = ember.tensor(np.repeat(x, 2, axis=3))[:, :, :, ::2]
    xt.requires_grad_()
    out = F.max_pool2d(xt, *args)
    g = ember.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape).astype(x.dtype))
    g.requires_grad_()
    (gx,) = ember.autograd.grad(out, xt, g, create_graph=True)
    (gg,) = ember.autograd.grad((gx * gx).sum(), g)  # MaxPoolGather
    return out.detach().numpy(), gx.detach().numpy(), gg.detach().numpy()


# (kernel, stride, padding, dilation, ceil_mode)
SETTINGS = [  # 2x2 tiles (their own kernels) first; the others take the any-window kernels
    ((2, 2), (2, 2), 0, 1, False),
    ((3, 2), (3, 2), 0, 1, False),
    ((2, 2), (2, 2), 0, 1, True),  # odd sizes: a window hangs over the edge
    ((3, 3), (2, 2), 1, 1, False),  # ResNet's stem: overlapping windows, padding
    ((3, 3), (2, 2), 1, 1, True),
    ((3, 2), (1, 2), (1, 0), (2, 1), False),
    ((3, 3), (1, 1), 1, 1, False),  # every element in up to nine windows
]


@pytest.mark.parametrize("setting", SETTINGS, ids=[str(s) for s in SETTINGS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "strided"])
def test_numba_matches_the_numpy_body(setting, dtype, layout, monkeypatch):
    if not _jit.available():
        pytest.skip("numba is not installed")
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 9)).astype(dtype)
    x[0, 0, 1, 1] = x[0, 0, 0, 1] = x[1, 2, 4, 4] = np.nan  # NaN propagates: the last one wins
    x[1, 1, 2:4, :] = 0  # ties: the first maximum wins
    results = {}
    for m in ("off", "sync"):
        monkeypatch.setattr(_jit, "_mode", m)
        results[m] = _step(x, setting, layout)
    assert _pool_numba.kernels(np.dtype(dtype)) is not None
    for got, want in zip(results["sync"], results["off"]):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    tx = torch.tensor(x, requires_grad=True)
    out = torch.nn.functional.max_pool2d(tx, *setting)
    out.backward(torch.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape).astype(dtype)))
    np.testing.assert_allclose(results["sync"][0], out.detach().numpy())
    np.testing.assert_allclose(results["sync"][1], tx.grad.numpy(), rtol=1e-6, atol=1e-6)


def _two_pools(x):
    """Two pools; returns the output, the first pool's output and the second pool's input."""
    h = F.max_pool2d(x, 2)
    r = F.relu(h * 2 - 0.5)
    return F.max_pool2d(r, 2), h, r


def test_every_pool_reuses_its_forward(mode, monkeypatch):
    """Both pools of a network leave their maxima for their gradients: the backward
    pass finds no window maximum again."""
    x = ember.tensor(np.random.default_rng(1).standard_normal((2, 3, 8, 8)), requires_grad=True)
    y, _, _ = _two_pools(x)
    assert len(P._cache()) >= 2
    calls = []
    for obj, name in [(P._PoolParams, "tiled_max"), (_pool_numba, "maxima")]:
        real = getattr(obj, name)
        monkeypatch.setattr(obj, name, lambda *a, _r=real, **k: calls.append(1) or _r(*a, **k))
    y.sum().backward()
    assert calls == []
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    h = torch.nn.functional.max_pool2d(tx, 2)
    torch.nn.functional.max_pool2d(torch.relu(h * 2 - 0.5), 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_in_place_ops_after_the_pools_do_not_change_the_gradient(mode):
    x_np = np.random.default_rng(2).standard_normal((2, 3, 8, 8))
    x = ember.tensor(x_np, requires_grad=True)
    y, h, _ = _two_pools(x)
    h.detach().mul_(-1)  # shares memory with the first pool's output (not saved: no error)
    y.detach().fill_(0)
    y.sum().backward()
    tx = torch.tensor(x_np, requires_grad=True)
    th = torch.nn.functional.max_pool2d(tx, 2)
    torch.nn.functional.max_pool2d(torch.relu(th * 2 - 0.5), 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_in_place_change_of_a_pool_input_is_caught(mode):
    x = ember.randn(2, 3, 8, 8, requires_grad=True)
    y, _, r = _two_pools(x)
    with ember.no_grad():
        r.add_(1)  # the second pool's input
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_cache_entries_die_with_their_input(mode):
    P._cache().clear()
    x = ember.randn(2, 3, 8, 8, requires_grad=True)
    y, h, r = _two_pools(x)
    assert len(P._cache()) == 2
    del x, y, h, r
    gc.collect()
    assert len(P._cache()) == 0


def test_no_entries_without_grad(mode):
    P._cache().clear()
    with ember.no_grad():
        F.max_pool2d(ember.randn(2, 3, 8, 8), 2)
    assert len(P._cache()) == 0


WINDOWS = {  # (kernel, stride, padding, dilation, ceil_mode)
    "2x2": ((2, 2), (2, 2), (0, 0), (1, 1), False),
    "3x3s2p1": ((3, 3), (2, 2), (1, 1), (1, 1), False),
    "3x2s1d2": ((3, 2), (1, 1), (1, 0), (2, 1), True),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x_layout", ["contiguous", "channels_last"])
@pytest.mark.parametrize("g_layout", ["contiguous", "channels_last"])
@pytest.mark.parametrize("special", ["none", "inf_g", "nan_x", "ties"])
@pytest.mark.parametrize("channels", [4, 16])  # 16 channels-last: the wide (vector) kernel
@pytest.mark.parametrize("kept", [False, True], ids=["found", "kept"])
@pytest.mark.parametrize("window", list(WINDOWS))
def test_scatter_kernel_matches_the_numpy_body(
    dtype, x_layout, g_layout, special, channels, kept, window, monkeypatch
):
    """MaxPoolScatter's override: the arithmetic path (finite g, no NaN), the exact path it
    falls back to (a NaN in a window, an infinite g), ties (first maximum); odd sizes leave
    the uncovered row and column zero; the result keeps x's layout. ``kept``: the forward
    override ran first and left each window's offset, which the scatter reads instead. Windows
    other than 2x2 tiles take the any-window kernels (overlapping windows add up)."""
    if not _jit.available():
        pytest.skip("numba is not installed")
    monkeypatch.setattr(_jit, "_mode", "sync")
    rng = np.random.default_rng(3)
    op = P.MaxPoolScatter(*WINDOWS[window])
    x = rng.standard_normal((3, channels, 7, 9)).astype(dtype)
    g = rng.standard_normal((3, channels, *op.out_hw(7, 9))).astype(dtype)
    if special == "inf_g":
        g[1, 2, 0, 1] = np.inf
    elif special == "nan_x":
        x[0, 1, 2, 3] = x[0, 1, 3, 2] = np.nan
    elif special == "ties":
        x[:, :, :4] = 0.0
        x[2, 3, 0, 1] = -0.0
    if x_layout == "channels_last":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    if g_layout == "channels_last":
        g = np.ascontiguousarray(g.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    P._cache().clear()
    want = op.forward(np, g, x)
    spy = []
    real = _pool_numba.scattered
    monkeypatch.setattr(_pool_numba, "scattered", lambda *a: spy.append(1) or real(*a))
    if kept:
        P._max_pool_cpu(P.MaxPool2d(*P._fields(op)), np, x)
        assert P._recall(x, op, "code") is not None
    got = P._max_pool_scatter_cpu(op, np, g, x)
    assert spy == ([] if window == "2x2" else [1])
    if window == "2x2":
        np.testing.assert_array_equal(got, want)
    else:  # where windows overlap, the sums of two or more g add up in another order
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert got.flags.c_contiguous == x.flags.c_contiguous
    tx, tg = torch.tensor(np.ascontiguousarray(x), requires_grad=True), torch.tensor(g)
    torch.nn.functional.max_pool2d(tx, *WINDOWS[window]).backward(tg)
    np.testing.assert_allclose(got, tx.grad.numpy(), rtol=1e-6, atol=1e-6)
    if window == "2x2":
        np.testing.assert_array_equal(got, tx.grad.numpy())


def test_any_window_forward_keeps_the_layout_and_matches_torch(monkeypatch):
    """ResNet's stem pool (3x3, stride 2, padding 1) on channels-last memory: the any-window
    kernel's maxima in the input's layout, equal to PyTorch's; larger windows than 255 taps
    decline (the taps are kept as uint8)."""
    if not _jit.available():
        pytest.skip("numba is not installed")
    monkeypatch.setattr(_jit, "_mode", "sync")
    x = np.random.default_rng(4).standard_normal((2, 16, 10, 10)).astype(np.float32)
    xl = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    op = P.MaxPool2d((3, 3), (2, 2), (1, 1), (1, 1), False)
    got = P._max_pool_cpu(op, np, xl)
    assert got.transpose(0, 2, 3, 1).flags.c_contiguous
    want = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 2, 1).numpy()
    np.testing.assert_array_equal(got, want)
    big = P.MaxPool2d((16, 16), (16, 16), (0, 0), (1, 1), False)
    assert P._max_pool_cpu(big, np, np.zeros((1, 1, 32, 32), np.float32)) is NotImplemented
