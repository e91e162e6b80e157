"""The negative log-likelihood as one op (``ember.ops.loss.NllLoss`` and its gradient op), its
CPU kernels (numba, ``ember.ops._nll_numba``) and the CPU override of ``CheckRange``: values,
gradients and second derivatives against PyTorch, kernels against the NumPy bodies.

Each test that takes ``mode`` (``tests/ops/conftest.py``) runs with the NumPy bodies and with
the numba kernels.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import ember
from ember._errors import EmberIndexError
from ember.backend import jit as _jit
from ember.ops import _nll_numba
from ember.ops.base import apply
from ember.ops.loss import NllLoss, NllLossGrad

F = ember.nn.functional
TOL = {np.float64: dict(rtol=1e-12, atol=1e-14), np.float32: dict(rtol=2e-6, atol=2e-7)}


def _inputs(shape, ignore, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype) * 2
    t = rng.integers(0, shape[1], (shape[0],) + shape[2:])
    if ignore is not None:
        t.reshape(-1)[::3] = ignore
    return x, t


SHAPES = [(6, 4), (3, 5, 2, 3), (1, 3)]
CASES = list(itertools.product(SHAPES, (None, -100, 2), ("none", "sum", "mean")))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "ignore", "reduction"), CASES, ids=str)
def test_cross_entropy_against_torch(mode, shape, ignore, reduction, dtype):
    """Loss, gradient, and the gradient of the gradient's sum of squares (second order)."""
    x, t = _inputs(shape, ignore, dtype)
    ig = -100 if ignore is None else ignore
    results = []
    for lib in (ember, torch):
        xt = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(
            xt, lib.tensor(t), ignore_index=ig, reduction=reduction
        )
        g = np.linspace(-1, 1, loss.numel()).reshape(tuple(loss.shape)).astype(dtype)
        (gx,) = lib.autograd.grad(loss, xt, lib.tensor(g), create_graph=True)
        (ggx,) = lib.autograd.grad((gx * gx).sum(), xt)
        results.append([r.detach().numpy() for r in (loss, gx, ggx)])
    for got, want in zip(*results):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, equal_nan=True, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "ignore", "reduction"), CASES, ids=str)
def test_kernels_match_the_numpy_bodies(shape, ignore, reduction, dtype, monkeypatch):
    if not _jit.available():
        pytest.skip("numba is not installed")
    monkeypatch.setattr(_jit, "_mode", "sync")
    logp, t = _inputs(shape, ignore, dtype)
    g = np.asarray(np.linspace(0.5, 1.5, t.size).reshape(t.shape) if reduction == "none" else 0.7)
    g = g.astype(dtype)
    op, grad = NllLoss(reduction, ignore), NllLossGrad(reduction, ignore)
    got = _nll_numba.nll_loss(logp, t, reduction, ignore)
    got_g = _nll_numba.nll_loss_grad(g, logp, t, reduction, ignore)
    assert got is not None and got_g is not None
    for a, b in ((got, op.forward(np, logp, t)), (got_g, grad.forward(np, g, logp, t))):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, **TOL[dtype])


def test_the_kernels_serve_a_classifier_step(monkeypatch):
    if not _jit.available():
        pytest.skip("numba is not installed")
    monkeypatch.setattr(_jit, "_mode", "sync")
    ran = []
    for name in ("nll_loss", "nll_loss_grad"):
        real = getattr(_nll_numba, name)
        monkeypatch.setattr(
            _nll_numba, name, lambda *a, real=real, name=name: ran.append(name) or real(*a)
        )
    x = ember.randn(8, 5, requires_grad=True)
    F.cross_entropy(x, ember.tensor([0, 1, 2, 3, 4, 0, 1, 2])).backward()
    assert ran == ["nll_loss", "nll_loss_grad"]


def test_kernels_decline_what_they_do_not_serve(monkeypatch):
    """A strided input, and float16, run the NumPy body."""
    if not _jit.available():
        pytest.skip("numba is not installed")
    monkeypatch.setattr(_jit, "_mode", "sync")
    logp, t = _inputs((4, 6), -100, np.float32)
    assert _nll_numba.nll_loss(logp[:, ::2], t, "mean", -100) is None
    assert _nll_numba.nll_loss(logp.astype(np.float16), t, "mean", -100) is None
    assert _nll_numba.nll_loss(logp, t.astype(np.int32), "mean", -100) is None
    g = np.ones(3, np.float32)  # 'none' with a gradient of the wrong shape
    assert _nll_numba.nll_loss_grad(g, logp, t, "none", -100) is None


def test_all_ignored_is_nan_with_zero_gradient(mode):
    x = ember.randn(3, 4, requires_grad=True)
    loss = F.cross_entropy(x, ember.tensor([-100, -100, -100]))
    loss.backward()
    assert np.isnan(loss.item())
    assert np.array_equal(x.grad.numpy(), np.zeros((3, 4), np.float32))


def test_compiled_equals_eager(mode):
    logits, t = _inputs((6, 4), -100, np.float32)
    x = ember.tensor(logits, requires_grad=True)

    def step(x, t):
        loss = F.cross_entropy(x, t)
        loss.backward()
        return loss

    target = ember.tensor(t)
    eager = step(x, target).item(), x.grad.numpy().copy()
    x.grad = None
    fast = ember.compile(step)
    for _ in range(2):
        got = fast(x, target).item(), x.grad.numpy().copy()
        x.grad = None
        assert got[0] == eager[0]
        # the compiled log-softmax gradient is one fused kernel (its exp is numba's, not NumPy's)
        np.testing.assert_allclose(got[1], eager[1], rtol=1e-6, atol=1e-7)
    assert "NllLoss" in str(fast.graph)


def test_a_bad_target_in_a_compiled_step_names_it(mode):
    fast = ember.compile(lambda x, t: F.cross_entropy(x, t))
    x = ember.randn(3, 4)
    fast(x, ember.tensor([0, 1, 2]))
    with pytest.raises(EmberIndexError, match=r"cross_entropy: Target 7 is out of bounds"):
        fast(x, ember.tensor([0, 7, 2]))
    with pytest.raises(EmberIndexError, match=r"Target -3 is out of bounds"):
        fast(x, ember.tensor([0, -3, -100]))  # -100 is ignored, -3 is not


def test_nll_loss_op_checks_shapes():
    with pytest.raises(ember.ShapeError, match=r"nll_loss: expected a target of shape \[3\]"):
        apply(NllLoss(), ember.zeros(3, 4), ember.tensor([0, 1]))
