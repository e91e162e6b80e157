"""The CPU overrides of batch normalization (numba, ``ember.ops._norm_numba``) against the ops'
NumPy bodies, in both layouts the kernels serve (NCHW and channels-last memory), and a
training step against PyTorch with the kernels on and off."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.backend import jit as _jit
from ember.backend import overrides
from ember.ops import _norm_numba
from ember.ops import norm as Nm

needs_numba = pytest.mark.skipif(not _jit.available(), reason="numba is not installed")


def _channels_last(a):
    return np.ascontiguousarray(np.moveaxis(a, 1, -1)).transpose(
        0, a.ndim - 1, *range(1, a.ndim - 1)
    )


def _layout(a, layout):
    if layout == "channels_last":
        return _channels_last(a)
    if layout == "strided":
        return np.repeat(a, 2, axis=-1)[..., ::2]
    return a


def _cases(shape, dtype, x_layout, g_layout, affine):
    rng = np.random.default_rng(0)
    x = _layout((rng.standard_normal(shape) * 3 + 2).astype(dtype), x_layout)
    g = _layout(rng.standard_normal(shape).astype(dtype), g_layout)
    c = shape[1]
    wb = (rng.random(c).astype(dtype) + 0.5, rng.standard_normal(c).astype(dtype))
    wb = wb if affine else ()
    stats = Nm.BatchMoments().forward(np, x)
    sums = Nm.BatchNormSums(1e-5, True).forward(np, g, x, stats)
    return [
        (Nm.BatchMoments(), (x,)),
        (Nm.BatchNormalize(1e-5, True, affine, affine), (x, stats, *wb)),
        (Nm.BatchNormalize(1e-3, False, affine, affine), (x, np.abs(stats), *wb)),
        (Nm.BatchNormSums(1e-5, True), (g, x, stats)),
        (Nm.BatchNormGradInput(1e-5, affine), (g, x, stats, sums, *wb[:1])),
    ]


SHAPES = [(64, 32, 8, 8), (5, 3, 4, 7), (6, 4), (4, 3, 5), (2, 3, 2, 2, 3), (3, 1, 4, 4)]


@needs_numba
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x_layout", ["contiguous", "channels_last", "strided"])
@pytest.mark.parametrize("g_layout", ["contiguous", "channels_last"])
@pytest.mark.parametrize("affine", [True, False])
def test_numba_matches_the_numpy_body(shape, dtype, x_layout, g_layout, affine, monkeypatch):
    monkeypatch.setattr(_jit, "_mode", "sync")
    if len(shape) == 2 and "channels_last" in (x_layout, g_layout):
        pytest.skip("no channels-last layout of a 2-D array")
    served = x_layout != "strided"
    for op, args in _cases(shape, dtype, x_layout, g_layout, affine):
        want = op.forward(np, *args)
        got = overrides.table("cpu")[type(op)](op, np, *args)
        if not served:
            assert got is NotImplemented
            continue
        assert got is not NotImplemented, type(op).__name__
        assert got.dtype == want.dtype and got.shape == want.shape
        tol = 2e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))
        if got.shape == args[0].shape and len(shape) > 2:  # results keep x's layout
            x = args[0] if isinstance(op, Nm.BatchNormalize) else args[1]
            assert got.flags.c_contiguous == x.flags.c_contiguous


@needs_numba
@pytest.mark.parametrize("shape", [(7, 5, 6, 6), (6, 40, 3, 3), (5, 3, 9)], ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
def test_split_over_threads_is_bit_identical(shape, layout, monkeypatch):
    """``parts``: normalize and the input gradient split in blocks of images (three here, over
    numba's threads) give the serial kernels' bits."""
    monkeypatch.setattr(_jit, "_mode", "sync")
    monkeypatch.setattr(_norm_numba._blas, "kernel_threads", lambda: 3)
    results = {}
    for split in (False, True):
        monkeypatch.setattr(_norm_numba, "PARALLEL_MIN", 0 if split else 1 << 40)
        ops = _cases(shape, np.float32, layout, layout, True)[1:]
        results[split] = [overrides.table("cpu")[type(op)](op, np, *args) for op, args in ops]
        assert _norm_numba.parts(ops[0][1][0]) == (3 if split else 1)
    for a, b in zip(results[False], results[True]):
        assert a is not NotImplemented
        np.testing.assert_array_equal(a, b)


@needs_numba
def test_half_types_and_other_layouts_decline(monkeypatch):
    monkeypatch.setattr(_jit, "_mode", "sync")
    x = np.ones((2, 3, 4), np.float16)
    assert overrides.table("cpu")[Nm.BatchMoments](Nm.BatchMoments(), np, x) is NotImplemented
    assert _norm_numba.view(np.ones((4, 3, 2))[:, ::2]) is None


@pytest.mark.parametrize("mode", ["off", "sync"])
def test_training_step_matches_pytorch(mode, monkeypatch):
    """conv -> BatchNorm -> ReLU -> max-pool, forward and backward, channels-last activations
    (a convolution's output) through the kernels, against PyTorch."""
    if mode == "sync" and not _jit.available():
        pytest.skip("numba is not installed")
    monkeypatch.setattr(_jit, "_mode", mode)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((6, 3, 3, 3)).astype(np.float32) * 0.3
    outs = {}
    for lib in (ember, torch):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        bn = lib.nn.BatchNorm2d(6)
        y = lib.nn.functional.conv2d(xt, wt, padding=1)
        y = lib.nn.functional.max_pool2d(lib.relu(bn(y)), 2)
        (y * y).sum().backward()
        outs[lib.__name__] = [
            a.detach().numpy() for a in (y, xt.grad, wt.grad, bn.weight.grad, bn.running_var)
        ]
    for e, t in zip(outs["ember"], outs["torch"]):
        np.testing.assert_allclose(e, t, rtol=1e-4, atol=1e-4)
