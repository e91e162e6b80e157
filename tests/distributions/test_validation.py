"""validate_args errors and reprs against torch.distributions: each entry builds or uses a
distribution through ``D`` (the distributions module) and ``T`` (ember or torch); the
messages must be torch's with ``torch`` spelled ``ember``."""

from __future__ import annotations

import pytest
import torch

import ember

ERRORS = {
    "negative scale": lambda D, T: D.Normal(0.0, -1.0),
    "value not a tensor": lambda D, T: D.Normal(0.0, 1.0).log_prob(1.0),
    "value not broadcastable": lambda D, T: D.Normal(T.zeros(2), 1.0).log_prob(T.zeros(3)),
    "event shape": lambda D, T: D.MultivariateNormal(T.zeros(2), T.eye(2)).log_prob(T.zeros(3)),
    "outside support": lambda D, T: D.Categorical(probs=T.tensor([0.5, 0.5])).log_prob(T.tensor(2)),
    "uniform low >= high": lambda D, T: D.Uniform(1.0, 0.0),
    "probs above 1": lambda D, T: D.Bernoulli(probs=1.5),
    "neither probs nor logits": lambda D, T: D.Categorical(),
    "both probs and logits": lambda D, T: D.Bernoulli(probs=0.5, logits=0.0),
    "0-d probs": lambda D, T: D.Categorical(probs=T.tensor(1.0)),
    "not positive definite": lambda D, T: D.MultivariateNormal(T.zeros(2), -T.eye(2)),
    "not lower cholesky": lambda D, T: D.MultivariateNormal(
        T.zeros(2), scale_tril=T.tensor([[1.0, 1.0], [0.0, 1.0]])
    ),
    "two matrices": lambda D, T: D.MultivariateNormal(T.zeros(2), T.eye(2), scale_tril=T.eye(2)),
    "0-d loc": lambda D, T: D.MultivariateNormal(T.tensor(0.0), T.eye(1)),
    "zero rate": lambda D, T: D.Exponential(0.0),
    "negative exponential value": lambda D, T: D.Exponential(1.0).log_prob(T.tensor(-1.0)),
    "value above uniform's high": lambda D, T: D.Uniform(0.0, 1.0).log_prob(T.tensor(2.0)),
    "nan logits": lambda D, T: D.Categorical(logits=T.tensor([0.0, float("nan")])),
    "too many reinterpreted": lambda D, T: D.Independent(D.Normal(T.zeros(2), 1.0), 2),
    "bernoulli value 0.5": lambda D, T: D.Bernoulli(probs=T.tensor([0.3])).log_prob(
        T.tensor([0.5])
    ),
    "transforms not a list": lambda D, T: D.TransformedDistribution(D.Normal(0.0, 1.0), 3),
}


def _error(lib: str, build):
    mod = ember if lib == "ember" else torch
    with pytest.raises(Exception) as info:
        build(mod.distributions, mod)
    return type(info.value), str(info.value).replace("torch", "ember")


@pytest.mark.parametrize("name", list(ERRORS))
def test_error_matches_torch(name):
    torch_type, torch_message = _error("torch", ERRORS[name])
    ember_type, ember_message = _error("ember", ERRORS[name])
    assert issubclass(ember_type, torch_type)
    assert ember_message == torch_message


def test_validation_can_be_turned_off():
    assert ember.distributions.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    ember.distributions.Distribution.set_default_validate_args(False)
    try:
        ember.distributions.Bernoulli(probs=1.5)
    finally:
        ember.distributions.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        ember.distributions.Bernoulli(probs=1.5)


REPRS = {
    "normal scalars": lambda D, T: D.Normal(0.0, 1.0),
    "normal batched": lambda D, T: D.Normal(T.zeros(2), T.ones(2)),
    "categorical logits": lambda D, T: D.Categorical(logits=T.zeros(3)),
    "categorical probs": lambda D, T: D.Categorical(probs=T.ones(2, 3)),
    "bernoulli": lambda D, T: D.Bernoulli(probs=T.tensor([0.3, 0.4])),
    "uniform": lambda D, T: D.Uniform(0.0, 1.0),
    "independent": lambda D, T: D.Independent(D.Normal(T.zeros(2), T.ones(2)), 1),
    "lognormal": lambda D, T: D.LogNormal(0.0, 1.0),
    "transformed": lambda D, T: D.TransformedDistribution(D.Normal(0.0, 1.0), [D.ExpTransform()]),
    "mvn": lambda D, T: D.MultivariateNormal(T.zeros(2), scale_tril=T.eye(2)),
    "one hot": lambda D, T: D.OneHotCategorical(probs=T.ones(3) / 3),
    "exponential": lambda D, T: D.Exponential(T.tensor([1.0])),
    "laplace": lambda D, T: D.Laplace(0.0, 2.0),
    "poisson": lambda D, T: D.Poisson(T.tensor(3.0)),
    "expanded": lambda D, T: D.Normal(0.0, 1.0).expand((2, 3)),
    "constraints": lambda D, T: (
        D.constraints.real,
        D.constraints.positive,
        D.constraints.simplex,
        D.constraints.unit_interval,
        D.constraints.integer_interval(0, 2),
        D.constraints.real_vector,
        D.constraints.boolean,
        D.constraints.lower_cholesky,
        D.constraints.positive_definite,
        D.constraints.nonnegative,
        D.constraints.one_hot,
        D.constraints.dependent,
        D.constraints.nonnegative_integer,
        D.Uniform(0.0, 1.0).support,
        D.MultivariateNormal(T.zeros(2), T.eye(2)).support,
    ),
    "transforms": lambda D, T: (
        D.ExpTransform(),
        D.ExpTransform().inv,
        D.ComposeTransform([D.TanhTransform(), D.SigmoidTransform()]),
    ),
}


@pytest.mark.parametrize("name", list(REPRS))
def test_repr_matches_torch(name):
    expected = repr(REPRS[name](torch.distributions, torch)).replace("torch", "ember")
    assert repr(REPRS[name](ember.distributions, ember)) == expected


@pytest.mark.parametrize(
    "build",
    [
        lambda D, T: D.Normal(T.zeros(2), T.ones(2)).expand((3, 2)),
        lambda D, T: D.Categorical(logits=T.zeros(2, 4)).expand((5, 2)),
        lambda D, T: D.MultivariateNormal(T.zeros(3), T.eye(3)).expand((4,)),
        lambda D, T: D.Independent(D.Normal(T.zeros(3), 1.0), 1).expand((2,)),
        lambda D, T: D.LogNormal(T.zeros(3), 1.0).expand((2, 3)),
        lambda D, T: D.OneHotCategorical(probs=T.ones(3) / 3).expand((2,)),
    ],
)
def test_expand_shapes_match_torch(build):
    t, e = build(torch.distributions, torch), build(ember.distributions, ember)
    assert (tuple(e.batch_shape), tuple(e.event_shape)) == (
        tuple(t.batch_shape),
        tuple(t.event_shape),
    )
    assert tuple(e.sample((2,)).shape) == tuple(t.sample((2,)).shape)
    assert type(e).__name__ == type(t).__name__
