"""Sampling (ember/functions/sampling.py): distributions, seeding, devices, errors."""

import math

import numpy as np
import pytest

import ember

N = 20000
FLOATS = [ember.float32, ember.float64, ember.float16, ember.bfloat16]


def _stats(t):
    a = t.float().cpu().numpy().astype(np.float64)
    return a.mean(), a.std()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "fill, args, mean, std",
    [
        ("uniform_", (-2.0, 4.0), 1.0, 6 / math.sqrt(12)),
        ("normal_", (3.0, 0.5), 3.0, 0.5),
        ("exponential_", (2.0,), 0.5, 0.5),
        ("log_normal_", (0.0, 0.25), math.exp(0.25**2 / 2), None),
        ("geometric_", (0.25,), 4.0, math.sqrt(0.75) / 0.25),
        ("bernoulli_", (0.3,), 0.3, math.sqrt(0.21)),
    ],
)
def test_fills_follow_their_distributions(device, dtype, fill, args, mean, std):
    t = ember.empty(N, dtype=dtype, device=device)
    out = getattr(t, fill)(*args)
    assert out is t and t.dtype == dtype and t.device.type == device and not t.requires_grad
    m, s = _stats(t)
    spread = std if std is not None else 0.3
    assert abs(m - mean) < 5 * spread / math.sqrt(N) + 0.01 * abs(mean), (m, mean)
    if std is not None:
        assert abs(s - std) < 0.05 * std + 0.01, (s, std)


def test_uniform_stays_in_range_and_cauchy_median(device):
    u = ember.empty(N, dtype=ember.float64, device=device).uniform_(2, 3)
    assert bool((u >= 2).all()) and bool((u < 3).all())
    c = ember.empty(N, dtype=ember.float64, device=device).cauchy_(1.0, 2.0)
    assert abs(float(np.median(c.cpu().numpy())) - 1.0) < 0.1
    g = ember.empty(N, device=device).geometric_(0.5)
    assert float(g.min()) >= 1 and bool((g == g.round()).all())


@pytest.mark.parametrize(
    "dtype, args, low, high",
    [
        (ember.int64, (3, 8), 3, 7),
        (ember.float32, (5,), 0, 4),
        (ember.uint8, (), 0, 255),
        (ember.bool, (), 0, 1),
        (ember.int32, (-4, 0), -4, -1),
    ],
)
def test_random_(device, dtype, args, low, high):
    t = ember.zeros(4000, dtype=dtype, device=device).random_(*args)
    values = t.to(ember.int64).cpu().numpy()
    assert t.dtype == dtype and values.min() == low and values.max() == high


def test_seeds_and_generators_reproduce(device):
    def draw(**kw):
        return ember.empty(5, device=device).normal_(**kw).cpu().tolist()

    ember.manual_seed(7)
    a = draw()
    ember.manual_seed(7)
    assert draw() == a
    g1 = ember.Generator(device=device).manual_seed(3)
    g2 = ember.Generator(device=device).manual_seed(3)
    ember.manual_seed(8)
    first = draw(generator=g1)
    ember.manual_seed(9)
    assert draw(generator=g2) == first  # the global seed does not matter


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_frequencies(device, replacement):
    w = ember.tensor([[1.0, 0.0, 3.0, 6.0], [5.0, 5.0, 0.0, 0.0]], device=device)
    k = 1 if not replacement else 4000
    rows = []
    for _ in range(1 if replacement else 3000):
        rows.append(ember.multinomial(w, k, replacement=replacement).cpu().numpy())
    draws = np.concatenate(rows, axis=1)
    assert draws.dtype == np.int64
    freq0 = np.bincount(draws[0], minlength=4) / draws.shape[1]
    freq1 = np.bincount(draws[1], minlength=4) / draws.shape[1]
    np.testing.assert_allclose(freq0, [0.1, 0.0, 0.3, 0.6], atol=0.035)
    np.testing.assert_allclose(freq1, [0.5, 0.5, 0.0, 0.0], atol=0.035)


