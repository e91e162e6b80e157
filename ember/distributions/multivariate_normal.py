"""``MultivariateNormal(loc, covariance_matrix= | precision_matrix= | scale_tril=)``: the
Gaussian over vectors, kept as its lower Cholesky factor ``L`` (covariance ``L @ L.T``).

>>> import ember
>>> from ember.distributions import MultivariateNormal
>>> d = MultivariateNormal(ember.zeros(2), covariance_matrix=ember.eye(2))
>>> d
MultivariateNormal(loc: ember.Size([2]), covariance_matrix: ember.Size([2, 2]))
>>> d.log_prob(ember.zeros(2))
tensor(-1.8379)
"""

from __future__ import annotations

import math

from .._shape import broadcast_shapes
from .._tensor import Size, Tensor
from ..functions.creation import eye
from ..linalg import cholesky, inv, solve
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, standard_normal

__all__ = ["MultivariateNormal"]


def batch_mv(bmat: Tensor, bvec: Tensor) -> Tensor:
    """Matrix-vector products over broadcast batch dimensions."""
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def solve_lower(tril: Tensor, rhs: Tensor) -> Tensor:
    """``tril^-1 @ rhs`` for matrices ``rhs``, batch dimensions broadcast; only the lower
    triangle of ``tril`` is read (so its upper triangle gets no gradient), as PyTorch's
    ``solve_triangular``."""
    tril = tril.tril()
    shape = broadcast_shapes("MultivariateNormal", tuple(tril.shape[:-2]), tuple(rhs.shape[:-2]))
    return solve(
        tril.expand(shape + tuple(tril.shape[-2:])), rhs.expand(shape + tuple(rhs.shape[-2:]))
    )


def batch_mahalanobis(tril: Tensor, x: Tensor) -> Tensor:
    """``x^T (L L^T)^-1 x`` for the lower Cholesky factor ``tril``, over broadcast batches."""
    return solve_lower(tril, x.unsqueeze(-1)).squeeze(-1).pow(2).sum(-1)


def half_log_det(tril: Tensor) -> Tensor:
    """``log det(L L^T) / 2`` from the Cholesky factor's diagonal."""
    return tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _precision_to_scale_tril(p: Tensor) -> Tensor:
    lf = cholesky(p.flip((-2, -1)))
    l_inv = lf.flip((-2, -1)).mT
    return solve_lower(l_inv, eye(p.shape[-1], dtype=p.dtype, device=p.device))


class MultivariateNormal(Distribution):
    """A Gaussian over vectors of ``loc.shape[-1]``, given by exactly one of its covariance,
    precision or lower Cholesky factor of the covariance (``scale_tril``).

    >>> import ember
    >>> loc = ember.zeros(3, requires_grad=True)
    >>> d = MultivariateNormal(loc, scale_tril=2 * ember.eye(3))
    >>> d.rsample((4,)).shape, d.variance
    (ember.Size([4, 3]), tensor([4., 4., 4.]))
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Tensor,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = {
            "scale_tril": scale_tril,
            "covariance_matrix": covariance_matrix,
            "precision_matrix": precision_matrix,
        }
        given = {k: v for k, v in given.items() if v is not None}
        if len(given) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        ((name, matrix),) = given.items()
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(
                f"{what} must be at least two-dimensional, with optional leading batch dimensions"
            )
        batch_shape = broadcast_shapes(
            "MultivariateNormal", tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])
        )
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def expand(self, batch_shape, _instance=None):
        """This distribution with its parameters expanded to ``batch_shape``."""
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        event = tuple(self.event_shape)
        new.loc = self.loc.expand(tuple(batch_shape) + event)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(tuple(batch_shape) + event + event))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        tril = self._unbroadcasted_scale_tril
        return inv(tril @ tril.mT).expand(self._matrix_shape())

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        shape = tuple(self._batch_shape) + tuple(self._event_shape)
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(shape)

    def rsample(self, sample_shape=()) -> Tensor:
        eps = standard_normal(self._extended_shape(sample_shape), self.loc)
        return self.loc + batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        m = batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + m) - half_log_det(self._unbroadcasted_scale_tril)

    def entropy(self) -> Tensor:
        n = self._event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + half_log_det(self._unbroadcasted_scale_tril)
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
