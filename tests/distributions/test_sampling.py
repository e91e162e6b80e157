"""Draws: shapes and dtypes against torch's for several sample shapes, statistics of 20k
draws (the sample mean within 5 standard errors of torch's mean, the sample variance within
5 standard errors of torch's variance: ember's generator is not torch's), reparametrized
gradients on the same noise as torch's, and compiled steps that draw anew on every call."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.distributions import Categorical, Normal

from .cases import CASES, CASES_BY_ID

SAMPLE_SHAPES = [(), (5,), (2, 3)]
N = 20_000
SIGMAS = 5.0


@pytest.mark.parametrize("sample_shape", SAMPLE_SHAPES, ids=str)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_sample_shape_and_dtype_match_torch(case, sample_shape):
    e, _ = case.make("ember")
    t, _ = case.make("torch")
    assert e.has_rsample == t.has_rsample
    methods = ["sample"] + (["rsample"] if t.has_rsample else [])
    for method in methods:
        got = getattr(e, method)(sample_shape)
        expected = getattr(t, method)(sample_shape)
        assert tuple(got.shape) == tuple(expected.shape), method
        assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1], method
        assert got.requires_grad == expected.requires_grad, method


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_sample_statistics(case):
    """Mean and variance of 20k draws against torch's closed forms; Categorical (NaN mean)
    by its frequencies; a distribution without a closed-form mean against 20k torch draws."""
    t, _ = case.make("torch", requires_grad=False)
    e, _ = case.make("ember", requires_grad=False)
    try:
        mean, var = t.mean.numpy(), t.variance.numpy()
    except NotImplementedError:  # no closed form: two samples, the difference within 5 SE
        a, b = e.sample((N,)).numpy(), t.sample((N,)).numpy()
        se = np.sqrt((a.var(0) + b.var(0)) / N)
        assert np.all(np.abs(a.mean(0) - b.mean(0)) <= SIGMAS * se)
        return
    if np.isnan(mean).any():  # Categorical: check the frequencies instead
        draws = e.sample((N,)).numpy()
        freq = np.stack([(draws == k).mean(0) for k in range(t.probs.shape[-1])], -1)
        p = t.probs.numpy()
        assert np.all(np.abs(freq - p) <= SIGMAS * np.sqrt(p * (1 - p) / N))
        return
    draws = e.sample((N,)).numpy().astype(np.float64)
    se_mean = np.sqrt(var / N)
    assert np.all(np.abs(draws.mean(0) - mean) <= SIGMAS * se_mean), (draws.mean(0), mean)
    centered = draws - mean
    m4 = (centered**4).mean(0)
    se_var = np.sqrt(np.maximum(m4 - var**2, 1e-12) / N)
    assert np.all(np.abs((centered**2).mean(0) - var) <= SIGMAS * se_var), (
        (centered**2).mean(0),
        var,
    )


# cases whose rsample is a function of standard normal noise: ember and torch get the same
# noise (torch's ``_standard_normal`` and ember's ``standard_normal`` replaced)
NORMAL_NOISE = [
    "Normal",
    "Normal-broadcast",
    "MultivariateNormal-scale_tril",
    "MultivariateNormal-covariance",
    "MultivariateNormal-precision",
    "Independent-Normal",
    "LogNormal",
    "Transformed-tanh-affine",
    "Transformed-sigmoid-exp",
]


@pytest.mark.parametrize("case_id", NORMAL_NOISE)
def test_rsample_and_its_gradient_match_torch_on_the_same_noise(case_id, monkeypatch):
    case = CASES_BY_ID[case_id]
    reference = case.make("torch")[0]
    shape = (4,) + tuple(reference.batch_shape + reference.event_shape)
    eps = np.random.default_rng(3).normal(size=shape)
    monkeypatch.setattr(
        "torch.distributions.normal._standard_normal", lambda s, dtype, device: torch.tensor(eps)
    )
    monkeypatch.setattr(
        "torch.distributions.multivariate_normal._standard_normal",
        lambda s, dtype, device: torch.tensor(eps),
    )
    for module in ("normal", "multivariate_normal"):
        monkeypatch.setattr(
            f"ember.distributions.{module}.standard_normal", lambda s, like: ember.tensor(eps)
        )
    weights = np.random.default_rng(4).normal(size=shape)
    results = {}
    for lib, mod in (("torch", torch), ("ember", ember)):
        dist, leaves = case.make(lib)
        x = dist.rsample((4,))
        names = list(case.grad)
        grads = mod.autograd.grad((x * mod.tensor(weights)).sum(), [leaves[k] for k in names])
        results[lib] = (x.detach().numpy(), [g.numpy() for g in grads])
    np.testing.assert_allclose(results["ember"][0], results["torch"][0], rtol=1e-10, atol=1e-12)
    for name, g, h in zip(case.grad, results["ember"][1], results["torch"][1]):
        np.testing.assert_allclose(g, h, rtol=1e-9, atol=1e-10, err_msg=f"d sample / d {name}")


@pytest.mark.parametrize("case_id", ["Uniform", "Exponential", "Laplace"])
def test_rsample_gradient_is_the_implicit_reparametrization(case_id):
    """For a univariate x = F^-1(u; theta): dx/dtheta = -(dF/dtheta)(x) / p(x), with F and p
    from torch at ember's draws."""
    case = CASES_BY_ID[case_id]
    e, e_leaves = case.make("ember")
    x = e.rsample((6,))
    names = list(case.grad)
    got = ember.autograd.grad(x.sum(), [e_leaves[k] for k in names])
    t, t_leaves = case.make("torch")
    xt = torch.tensor(x.detach().numpy())
    # per draw: -dF/dtheta / p; the parameters broadcast over the 6 draws: sum per parameter
    density = t.log_prob(xt).exp().detach()
    for name, g, leaf in zip(names, got, (t_leaves[k] for k in names)):
        per_draw = []
        for i in range(6):
            (gi,) = torch.autograd.grad(t.cdf(xt)[i].sum(), [leaf], retain_graph=True)
            per_draw.append(-gi / density[i])
        expected = torch.stack(per_draw).sum(0).numpy()
        np.testing.assert_allclose(g.numpy(), expected, rtol=1e-8, atol=1e-10, err_msg=name)


