"""``Laplace(loc, scale)``: the double exponential, density ``exp(-|x - loc| / scale) /
(2 scale)``.

>>> import ember
>>> from ember.distributions import Laplace
>>> Laplace(0.0, 1.0).log_prob(ember.tensor(1.0))
tensor(-1.6931)
"""

from __future__ import annotations

from .. import dtypes as _dt
from .._tensor import Tensor
from .loc_scale import LocScale
from .utils import standard_uniform

__all__ = ["Laplace"]


class Laplace(LocScale):
    """The Laplace distribution, reparametrized by inverting its cdf at a uniform draw.

    >>> Laplace(0.0, 2.0).variance
    tensor(8.)
    """

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (2**0.5) * self.scale

    def rsample(self, sample_shape=()) -> Tensor:
        eps = _dt.finfo(self.loc.dtype).eps
        # uniform on [eps - 1, 1), as PyTorch draws it: log1p(-|u|) stays finite
        u = standard_uniform(self._extended_shape(sample_shape), self.loc) * (2 - eps) + (eps - 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * (-z.abs() / self.scale).expm1()

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()
