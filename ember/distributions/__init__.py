"""Probability distributions with PyTorch's ``torch.distributions`` interface, written in
ember ops: ``log_prob``, ``entropy``, ``cdf`` and ``rsample`` differentiate (to any order)
and trace into ``ember.compile`` graphs, whose random ops draw anew on every run.

>>> import ember
>>> from ember.distributions import Categorical, Normal, kl_divergence
>>> logits = ember.tensor([0.0, 1.0], requires_grad=True)
>>> Categorical(logits=logits).log_prob(ember.tensor(1)).backward()
>>> logits.grad
tensor([-0.2689,  0.2689])
>>> kl_divergence(Normal(0.0, 1.0), Normal(0.0, 2.0))
tensor(0.3181)
"""

from . import constraints, transforms
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exponential import Exponential
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .transforms import (
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    SigmoidTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .uniform import Uniform

__all__ = [
    "AffineTransform",
    "Bernoulli",
    "Categorical",
    "ComposeTransform",
    "Distribution",
    "ExpTransform",
    "Exponential",
    "Independent",
    "Laplace",
    "LogNormal",
    "MultivariateNormal",
    "Normal",
    "OneHotCategorical",
    "Poisson",
    "SigmoidTransform",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "constraints",
    "identity_transform",
    "kl_divergence",
    "register_kl",
    "transforms",
]
