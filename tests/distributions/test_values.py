"""Values and gradients of every case in ``cases.CASES`` against torch.distributions on the
same float64 parameters: log_prob, entropy, mean, mode, variance, stddev, cdf, icdf, and
KL divergences of ``cases.KL_PAIRS`` (1e-10 relative; MultivariateNormal's factorizations
1e-9). A method torch does not implement for a case must raise NotImplementedError here too."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from .cases import CASES, CASES_BY_ID, KL_PAIRS

METHODS = ("log_prob", "entropy", "mean", "mode", "variance", "stddev", "cdf", "icdf")
_wrng = np.random.default_rng(7)


def _tol(case_id: str) -> float:
    return 1e-9 if "Multivariate" in case_id else 1e-10


def _evaluate(case, lib: str, method: str):
    dist, leaves = case.make(lib)
    if method in ("log_prob", "cdf"):
        out = getattr(dist, method)(case.tensor(lib, case.value))
    elif method == "icdf":
        out = dist.icdf(case.tensor(lib, case.quantiles).to(leaves[next(iter(leaves))].dtype))
    elif method == "entropy":
        out = dist.entropy()
    else:
        out = getattr(dist, method)
    return out, leaves


def _numpy(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _close(a, b, tol, what):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, f"{what}: shapes {a.shape} vs torch {b.shape}"
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True, err_msg=what)


def _grads(out, leaves, weights):
    """Gradients of sum(out * weights) with respect to the differentiable leaves (zeros where
    the output does not depend on one)."""
    names = [k for k, v in leaves.items() if v.requires_grad]
    if not names or not out.requires_grad:
        return {}
    mod = torch if isinstance(out, torch.Tensor) else __import__("ember")
    total = (out * mod.tensor(weights, dtype=out.dtype)).sum()
    gs = mod.autograd.grad(total, [leaves[k] for k in names], allow_unused=True)
    return {k: (np.zeros(leaves[k].shape) if g is None else _numpy(g)) for k, g in zip(names, gs)}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_method_matches_torch(case, method):
    try:
        expected, t_leaves = _evaluate(case, "torch", method)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            _evaluate(case, "ember", method)
        return
    got, e_leaves = _evaluate(case, "ember", method)
    tol = _tol(case.id)
    what = f"{case.id}.{method}"
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1], what
    _close(_numpy(got), _numpy(expected), tol, what)
    weights = _wrng.normal(size=tuple(expected.shape))
    expected_g = _grads(expected, t_leaves, weights)
    got_g = _grads(got, e_leaves, weights)
    assert got_g.keys() == expected_g.keys(), f"{what}: gradient for {got_g.keys()}"
    for k in expected_g:
        _close(got_g[k], expected_g[k], tol * 10, f"{what}: d/d{k}")


def _kl(lib: str, p_id: str, q_id: str):
    import ember

    kl = ember.distributions.kl_divergence if lib == "ember" else torch.distributions.kl_divergence
    p, p_leaves = CASES_BY_ID[p_id].make(lib)
    q, q_leaves = CASES_BY_ID[q_id].make(lib, alt=p_id == q_id)
    leaves = {f"p.{k}": v for k, v in p_leaves.items()} | {f"q.{k}": v for k, v in q_leaves.items()}
    return kl(p, q), leaves


@pytest.mark.parametrize(("p_id", "q_id"), KL_PAIRS, ids=lambda x: x)
def test_kl_divergence_matches_torch(p_id, q_id):
    expected, t_leaves = _kl("torch", p_id, q_id)
    got, e_leaves = _kl("ember", p_id, q_id)
    tol = _tol(p_id + q_id)
    what = f"KL({p_id} || {q_id})"
    _close(_numpy(got), _numpy(expected), tol, what)
    weights = _wrng.normal(size=tuple(expected.shape))
    expected_g, got_g = _grads(expected, t_leaves, weights), _grads(got, e_leaves, weights)
    assert got_g.keys() == expected_g.keys(), what
    for k in expected_g:
        _close(got_g[k], expected_g[k], tol * 10, f"{what}: d/d{k}")


def test_kl_of_unregistered_pair_is_refused_as_torch():
    import ember

    def message(lib):
        mod = ember if lib == "ember" else torch
        D = mod.distributions
        with pytest.raises(NotImplementedError) as info:
            D.kl_divergence(D.Categorical(logits=mod.zeros(2)), D.Normal(0.0, 1.0))
        return str(info.value)

    assert message("ember") == message("torch")
