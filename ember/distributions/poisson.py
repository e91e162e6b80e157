"""``Poisson(rate)``: counts with mean ``rate``.

>>> import ember
>>> from ember.distributions import Poisson
>>> Poisson(ember.tensor([2.0])).log_prob(ember.tensor([3.0]))
tensor([-1.7123])
"""

from __future__ import annotations

from numbers import Number

from .._config import no_grad
from .._tensor import Size, Tensor
from ..functions.sampling import poisson
from ..functions.special import lgamma, xlogy
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(Distribution):
    """The Poisson distribution (samples carry no gradient: it has no ``rsample``).

    >>> Poisson(4.0).sample((5,)).shape
    ember.Size([5])
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """This distribution with its parameters expanded to ``batch_shape``."""
        return self._expand_params(Poisson, batch_shape, ("rate",), _instance)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape=()) -> Tensor:
        with no_grad():
            return poisson(self.rate.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - lgamma(value + 1)