def test_multinomial_without_replacement_is_distinct_and_ordered_by_weight(device):
    w = ember.tensor([1.0, 2.0, 0.0, 4.0, 8.0], device=device)
    for _ in range(50):
        s = ember.multinomial(w, 4).cpu().tolist()
        assert sorted(s) == [0, 1, 3, 4]
    firsts = [w.multinomial(1).item() for _ in range(3000)]
    assert abs(firsts.count(4) / 3000 - 8 / 15) < 0.04


def test_bernoulli_and_normal_functions(device):
    p = ember.tensor([0.0, 1.0, 0.0, 1.0], device=device)
    assert ember.bernoulli(p).cpu().tolist() == [0.0, 1.0, 0.0, 1.0]
    assert p.bernoulli().device.type == device
    b = ember.bernoulli(ember.full((N,), 0.25, device=device))
    assert abs(b.mean().item() - 0.25) < 0.02
    m = ember.normal(ember.full((N,), 2.0, device=device), 3.0)
    assert abs(m.mean().item() - 2.0) < 0.1 and abs(m.std().item() - 3.0) < 0.1
    s = ember.normal(1.0, ember.full((2, N), 0.5, device=device))
    assert tuple(s.shape) == (2, N) and abs(s.std().item() - 0.5) < 0.02
    f = ember.normal(-1.0, 2.0, size=(N,), device=device, dtype=ember.float64)
    assert f.dtype == ember.float64 and abs(f.mean().item() + 1) < 0.1
    lam = ember.full((N,), 3.0, device=device)
    po = ember.poisson(lam)
    assert po.device.type == device and abs(po.mean().item() - 3.0) < 0.1
    assert bool((po == po.round()).all())


def test_fills_refuse_leaves_that_require_grad():
    w = ember.zeros(3, requires_grad=True)
    with pytest.raises(ember.AutogradError, match="normal_: a leaf tensor that requires grad"):
        w.normal_()
    with ember.no_grad():
        w.uniform_(0, 1)
    assert w.requires_grad and bool((w >= 0).all())


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: ember.zeros(3, dtype=ember.int64).normal_(),
            ember.DTypeError,
            "normal_: expected a floating tensor, got ember.int64",
        ),
        (lambda: ember.zeros(3).uniform_(2, 1), ember.ShapeError, "uniform_: expects from <= to"),
        (
            lambda: ember.zeros(3).bernoulli_(1.5),
            ember.ShapeError,
            r"bernoulli_: expects 0 <= p <= 1, got p=1.5",
        ),
        (
            lambda: ember.zeros(3).geometric_(0.0),
            ember.ShapeError,
            r"geometric_: expects p in \(0, 1\)",
        ),
        (
            lambda: ember.multinomial(ember.tensor([1.0, -1.0]), 1),
            ember.ShapeError,
            "multinomial: probability tensor contains either inf, nan or element < 0",
        ),
        (
            lambda: ember.multinomial(ember.tensor([1.0, 0.0]), 2),
            ember.ShapeError,
            "multinomial: cannot sample 2 > prob_dist.size",
        ),
        (
            lambda: ember.multinomial(ember.zeros(2), 1, True),
            ember.ShapeError,
            "multinomial: invalid multinomial distribution",
        ),
        (
            lambda: ember.multinomial(ember.ones(2, 2, 2), 1),
            ember.ShapeError,
            r"multinomial: prob_dist must be 1 or 2 dim, got shape \(2, 2, 2\)",
        ),
        (
            lambda: ember.bernoulli(ember.tensor([2.0])),
            ember.ShapeError,
            r"bernoulli: all probabilities must be in \[0, 1\]",
        ),
        (
            lambda: ember.normal(0.0, -1.0, size=(2,)),
            ember.ShapeError,
            "normal: expects std >= 0.0",
        ),
    ],
)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
