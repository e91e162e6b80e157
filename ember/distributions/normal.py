"""``Normal(loc, scale)``: the Gaussian, reparametrized as ``loc + scale * eps``.

>>> import ember
>>> from ember.distributions import Normal
>>> d = Normal(0.0, 1.0)
>>> d
Normal(loc: 0.0, scale: 1.0)
>>> d.log_prob(ember.tensor(0.0))
tensor(-0.9189)
>>> d.cdf(ember.tensor(0.0))
tensor(0.5000)
"""

from __future__ import annotations

import math

from .._tensor import Tensor
from ..functions.math import erf
from ..functions.special import erfinv
from .loc_scale import LocScale
from .utils import standard_normal

__all__ = ["Normal"]


class Normal(LocScale):
    """The normal distribution with mean ``loc`` and standard deviation ``scale``.

    >>> import ember
    >>> loc = ember.tensor([0.0, 1.0], requires_grad=True)
    >>> Normal(loc, 1.0).rsample().sum().backward()
    >>> loc.grad
    tensor([1., 1.])
    """

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def rsample(self, sample_shape=()) -> Tensor:
        eps = standard_normal(self._extended_shape(sample_shape), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        return (
            -((value - self.loc) ** 2) / (2 * var)
            - self.scale.log()
            - math.log(math.sqrt(2 * math.pi))
        )

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
