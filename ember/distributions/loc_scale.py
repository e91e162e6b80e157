"""``LocScale``: what a distribution of a location and a scale shares (Normal, Laplace): the
parameters' constraints and broadcasting, ``expand``, and ``loc`` as mean and mode.

>>> from ember.distributions import Laplace, Normal
>>> issubclass(Normal, LocScale) and issubclass(Laplace, LocScale)
True
>>> Normal(0.0, 2.0).expand([3]).loc
tensor([0., 0., 0.])
"""

from __future__ import annotations

from numbers import Number

from .._tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LocScale"]


class LocScale(Distribution):
    """A real distribution of ``loc`` and a positive ``scale``, reparametrizable."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, Number) and isinstance(scale, Number)
        super().__init__(Size() if scalar else self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """This distribution with its parameters expanded to ``batch_shape``."""
        return self._expand_params(type(self), batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc
