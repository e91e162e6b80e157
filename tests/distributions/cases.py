"""The table the distribution tests are generated from: each case builds one distribution
the same way from ``ember.distributions`` or ``torch.distributions`` (``build(D, p)`` with
``D`` the module and ``p`` the parameters as that library's float64 tensors), with values to
score and probabilities for ``icdf``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

import ember

_rng = np.random.default_rng(1234)


def _pos(*shape):
    return _rng.uniform(0.5, 2.0, shape)


def _real(*shape):
    return _rng.normal(size=shape)


def _simplex(*shape):
    w = _rng.uniform(0.1, 1.0, shape)
    return w / w.sum(-1, keepdims=True)


def _tril(n, batch=()):
    a = _rng.normal(size=batch + (n, n)) * 0.3
    return np.tril(a, -1) + np.eye(n) * _rng.uniform(0.8, 1.5, batch + (n,))[..., None]


def _spd(n):
    a = _rng.normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


@dataclass
class Case:
    """One distribution: ``build(D, p)``, float64 parameters (differentiable ones
    ``grad``), values for ``log_prob``/``cdf`` and probabilities for ``icdf``."""

    id: str
    build: Callable
    gen: Callable
    value: np.ndarray
    grad: tuple = ()
    int_value: bool = False
    quantiles: np.ndarray = field(default_factory=lambda: _rng.uniform(0.05, 0.95, (4, 3)))

    def __post_init__(self) -> None:
        self.params = self.gen()  # the case's parameters
        self.alt = self.gen()  # a second draw: the q of KL(p || q) for a pair of one case

    def make(self, lib: str, requires_grad: bool = True, alt: bool = False):
        """(distribution, {name: leaf tensor}) of ``lib`` ('ember' or 'torch')."""
        mod, D = (ember, ember.distributions) if lib == "ember" else (torch, torch.distributions)
        params = self.alt if alt else self.params
        leaves = {
            k: mod.tensor(v, dtype=mod.float64, requires_grad=requires_grad and k in self.grad)
            for k, v in params.items()
        }
        return self.build(D, leaves), leaves

    def tensor(self, lib: str, array):
        mod = ember if lib == "ember" else torch
        return mod.tensor(array, dtype=mod.int64 if self.int_value else mod.float64)


def _onehot(idx, n):
    return np.eye(n)[idx]


CASES = [
    Case(
        "Normal",
        lambda D, p: D.Normal(p["loc"], p["scale"]),
        lambda: {"loc": _real(3), "scale": _pos(3)},
        _real(4, 3) * 2,
        grad=("loc", "scale"),
    ),
    Case(
        "Normal-broadcast",
        lambda D, p: D.Normal(p["loc"], p["scale"]),
        lambda: {"loc": _real(2, 1), "scale": _pos(3)},
        _real(2, 3),
        grad=("loc", "scale"),
        quantiles=_rng.uniform(0.05, 0.95, (2, 3)),
    ),
    Case(
        "Categorical-probs",
        lambda D, p: D.Categorical(probs=p["probs"]),
        lambda: {"probs": _simplex(2, 4)},
        _rng.integers(0, 4, (3, 2)),
        grad=("probs",),
        int_value=True,
    ),
    Case(
        "Categorical-logits",
        lambda D, p: D.Categorical(logits=p["logits"]),
        lambda: {"logits": _real(3, 5)},
        _rng.integers(0, 5, (2, 3)),
        grad=("logits",),
        int_value=True,
    ),
    Case(
        "Bernoulli-probs",
        lambda D, p: D.Bernoulli(probs=p["probs"]),
        lambda: {"probs": _rng.uniform(0.05, 0.95, 3)},
        _rng.integers(0, 2, (4, 3)).astype(float),
        grad=("probs",),
    ),
    Case(
        "Bernoulli-logits",
        lambda D, p: D.Bernoulli(logits=p["logits"]),
        lambda: {"logits": _real(3)},
        _rng.integers(0, 2, (4, 3)).astype(float),
        grad=("logits",),
    ),
    Case(
        "Uniform",
        lambda D, p: D.Uniform(p["low"], p["low"] + p["width"]),
        lambda: {"low": _real(3), "width": _pos(3)},
        None,
        grad=("low", "width"),
    ),
    Case(
        "Exponential",
        lambda D, p: D.Exponential(p["rate"]),
        lambda: {"rate": _pos(3)},
        _pos(4, 3),
        grad=("rate",),
    ),
    Case(
        "Laplace",
        lambda D, p: D.Laplace(p["loc"], p["scale"]),
        lambda: {"loc": _real(3), "scale": _pos(3)},
        _real(4, 3) * 2,
        grad=("loc", "scale"),
    ),
    Case(
        "Poisson",
        lambda D, p: D.Poisson(p["rate"]),
        lambda: {"rate": _pos(3) * 3},
        _rng.integers(0, 8, (4, 3)).astype(float),
        grad=("rate",),
    ),
    Case(
        "MultivariateNormal-scale_tril",
        lambda D, p: D.MultivariateNormal(p["loc"], scale_tril=p["tril"]),
        lambda: {"loc": _real(2, 3), "tril": _tril(3)},
        _real(4, 2, 3),
        grad=("loc", "tril"),
    ),
    Case(
        "MultivariateNormal-covariance",
        lambda D, p: D.MultivariateNormal(p["loc"], covariance_matrix=p["cov"]),
        lambda: {"loc": _real(3), "cov": _spd(3)},
        _real(4, 3),
        grad=("loc", "cov"),
    ),
    Case(
        "MultivariateNormal-precision",
        lambda D, p: D.MultivariateNormal(p["loc"], precision_matrix=p["prec"]),
        lambda: {"loc": _real(3), "prec": _spd(3)},
        _real(4, 3),
        grad=("loc", "prec"),
    ),
    Case(
        "OneHotCategorical",
        lambda D, p: D.OneHotCategorical(probs=p["probs"]),
        lambda: {"probs": _simplex(2, 3)},
        _onehot(_rng.integers(0, 3, (4, 2)), 3),
        grad=("probs",),
    ),
    Case(
        "Independent-Normal",
        lambda D, p: D.Independent(D.Normal(p["loc"], p["scale"]), 1),
        lambda: {"loc": _real(2, 3), "scale": _pos(2, 3)},
        _real(4, 2, 3),
        grad=("loc", "scale"),
    ),
    Case(
        "LogNormal",
        lambda D, p: D.LogNormal(p["loc"], p["scale"]),
        lambda: {"loc": _real(3) * 0.5, "scale": _pos(3) * 0.5},
        _pos(4, 3),
        grad=("loc", "scale"),
    ),
    Case(
        "Transformed-tanh-affine",  # the SAC policy: tanh of a Gaussian, scaled
        lambda D, p: D.TransformedDistribution(
            D.Normal(p["loc"], p["scale"]),
            [D.TanhTransform(), D.AffineTransform(p["shift"], 2.0)],
        ),
        lambda: {"loc": _real(3), "scale": _pos(3), "shift": _real(3)},
        None,
        grad=("loc", "scale", "shift"),
    ),
    Case(
        "Transformed-sigmoid-exp",
        lambda D, p: D.TransformedDistribution(
            D.Normal(p["loc"], p["scale"]), [D.ExpTransform(), D.SigmoidTransform()]
        ),
        lambda: {"loc": _real(3) * 0.3, "scale": _pos(3) * 0.5},
        _rng.uniform(0.55, 0.95, (4, 3)),
        grad=("loc", "scale"),
    ),
]

# the values a case scores when it has none of its own: inside its support
CASES_BY_ID = {c.id: c for c in CASES}
CASES_BY_ID["Uniform"].value = CASES_BY_ID["Uniform"].params["low"] + CASES_BY_ID["Uniform"].params[
    "width"
] * _rng.uniform(0.05, 0.95, (4, 3))
CASES_BY_ID["Transformed-tanh-affine"].value = CASES_BY_ID["Transformed-tanh-affine"].params[
    "shift"
] + 2 * _rng.uniform(-0.9, 0.9, (4, 3))

# KL(p || q) pairs: (p case, q case); a case paired with itself takes its second draw for q
KL_PAIRS = [
    ("Normal", "Normal"),
    ("Categorical-probs", "Categorical-probs"),
    ("Categorical-logits", "Categorical-logits"),
    ("Bernoulli-probs", "Bernoulli-logits"),
    ("Bernoulli-logits", "Bernoulli-logits"),
    ("Exponential", "Exponential"),
    ("Laplace", "Laplace"),
    ("Poisson", "Poisson"),
    ("MultivariateNormal-scale_tril", "MultivariateNormal-covariance"),
    ("OneHotCategorical", "OneHotCategorical"),
    ("Independent-Normal", "Independent-Normal"),
    ("LogNormal", "LogNormal"),
    ("Uniform", "Uniform"),
    ("Uniform", "Normal"),
    ("Exponential", "Normal"),
    ("Laplace", "Normal"),
    ("Normal", "Laplace"),
    ("Normal", "Uniform"),
    ("Bernoulli-probs", "Poisson"),
]
