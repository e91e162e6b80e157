"""``OneHotCategorical(probs=... | logits=...)``: a ``Categorical`` whose draws are one-hot
vectors of length ``K``.

>>> import ember
>>> from ember.distributions import OneHotCategorical
>>> d = OneHotCategorical(probs=ember.tensor([0.0, 1.0]))
>>> d.sample()
tensor([0., 1.])
>>> OneHotCategorical(probs=ember.tensor([0.25, 0.75])).log_prob(ember.tensor([0.0, 1.0]))
tensor(-0.2877)
"""

from __future__ import annotations

from .._tensor import Size, Tensor
from ..nn._functional.embedding import one_hot
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical"]


class OneHotCategorical(Distribution):
    """One-hot draws over the last dimension of ``probs`` or ``logits`` (the event).

    >>> import ember
    >>> OneHotCategorical(logits=ember.zeros(2, 3)).sample((4,)).shape
    ember.Size([4, 2, 3])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        param = self._categorical._param
        super().__init__(param.shape[:-1], param.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """This distribution with its parameters expanded to ``batch_shape``."""
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(Size(batch_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self) -> Tensor:
        return self._categorical._param

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> Tensor:
        probs = self._categorical.probs
        return one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self) -> Tensor:
        probs = self._categorical.probs
        return probs * (1 - probs)

    def sample(self, sample_shape=()) -> Tensor:
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, self._categorical._num_events).to(probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self.event_shape[0]
        values = one_hot(self._categorical.enumerate_support(expand=False).reshape(-1), n)
        values = values.to(self._param.dtype).view((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + tuple(self.batch_shape) + (n,)) if expand else values
