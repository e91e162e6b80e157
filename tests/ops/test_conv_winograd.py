"""Winograd F(2x2, 3x3) and F(4x4, 3x3) on the CPU (``ember.ops._winograd``,
``_winograd43``), the path the convolutions' CPU overrides take for 3x3 stride-1 convolutions
where it measured faster. Every table runs with each tile size (the ``winograd`` fixture).

Generated from a table of shapes, memory layouts and dtypes: the forward pass and the input
gradient through the overrides, against PyTorch and against the op's own NumPy body (numba and
Winograd off), and the cases the overrides decline. The overrides serve only shapes where the
path measured faster (``_winograd.pays``, with one BLAS thread); the tests open it to every
shape (``MIN_WORK = 0``, one BLAS thread) and check with a spy that Winograd ran.

Tolerances, as the relative error ``max |got - ref| / max |ref|`` against a float64
reference. float32: at most ``1e-6`` and at most 4x PyTorch's own float32 error on the same
inputs (plus 1e-7): the transforms add and subtract up to nine values each way before and after
the products, so Winograd's rounding is some times the direct sum's; measured on these cases
1.5-3.1e-7, PyTorch's (oneDNN) 1.5-7.5e-7, and at most 1.3x PyTorch's on any one case. Against
the op's NumPy body (im2col + GEMM in float32): ``2e-6``. float64: ``1e-12`` (measured ~4e-16).
F(4x4, 3x3) scales by up to 8 and 1/24 in its transforms: float32 at most ``1e-5`` against
float64 and against the body (measured 1.4-6.4e-6, 10-20x PyTorch's), float64 ``1e-12``
(measured 1.4-5.8e-15).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ember._config import state
from ember.backend import blas as _blas
from ember.backend import jit as _jit
from ember.ops import _winograd as W
from ember.ops import conv as C

if not _jit.available():
    pytest.skip(
        "numba is not installed (Winograd's transforms are numba kernels)", allow_module_level=True
    )

# (N, C, O, H, W, padding, layout, dtype)
CASES = [
    (2, 32, 32, 8, 8, 1, "last", np.float32),  # the digits model's second layer, two images
    (3, 32, 64, 4, 4, 1, "last", np.float32),  # its third
    (2, 64, 64, 4, 4, 1, "nchw", np.float32),
    (2, 32, 48, 7, 9, 1, "nchw", np.float32),  # odd height: a last row of tiles half used
    (1, 48, 32, 6, 5, 1, "last", np.float32),  # batch 1, odd width
    (2, 32, 32, 7, 6, 0, "last", np.float32),  # padding 0 (input gradient: padding 2)
    (1, 32, 40, 5, 7, 0, "nchw", np.float32),
    (2, 32, 36, 9, 8, 2, "last", np.float32),  # padding 2 (input gradient: padding 0)
    (2, 32, 32, 8, 8, 1, "last", np.float64),
    (1, 36, 32, 7, 5, 0, "nchw", np.float64),
    (2, 32, 40, 5, 6, 2, "last", np.float64),
    (1, 96, 96, 4, 4, 1, "nchw", np.float32),  # a weight of 2^16 values or more: a blocked
    (1, 80, 96, 4, 4, 1, "last", np.float64),  # transposing copy (ops._transpose_numba)
]
IDS = [
    f"{n}x{c}x{h}x{w}-o{o}-p{p}-{lay}-{np.dtype(dt).name}" for n, c, o, h, w, p, lay, dt in CASES
]


class Calls(list):
    """Whether each call of ``conv3x3`` ran Winograd, and the tile size the test opened."""

    tile = 2


@pytest.fixture(params=[2, 4], ids=["F2x2", "F4x4"])
def winograd(request, monkeypatch):
    """Winograd on for every shape with the tile size of the param, kernels compiled in the
    caller; a list of its calls."""
    monkeypatch.setattr(_jit, "_mode", "sync")
    monkeypatch.setattr(_blas, "one_thread", lambda: True)
    monkeypatch.setattr(W, "MIN_WORK", 0)
    monkeypatch.setattr(W, "MIN_OUTPUTS", 0)
    monkeypatch.setattr(W, "TILE4", request.param == 4)
    monkeypatch.setattr(W, "TILE4_MIN", 0)
    monkeypatch.setattr(W, "TILE4_TILES", 0)
    calls = Calls()
    calls.tile = request.param
    real = W.conv3x3

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        calls.append(out is not NotImplemented)
        return out

    monkeypatch.setattr(W, "conv3x3", spy)
    return calls


def _tol(dtype, tile: int) -> float:
    """The bound on the relative error against a float64 reference or the op's body."""
    if dtype == np.float64:
        return 1e-12
    return 2e-6 if tile == 2 else 1e-5


