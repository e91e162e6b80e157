"""``Bernoulli(probs=... | logits=...)``: 1 with probability ``probs``, else 0.

>>> import ember
>>> from ember.distributions import Bernoulli
>>> d = Bernoulli(probs=ember.tensor([0.2, 0.9]))
>>> d.log_prob(ember.tensor([1.0, 0.0]))
tensor([-1.6094, -2.3026])
>>> d.sample((3,)).shape
ember.Size([3, 2])
"""

from __future__ import annotations

import math
from numbers import Number

from .._config import no_grad
from .._tensor import Size, Tensor
from ..functions.creation import arange
from ..functions.elementwise import where
from ..functions.sampling import bernoulli
from ..nn._functional.loss_classification import binary_cross_entropy_with_logits
from . import constraints
from .distribution import Distribution
from .utils import (
    broadcast_all,
    check_probs_or_logits,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["Bernoulli"]


class Bernoulli(Distribution):
    """Draws of 0 or 1 (in the parameter's dtype), 1 with probability ``probs`` (or
    ``sigmoid(logits)``).

    >>> import ember
    >>> Bernoulli(logits=ember.tensor([0.0])).entropy()
    tensor([0.6931])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        check_probs_or_logits(probs, logits)
        param = probs if probs is not None else logits
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if isinstance(param, Number) else self._param.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """This distribution with its parameters expanded to ``batch_shape``."""
        new = self._expand_params(Bernoulli, batch_shape, ("probs", "logits"), _instance)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.shape

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()) -> Tensor:
        with no_grad():
            return bernoulli(self.probs.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