def test_compiled_policy_step_samples_anew_on_every_call():
    """An ember.compile'd step draws actions from a Categorical and a Normal: the random ops
    are graph nodes with side effects, so two calls on the same input differ, while the
    log-probabilities of the drawn actions still come out of the same graph."""
    _ = ember.manual_seed(0)
    w = ember.tensor(np.random.default_rng(0).normal(size=(4, 3)), requires_grad=True)

    def step(states):
        logits = states @ w
        dist = Categorical(logits=logits)
        actions = dist.sample((64,))
        noise = Normal(logits, 1.0).rsample()
        return actions, dist.log_prob(actions), noise

    compiled = ember.compile(step)
    states = ember.ones(2, 4)
    a1, lp1, n1 = compiled(states)
    a2, lp2, n2 = compiled(states)
    assert a1.shape == (64, 2) and a1.dtype == ember.int64
    assert not np.array_equal(a1.numpy(), a2.numpy())
    assert not np.array_equal(n1.numpy(), n2.numpy())
    eager = Categorical(logits=states @ w)
    for a, lp in ((a1, lp1), (a2, lp2)):
        np.testing.assert_allclose(lp.numpy(), eager.log_prob(a).detach().numpy(), rtol=1e-6)


def test_compiled_reinforce_update_matches_eager():
    """A REINFORCE loss on fixed actions and its gradient, compiled, give eager's values."""
    rng = np.random.default_rng(1)
    w0, states = rng.normal(size=(4, 3)), ember.tensor(rng.normal(size=(5, 4)))
    actions, returns = ember.tensor([0, 2, 1, 1, 0]), ember.tensor(rng.normal(size=5))

    def loss_and_grad(w):
        dist = Categorical(logits=states @ w)
        loss = -(dist.log_prob(actions) * returns).sum() - 0.01 * dist.entropy().mean()
        (grad,) = ember.autograd.grad(loss, [w])
        return loss, grad

    eager = loss_and_grad(ember.tensor(w0, requires_grad=True))
    got = ember.compile(loss_and_grad)(ember.tensor(w0, requires_grad=True))
    for g, e in zip(got, eager):
        np.testing.assert_allclose(g.detach().numpy(), e.detach().numpy(), rtol=1e-10)
