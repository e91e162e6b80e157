"""ember.nn.utils gradient clipping and parameter vectors against torch.nn.utils."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import ember
from ember import nn
from ember.nn import utils as U

SHAPES = [(3, 4), (5,), (), (2, 1, 3)]


def _params(dtype="float64", grads=(0, 1, 2, 3), scale=1.0, special=None):
    """The same parameters with the same gradients in ember and torch (None where not in
    ``grads``); ``special`` puts a value (inf, nan) into the first gradient."""
    rng = np.random.default_rng(0)
    ep, tp = [], []
    for i, s in enumerate(SHAPES):
        w = rng.standard_normal(s).astype(dtype)
        g = (rng.standard_normal(s) * scale).astype(dtype)
        if special is not None and i == 0:
            g.reshape(-1)[1] = special
        e, t = nn.Parameter(ember.tensor(w)), torch.nn.Parameter(torch.tensor(w))
        if i in grads:
            e.grad, t.grad = ember.tensor(g), torch.tensor(g)
        ep.append(e)
        tp.append(t)
    return ep, tp


def _same_grads(ep, tp, rtol=1e-12, atol=1e-14):
    for e, t in zip(ep, tp):
        assert (e.grad is None) == (t.grad is None)
        if t.grad is not None:
            np.testing.assert_allclose(
                e.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol, equal_nan=True
            )


NORMS = [2.0, 1.0, math.inf, -math.inf, 0.0, 3.0, 0.5, "inf", 2]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("max_norm", [0.5, 1e4])
@pytest.mark.parametrize("norm_type", NORMS, ids=str)
def test_clip_grad_norm_matches_torch(norm_type, max_norm, dtype):
    ep, tp = _params(dtype, grads=(0, 1, 3))
    tol = dict(rtol=1e-12, atol=1e-14) if dtype == "float64" else dict(rtol=1e-5, atol=1e-6)
    before = [p.grad for p in ep]
    te = U.clip_grad_norm_(ep, max_norm, norm_type=norm_type)
    tt = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type=norm_type)
    assert isinstance(te, ember.Tensor) and te.shape == () and str(te.dtype) == f"ember.{dtype}"
    assert not te.requires_grad
    np.testing.assert_allclose(te.numpy(), tt.numpy(), **tol)
    _same_grads(ep, tp, **tol)
    assert all(a is b for a, b in zip(before, (p.grad for p in ep)))  # clipped in place


def test_clip_grad_norm_single_tensor_generator_and_empty():
    ep, tp = _params()
    te = U.clip_grad_norm_(ep[0], 0.1)
    tt = torch.nn.utils.clip_grad_norm_(tp[0], 0.1)
    np.testing.assert_allclose(te.numpy(), tt.numpy(), rtol=1e-12)
    _same_grads(ep, tp)
    te = U.clip_grad_norm_((p for p in ep), 0.05, norm_type=1)
    tt = torch.nn.utils.clip_grad_norm_((p for p in tp), 0.05, norm_type=1)
    np.testing.assert_allclose(te.numpy(), tt.numpy(), rtol=1e-12)
    _same_grads(ep, tp)
    with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
        out = U.clip_grad_norm_((p for p in []), 1.0)
    assert out.item() == 0.0 and out.dtype == ember.float32
    no_grads, _ = _params(grads=())
    assert U.clip_grad_norm_(no_grads, 1.0).item() == 0.0
    ember.set_default_dtype(ember.float64)
    assert U.clip_grad_norm_([], 1.0).dtype == ember.float64


def test_clip_grad_norm_mixed_dtypes_promote():
    ep, tp = _params()
    ep[1].data, ep[1].grad = ep[1].data.float(), ep[1].grad.float()
    tp[1].data, tp[1].grad = tp[1].data.float(), tp[1].grad.float()
    te = U.clip_grad_norm_(ep, 0.3)
    tt = torch.nn.utils.clip_grad_norm_(tp, 0.3)
    assert te.dtype == ember.float64
    np.testing.assert_allclose(te.numpy(), tt.numpy(), rtol=1e-7)
    _same_grads(ep, tp, rtol=1e-6, atol=1e-7)
    assert ep[1].grad.dtype == ember.float32


@pytest.mark.parametrize("special", [math.inf, -math.inf, math.nan])
@pytest.mark.parametrize("norm_type", [2.0, math.inf, 1.0])
def test_clip_grad_norm_nonfinite(special, norm_type):
    ep, tp = _params(special=special)
    te = U.clip_grad_norm_(ep, 1.0, norm_type=norm_type)
    tt = torch.nn.utils.clip_grad_norm_(tp, 1.0, norm_type=norm_type)
    np.testing.assert_allclose(te.numpy(), tt.numpy(), equal_nan=True)
    _same_grads(ep, tp)
    ep, tp = _params(special=special)
    with pytest.raises(
        RuntimeError,
        match=r"The total norm of order .* for gradients from "
        r"`parameters` is non-finite, so it cannot be clipped",
    ):
        U.clip_grad_norm_(ep, 1.0, norm_type=norm_type, error_if_nonfinite=True)
    with pytest.raises(RuntimeError):
        torch.nn.utils.clip_grad_norm_(tp, 1.0, norm_type=norm_type, error_if_nonfinite=True)
    _same_grads(ep, tp)  # nothing clipped when it raises


@pytest.mark.parametrize("foreach", [None, True, False])
def test_foreach_is_accepted(foreach):
    ep, tp = _params()
    te = U.clip_grad_norm_(ep, 0.2, foreach=foreach)
    tt = torch.nn.utils.clip_grad_norm_(tp, 0.2, foreach=foreach)
    np.testing.assert_allclose(te.numpy(), tt.numpy(), rtol=1e-12)
    U.clip_grad_value_(ep, 0.01, foreach=foreach)
    torch.nn.utils.clip_grad_value_(tp, 0.01, foreach=foreach)
    _same_grads(ep, tp)


def test_clip_under_grad_mode_records_nothing():
    ep, _ = _params()
    total = U.clip_grad_norm_(ep, 0.1)
    assert not total.requires_grad and total.grad_fn is None
    assert all(p.grad is None or p.grad.grad_fn is None for p in ep)


def test_get_total_norm_and_clip_grads_with_norm():
    ep, tp = _params()
    eg = [p.grad for p in ep if p.grad is not None]
    tg = [p.grad for p in tp if p.grad is not None]
    te = U.get_total_norm(eg, norm_type=3.0)
    tt = torch.nn.utils.get_total_norm(tg, norm_type=3.0)
    np.testing.assert_allclose(te.numpy(), tt.numpy(), rtol=1e-12)
    U.clip_grads_with_norm_(ep, 0.7, te)
    torch.nn.utils.clip_grads_with_norm_(tp, 0.7, tt)
    _same_grads(ep, tp)


def test_clip_grad_norm_deprecated_alias():
    ep, _ = _params()
    with pytest.warns(
        FutureWarning, match="deprecated in favor of `torch.nn.utils.clip_grad_norm_`"
    ):
        U.clip_grad_norm(ep, 1.0)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("clip", [0.3, 1.0, 5.0, 0])
def test_clip_grad_value_matches_torch(clip, dtype):
    ep, tp = _params(dtype, grads=(0, 2, 3), scale=2.0)
    assert U.clip_grad_value_(ep, clip) is None
    torch.nn.utils.clip_grad_value_(tp, clip)
    _same_grads(ep, tp)
    ep, tp = _params(dtype, special=math.nan)
    U.clip_grad_value_(ep[0], clip)
    torch.nn.utils.clip_grad_value_(tp[0], clip)
    _same_grads(ep, tp)


def test_parameters_to_vector_and_back():
    enet, tnet = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    with torch.no_grad():
        for e, t in zip(enet.parameters(), tnet.parameters()):
            t.copy_(torch.tensor(e.detach().numpy()))
    ev = U.parameters_to_vector(enet.parameters())
    tv = torch.nn.utils.parameters_to_vector(tnet.parameters())
    np.testing.assert_array_equal(ev.detach().numpy(), tv.detach().numpy())
    assert ev.requires_grad  # differentiable, like torch.cat of views
    (ev * ev).sum().backward()
    np.testing.assert_allclose(enet.weight.grad.numpy(), 2 * enet.weight.detach().numpy())
    new = np.arange(8, dtype=np.float32)
    U.vector_to_parameters(ember.tensor(new), enet.parameters())
    torch.nn.utils.vector_to_parameters(torch.tensor(new), tnet.parameters())
    for e, t in zip(enet.parameters(), tnet.parameters()):
        np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())
        assert isinstance(e, nn.Parameter) and e.requires_grad
    with pytest.raises(TypeError, match="expected ember.Tensor, but got: list"):
        U.vector_to_parameters([1.0], enet.parameters())
    with pytest.raises(RuntimeError):
        U.vector_to_parameters(ember.zeros(3), [nn.Parameter(ember.zeros(2, 2))])


def test_clipping_in_a_training_step():
    """Clip between backward and step, as in a training loop: same parameters as torch."""
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((8, 3)).astype(np.float32), rng.standard_normal((8, 1))
    enet, tnet = nn.Linear(3, 1), torch.nn.Linear(3, 1)
    with torch.no_grad():
        for e, t in zip(enet.parameters(), tnet.parameters()):
            t.copy_(torch.tensor(e.detach().numpy()))
    eopt = ember.optim.SGD(enet.parameters(), lr=0.5)
    topt = torch.optim.SGD(tnet.parameters(), lr=0.5)
    for _ in range(3):
        for net, opt, lib in ((enet, eopt, ember), (tnet, topt, torch)):
            opt.zero_grad()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                loss = lib.nn.functional.mse_loss(net(lib.tensor(x)), lib.tensor(y).float())
            loss.backward()
            lib.nn.utils.clip_grad_norm_(net.parameters(), 0.1)
            opt.step()
    for e, t in zip(enet.parameters(), tnet.parameters()):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)
