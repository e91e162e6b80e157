"""The ``torch.*`` matrix functions built on ``ember.linalg`` (``vander``, ``chain_matmul``,
``pinverse``) and the Tensor methods that name ``ember.linalg`` functions (``x.det()``,
``x.inverse()``, ``x.mH``...).

Vandermonde powers come from a cumulative product, so they are differentiable in ``x``.

>>> import ember
>>> ember.vander(ember.tensor([1, 2, 3]), N=2)
tensor([[1, 1],
        [2, 1],
        [3, 1]])
"""

from __future__ import annotations

import warnings

from .. import dtypes as _dt
from .. import linalg as _linalg
from .._errors import DTypeError, ShapeError
from .._tensor import Tensor
from .creation import ones_like
from .reduce import cumprod
from .shape import cat, flip


def powers(x: Tensor, n: int, name: str) -> Tensor:
    """``x**0 ... x**(n-1)`` along a new last dim, in ``x``'s dtype promoted with int64.

    >>> import ember
    >>> powers(ember.tensor([2.0, 3.0]), 3, "vander")
    tensor([[1., 2., 4.],
            [1., 3., 9.]])
    """
    if n < 0:
        raise ShapeError(f"{name}: N must be non-negative, got {n}")
    x = x.to(_dt.promote_types(x.dtype, _dt.int64))
    first = ones_like(x).unsqueeze(-1)
    if n <= 1:
        return first[..., :n]
    rest = cumprod(x.unsqueeze(-1).expand(*x.shape, n - 1), -1)
    return cat([first, rest], -1)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803
    """The Vandermonde matrix of the 1-D ``x``: columns ``x**(N-1) ... x**0`` (increasing
    powers when ``increasing``); N defaults to ``len(x)``, integer inputs give int64.

    >>> import ember
    >>> ember.vander(ember.tensor([2.0, 3.0]), increasing=True)
    tensor([[1., 2.],
            [1., 3.]])
    """
    if x.ndim != 1:
        raise ShapeError(f"vander: x must be a one-dimensional tensor, got shape {tuple(x.shape)}")
    if x.dtype is _dt.bool_:
        x = x.to(_dt.int64)
    out = powers(x, x.shape[0] if N is None else N, "vander")
    return out if increasing else flip(out, (1,))


def linalg_vander(x: Tensor, n: int | None, name: str = "linalg.vander") -> Tensor:
    """``ember.linalg.vander``'s checks and result (increasing powers, batched).

    >>> import ember
    >>> linalg_vander(ember.tensor([[2.0, 3.0]]), None).shape
    ember.Size([1, 2, 2])
    """
    if x.ndim < 1:
        raise ShapeError(f"{name}: x must have at least one dimension, got a 0-d tensor")
    if x.dtype is _dt.bool_:
        raise DTypeError(
            f"{name} supports floating point, complex, and integer tensors, but got {x.dtype}"
        )
    n = x.shape[-1] if n is None else n
    if n <= 1:
        raise ShapeError(f"{name}: N must be greater than 1, got {n}")
    return powers(x, n, name)


_CHAIN_MATMUL_DEPRECATED = (
    "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
    "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
    "multiple parameters."
)


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of 2-D matrices, left to right (deprecated in PyTorch, with its warning:
    use ``ember.linalg.multi_dot``).

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.chain_matmul(ember.ones(2, 3), ember.ones(3, 1))
    tensor([[3.],
            [3.]])
    """
    warnings.warn(_CHAIN_MATMUL_DEPRECATED, UserWarning, stacklevel=2)
    if not matrices:
        raise ShapeError("chain_matmul(): Expected one or more matrices")
    for k, t in enumerate(matrices):
        if t.ndim != 2:
            raise ShapeError(
                f"chain_matmul(): matrix {k} has {t.ndim} dimensions (shape {tuple(t.shape)}), "
                "expected 2"
            )
    if len(matrices) == 1:
        return matrices[0].clone()
    return _linalg.multi_dot(matrices)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """The pseudo-inverse, singular values <= ``rcond`` times the largest dropped
    (``ember.linalg.pinv`` with ``rtol=rcond``).

    >>> import ember
    >>> ember.pinverse(ember.tensor([[2.0, 0.0]]))
    tensor([[0.5000],
            [0.0000]])
    """
    return _linalg.pinv(input, rtol=rcond)


def _matrices_only(x: Tensor, what: str) -> None:
    if x.ndim < 2:
        raise ShapeError(
            f"tensor.{what} is only supported on matrices or batches of matrices. Got "
            f"{x.ndim}-D tensor."
        )


def _H(self: Tensor) -> Tensor:  # noqa: N802
    if self.ndim not in (0, 2):
        raise ShapeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor."
        )
    return self if self.ndim == 0 else self.transpose(0, 1)


def _mH(self: Tensor) -> Tensor:  # noqa: N802
    _matrices_only(self, "mH")
    return self.transpose(-2, -1)


def adjoint(self: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (the transpose, for real tensors).

    >>> import ember
    >>> ember.ones(2, 3).adjoint().shape
    ember.Size([3, 2])
    """
    _matrices_only(self, "adjoint()")
    return self.transpose(-2, -1)


def _cholesky(self: Tensor, upper: bool = False) -> Tensor:
    warnings.warn(
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in "
        "a future PyTorch release.",
        UserWarning,
        stacklevel=2,
    )
    return _linalg.cholesky(self, upper=upper)


__all__ = ["vander", "chain_matmul", "pinverse"]
TENSOR_METHODS = {
    "pinverse": pinverse,
    "adjoint": adjoint,
    "H": property(_H),
    "mH": property(_mH),
    "det": _linalg.det,
    "logdet": _linalg.logdet,
    "slogdet": _linalg._torch_slogdet,
    "inverse": _linalg.inv,
    "matrix_power": _linalg.matrix_power,
    "cholesky": _cholesky,
    "svd": _linalg._torch_svd,
}