def _layout(a, layout):
    if layout == "last":
        return np.ascontiguousarray(a.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    return np.ascontiguousarray(a)


def _inputs(n, c, o, h, w, p, layout, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = _layout(rng.standard_normal((n, c, h, w)).astype(dtype), layout)
    wt = (rng.standard_normal((o, c, 3, 3)) / np.sqrt(9 * c)).astype(dtype)
    g = _layout(rng.standard_normal((n, o, h + 2 * p - 2, w + 2 * p - 2)).astype(dtype), layout)
    return x, wt, g


def _torch(x, w, g, p, dtype):
    """PyTorch's output and input gradient, computed in ``dtype``."""
    tx = torch.tensor(np.asarray(x, dtype), requires_grad=True)
    y = torch.nn.functional.conv2d(tx, torch.tensor(np.asarray(w, dtype)), padding=p)
    y.backward(torch.tensor(np.asarray(g, dtype)))
    return y.detach().numpy(), tx.grad.numpy()


def _rel(a, ref):
    return float(np.abs(np.asarray(a, np.float64) - ref).max() / np.abs(ref).max())


def _reference_body(op, *arrays, monkeypatch):
    """The op's NumPy body with numba and Winograd off."""
    with monkeypatch.context() as m:
        m.setattr(_jit, "_mode", "off")
        m.setattr(W, "ENABLED", False)
        return op.forward(np, *arrays)


def _check(got, ref64, torch32, dtype, tile):
    err = _rel(got, ref64)
    if dtype == np.float64 or tile == 4:
        assert err < _tol(dtype, tile), err
    else:
        own = _rel(torch32, ref64)
        assert err < 1e-6 and err < 4 * own + 1e-7, (err, own)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward(case, winograd, monkeypatch):
    n, c, o, h, w, p, layout, dtype = case
    x, wt, g = _inputs(*case)
    op = C.Conv2d((1, 1), (p, p), (1, 1), 1)
    monkeypatch.setattr(state, "grad_enabled", False)  # no recording: no tiles kept
    got = C._conv2d_cpu(op, np, x, wt)
    assert got.shape == (n, o, h + 2 * p - 2, w + 2 * p - 2)
    assert got.transpose(0, 2, 3, 1).flags.c_contiguous  # channels-last, as im2col's result
    _check_winograd_ran(got, 0, winograd, case, op, (x, wt), monkeypatch)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_input_gradient(case, winograd, monkeypatch):
    n, c, o, h, w, p, layout, dtype = case
    x, wt, g = _inputs(*case)
    op = C.Conv2dGradInput(x.shape, (1, 1), (p, p), (1, 1), 1)
    got = C._conv2d_grad_input_cpu(op, np, g, wt)
    assert got.shape == x.shape
    _check_winograd_ran(got, 1, winograd, case, op, (g, wt), monkeypatch)


def _check_winograd_ran(got, which, winograd, case, op, arrays, monkeypatch):
    """Winograd ran once; ``got`` (PyTorch's output for ``which`` 0, its input gradient for 1)
    within the tolerances above of float64 PyTorch, float32 PyTorch and the op's own body."""
    dtype, p = case[7], case[5]
    x, wt, g = _inputs(*case)
    assert winograd == [True]
    assert got.dtype == dtype
    ref64 = _torch(x, wt, g, p, np.float64)[which]
    _check(got, ref64, _torch(x, wt, g, p, np.float32)[which], dtype, winograd.tile)
    body = _reference_body(op, *arrays, monkeypatch=monkeypatch)
    assert _rel(got, body.astype(np.float64)) < _tol(dtype, winograd.tile)


@pytest.mark.parametrize("case", CASES[::3], ids=IDS[::3])
def test_weight_gradient(case, winograd):
    """``grad_weight3x3``, from the forward pass's kept tiles and from the input alone."""
    n, c, o, h, w, p, layout, dtype = case
    x, wt, g = _inputs(*case)
    _, v = W.conv3x3(np, x, wt, (p, p), keep=True)
    tw = torch.tensor(wt.astype(np.float64), requires_grad=True)
    y = torch.nn.functional.conv2d(torch.tensor(x.astype(np.float64)), tw, padding=p)
    y.backward(torch.tensor(g.astype(np.float64)))
    ref = tw.grad.numpy()
    for kept in (v, None):
        got = W.grad_weight3x3(np, x, g, (p, p), kept)
        assert got.shape == wt.shape and got.dtype == dtype
        assert _rel(got, ref) < _tol(dtype, winograd.tile)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_blocks_of_images(threads, winograd, monkeypatch):
    """A batch larger than ``GROUP_BYTES`` of transformed tiles and products goes through in
    blocks of images, in one run of blocks per thread (5 images, 2 a block: 3 blocks)."""
    m = winograd.tile
    th = 8 // m
    image = (m + 2) ** 2 * th * th * 64 * 8  # an 8x8 image's tiles and products, float64
    monkeypatch.setattr(W, "GROUP_BYTES", 2 * image)  # two images a block
    monkeypatch.setattr(_blas._config, "get_num_threads", lambda: threads)
    x, wt, g = _inputs(5, 32, 32, 8, 8, 1, "last", np.float64)
    assert W._plan(5, th, th, 64, 8, m) == (2, min(threads, 3))
    ref, dx = _torch(x, wt, g, 1, np.float64)
    y, v = W.conv3x3(np, x, wt, (1, 1), keep=True)
    assert _rel(y, ref) < 1e-12
    assert _rel(W.conv3x3(np, g, wt, (1, 1), swap=True), dx) < 1e-12
    tw = torch.tensor(wt, requires_grad=True)
    torch.nn.functional.conv2d(torch.tensor(x), tw, padding=1).backward(torch.tensor(g))
    for kept in (v, None):
        assert _rel(W.grad_weight3x3(np, x, g, (1, 1), kept), tw.grad.numpy()) < 1e-12


def _declines(op, x, w, monkeypatch, grad=False):
    with monkeypatch.context() as m:
        m.setattr(state, "grad_enabled", grad)
        return C._conv2d_winograd(op, np, x, w) is NotImplemented


DECLINED = [  # (what, stride, padding, dilation, groups, w shape, dtype)
    ("stride 2", (2, 2), (1, 1), (1, 1), 1, (32, 32, 3, 3), np.float32),
    ("dilation 2", (1, 1), (2, 2), (2, 2), 1, (32, 32, 3, 3), np.float32),
    ("groups 2", (1, 1), (1, 1), (1, 1), 2, (32, 16, 3, 3), np.float32),
    ("5x5", (1, 1), (2, 2), (1, 1), 1, (32, 32, 5, 5), np.float32),
    ("1x1", (1, 1), (0, 0), (1, 1), 1, (32, 32, 1, 1), np.float32),
    ("3x1", (1, 1), (1, 0), (1, 1), 1, (32, 32, 3, 1), np.float32),
    ("float16", (1, 1), (1, 1), (1, 1), 1, (32, 32, 3, 3), np.float16),
    ("one input channel", (1, 1), (1, 1), (1, 1), 1, (32, 1, 3, 3), np.float32),
]


@pytest.mark.parametrize("case", DECLINED, ids=[d[0] for d in DECLINED])
def test_declines_what_it_does_not_serve(case, winograd, monkeypatch):
    _, stride, padding, dilation, groups, ws, dtype = case
    x = np.ones((2, ws[1] * groups, 8, 8), dtype)
    assert _declines(
        C.Conv2d(stride, padding, dilation, groups), x, np.ones(ws, dtype), monkeypatch
    )
    op = C.Conv2dGradInput(x.shape, stride, padding, dilation, groups)
    g = np.ones(C.conv_output_shape(x.shape, ws, op), dtype)
    out = C._conv2d_grad_input_cpu(op, np, g, np.ones(ws, dtype))
    assert not any(winograd) and (out is NotImplemented or out.shape == x.shape)


def test_declines_by_policy(winograd, monkeypatch):
    x, wt, g = _inputs(2, 32, 32, 8, 8, 1, "last", np.float32)
    op = C.Conv2d((1, 1), (1, 1), (1, 1), 1)
    assert not _declines(op, x, wt, monkeypatch)
    assert not _declines(op, x, wt, monkeypatch, grad=True)  # keeps its tiles for dw
    assert not _declines(C._GradInputConv((1, 1), (1, 1), (1, 1), 1), x, wt, monkeypatch, True)
    assert _declines(op, x, wt.astype(np.float64), monkeypatch)  # mixed dtypes
    gi = C.Conv2dGradInput(x.shape, (1, 1), (3, 3), (1, 1), 1)  # padding 3: no "full" padding
    g3 = np.ones((2, 32, 12, 12), np.float32)
    before = len(winograd)
    C._conv2d_grad_input_cpu(gi, np, g3, wt)
    assert len(winograd) == before
    for attr, value in (("ENABLED", False), ("MIN_WORK", 1 << 40), ("MIN_OUTPUTS", 1 << 40)):
        with monkeypatch.context() as m:
            m.setattr(W, attr, value)
            assert _declines(op, x, wt, monkeypatch), attr
    with monkeypatch.context() as m:  # numba off: no transforms
        m.setattr(_jit, "_mode", "off")
        assert _declines(op, x, wt, monkeypatch)


def test_policy_serves_the_measured_shapes(monkeypatch):
    """With one BLAS thread a product (numba's threads split them): the digits model's 3x3
    layers (64 images) and conv2d.py's 64x64x32x32, not the first layer's single input
    channel nor small products nor few output pixels; with more BLAS threads, none."""
    monkeypatch.setattr(W, "ENABLED", True)
    monkeypatch.setattr(_blas, "one_thread", lambda: True)
    assert W.pays(64, 32, 32, 8, 8) and W.pays(64, 32, 64, 4, 4) and W.pays(64, 64, 64, 4, 4)
    assert W.pays(64, 64, 32, 4, 4)  # the third layer's input gradient
    assert W.pays(64, 64, 64, 32, 32)
    assert not W.pays(64, 1, 32, 8, 8) and not W.pays(1, 64, 64, 4, 4)
    assert not W.pays(64, 8, 8, 32, 32)
    # ResNet-18's third stage on 32x32 images: 32 images of 2x2 maps (few output pixels)
    assert not W.pays(32, 256, 256, 2, 2) and not W.pays(8, 256, 256, 4, 4)
    assert W.pays(64, 128, 128, 2, 2) and W.pays(32, 256, 256, 4, 4)
    monkeypatch.setattr(_blas, "one_thread", lambda: False)  # more BLAS threads: large products
    assert W.pays(64, 64, 64, 32, 32)
    assert not W.pays(64, 32, 32, 8, 8) and not W.pays(64, 64, 64, 4, 4)


def test_tile_size_follows_the_measurements(monkeypatch):
    """F(4x4, 3x3) from 16x16 output maps, or 8x8 ones with 64 channels or more, where the
    batch makes at least two 4x4 tiles per channel (the shapes measured faster in the module's
    table); F(2x2, 3x3) elsewhere and with ``TILE4`` off."""
    assert W.tile_size(64, 64, 64, 32, 32) == W.tile_size(64, 32, 32, 16, 16) == 4
    assert W.tile_size(64, 128, 128, 16, 16) == W.tile_size(8, 256, 256, 32, 32) == 4
    assert W.tile_size(128, 256, 256, 8, 8) == W.tile_size(64, 64, 64, 8, 8) == 4
    assert W.tile_size(64, 32, 32, 8, 8) == 2  # the digits model: too few channels at 8x8
    assert W.tile_size(64, 128, 128, 4, 4) == W.tile_size(256, 64, 64, 4, 4) == 2  # 4x4 maps
    assert W.tile_size(8, 512, 512, 16, 16) == W.tile_size(4, 128, 128, 16, 16) == 2  # few tiles
    assert W.tile_size(32, 256, 256, 8, 8) == 2
    monkeypatch.setattr(W, "TILE4", False)
    assert W.tile_size(64, 64, 64, 32, 32) == 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kept", [True, False], ids=["tiles kept", "tiles evicted"])
def test_training_step_takes_winograd_for_all_three(dtype, kept, winograd, monkeypatch):
    """A recorded forward pass keeps its transformed tiles and the weight gradient's override
    reads them (or transforms the input again once they were evicted); the Conv2d layer's
    output and both gradients equal PyTorch's."""
    import ember

    if not kept:
        monkeypatch.setattr(C, "KEEP_BYTES", 0)
    x, wt, g = _inputs(2, 32, 40, 6, 8, 1, "last", dtype)
    ex, ew = ember.from_numpy(x).requires_grad_(), ember.from_numpy(wt).requires_grad_()
    y = ember.nn.functional.conv2d(ex, ew, padding=1)
    assert len(winograd) == 1  # the forward pass
    tiles = []
    real = W.grad_weight3x3
    monkeypatch.setattr(W, "grad_weight3x3", lambda *a: tiles.append(a[-1]) or real(*a))
    y.backward(ember.from_numpy(g))
    assert len(winograd) == 2  # and the input gradient
    assert len(tiles) == 1 and (tiles[0] is not None) == kept  # the weight gradient
    tx = torch.tensor(x.astype(np.float64), requires_grad=True)
    tw = torch.tensor(wt.astype(np.float64), requires_grad=True)
    ty = torch.nn.functional.conv2d(tx, tw, padding=1)
    ty.backward(torch.tensor(g.astype(np.float64)))
    for got, ref in ((y, ty), (ex.grad, tx.grad), (ew.grad, tw.grad)):
        assert got.detach().numpy().dtype == dtype
        assert _rel(got.detach().numpy(), ref.detach().numpy()) < _tol(dtype, winograd.tile)


def test_f2x2_serves_while_f4x4_compiles(monkeypatch):
    """Where the policy asks for F(4x4, 3x3) but its module is not compiled yet, F(2x2, 3x3)
    runs (not im2col), and the weight gradient follows the tiles the forward pass kept."""
    from ember.ops import _winograd43

    monkeypatch.setattr(_jit, "_mode", "sync")
    monkeypatch.setattr(W, "TILE4", True)
    monkeypatch.setattr(_winograd43, "kernels", lambda dtype: None)
    x, wt, g = _inputs(16, 32, 32, 16, 16, 1, "last", np.float64)
    assert W.tile_size(16, 32, 32, 16, 16) == 4
    y, v = W.conv3x3(np, x, wt, (1, 1), keep=True)
    assert v.shape[0] == 16
    ref, _ = _torch(x, wt, g, 1, np.float64)
    assert _rel(y, ref) < 1e-12
    tw = torch.tensor(wt, requires_grad=True)
    torch.nn.functional.conv2d(torch.tensor(x), tw, padding=1).backward(torch.tensor(g))
    for kept in (v, None):
        assert _rel(W.grad_weight3x3(np, x, g, (1, 1), kept), tw.grad.numpy()) < 1e-12
