"""``Exponential(rate)``: waiting times with density ``rate * exp(-rate * x)``.

>>> import ember
>>> from ember.distributions import Exponential
>>> d = Exponential(ember.tensor([2.0]))
>>> d.mean, d.log_prob(ember.tensor([1.0]))
(tensor([0.5000]), tensor([-1.3069]))
"""

from __future__ import annotations

from numbers import Number

from .._tensor import Size, Tensor
from ..functions.creation import zeros_like
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, standard_uniform

__all__ = ["Exponential"]


class Exponential(Distribution):
    """The exponential distribution, reparametrized as ``-log(1 - u) / rate``.

    >>> Exponential(1.0).entropy()
    tensor(1.)
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """This distribution with its parameters expanded to ``batch_shape``."""
        return self._expand_params(Exponential, batch_shape, ("rate",), _instance)

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()) -> Tensor:
        u = standard_uniform(self._extended_shape(sample_shape), self.rate)
        return -(-u).log1p() / self.rate

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        return -(-value).log1p() / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()
