"""Parametrizations built on ``parametrize``, as PyTorch's ``torch.nn.utils.parametrizations``:
``weight_norm`` (magnitude ``original0`` times direction ``original1``), ``spectral_norm``
(divided by the largest singular value, by power iteration) and ``orthogonal``.

>>> import ember
>>> from ember.nn.utils import parametrizations
>>> m = parametrizations.weight_norm(ember.nn.Linear(4, 2))
>>> [name for name, _ in m.named_parameters()]
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""

from __future__ import annotations

from ..._config import no_grad
from ..._node import named
from ..._tensor import Tensor
from .._functional.normalization import normalize
from ..module import Module
from . import parametrize
from .weight_norm import _weight_norm, norm_except_dim


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        out = _weight_norm(weight_v, weight_g, self.dim)
        if self.dim == -1:  # PyTorch composes this case too (a MulBackward0)
            return out
        return named(out, "WeightNormInterfaceBackward0", inputs=(weight_v, weight_g))

    def right_inverse(self, weight: Tensor):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Re-express ``module.<name>`` as ``g * v / ||v||`` (norm over all dims but ``dim``)."""
    return parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:  # fmt: skip
        from ...functions.creation import randn

        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")  # fmt: skip
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")  # fmt: skip
        self.dim, self.eps = dim % ndim, eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            h, w = self._matrix(weight).shape
            kw = dict(dtype=weight.dtype, device=weight.device)
            self.register_buffer("_u", normalize(randn(h, **kw), dim=0, eps=eps))
            self.register_buffer("_v", normalize(randn(w, **kw), dim=0, eps=eps))
            self._power_method(self._matrix(weight), 15)

    def _matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def _power_method(self, weight_mat: Tensor, n: int) -> None:
        with no_grad():
            for _ in range(n):
                self._u.copy_(normalize(weight_mat.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(weight_mat.t().mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        sigma = self._u.clone().dot(weight_mat.mv(self._v.clone()))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:  # fmt: skip
    """Divide ``module.<name>`` by its spectral norm, estimated by power iteration (buffers
    ``_u`` and ``_v``, refined on each access in training mode)."""
    weight = getattr(module, name)
    if dim is None:
        from ..layers.conv import ConvTranspose2d  # ConvTranspose1d is a subclass

        dim = 1 if isinstance(module, ConvTranspose2d) else 0
    sn = _SpectralNorm(weight, n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, sn)


def _matrix_exp(A: Tensor) -> Tensor:
    """``exp(A)`` of (a batch of) square matrices: scaling and squaring of a degree-18 Taylor
    polynomial, in differentiable ops."""
    import math

    from ...functions.creation import eye

    with no_grad():
        norm = float(A.abs().sum(-2).max()) if A.numel() else 0.0
    squarings = max(0, math.ceil(math.log2(norm))) if norm > 0.5 else 0
    A = A / (2.0**squarings)
    identity = eye(A.shape[-1], dtype=A.dtype, device=A.device)
    term, out = identity, identity
    for i in range(1, 19):
        term = term @ A / i
        out = out + term
    for _ in range(squarings):
        out = out @ out
    return out


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of A's QR decomposition, signed so that R's diagonal is positive."""
    import numpy as np

    from ...functions.creation import tensor

    q, r = np.linalg.qr(A.detach().numpy())
    signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    return tensor(q * signs[..., None, :], dtype=A.dtype, device=A.device)


def _is_orthogonal(Q: Tensor) -> bool:
    from ...dtypes import finfo
    from ...functions.creation import eye

    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10 * n * finfo(Q.dtype).eps
    return bool((Q.mT @ Q - eye(k, dtype=Q.dtype, device=Q.device)).abs().max() <= eps)


class _Orthogonal(Module):
    def __init__(self, weight: Tensor, orthogonal_map: str, *, use_trivialization=True) -> None:
        super().__init__()
        self.shape, self.orthogonal_map = weight.shape, orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        from ...functions.creation import eye, zeros
        from ...functions.shape import cat

        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X, n, k = X.mT, k, n
        X = X.tril()
        if n != k:
            pad = zeros(*X.shape[:-1], n - k, dtype=X.dtype, device=X.device)
            X = cat([X, pad], dim=-1)
        A = X - X.mT
        if self.orthogonal_map == "matrix_exp":
            Q = _matrix_exp(A)
        else:  # cayley: (I - A/2)^{-1} (I + A/2)
            from ...linalg import solve

            identity = eye(n, dtype=A.dtype, device=A.device)
            Q = solve(identity - 0.5 * A, identity + 0.5 * A)
        if n != k:
            Q = Q[..., :k]
        if self.base is not None:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        from ...functions.creation import randn, zeros
        from ...functions.shape import cat

        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")  # fmt: skip
        if "base" not in self._buffers:
            raise NotImplementedError("It is not possible to assign to the matrix exponential "
                                      "or the Cayley parametrizations when "
                                      "use_trivialization=False.")  # fmt: skip
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        if n < k:
            Q, n, k = Q.mT, k, n
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            extra = randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(cat([Q, extra], dim=-1))
        self.base = Q
        neg_id = zeros(*Q_init.shape, dtype=Q_init.dtype, device=Q_init.device)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:  # fmt: skip
    """Keep ``module.<name>`` (a real matrix, or batch of them) orthogonal: ``base @
    exp(A)`` (``"matrix_exp"``, square default) or the Cayley map of a skew-symmetric ``A``.
    The ``"householder"`` map (PyTorch's default for non-square matrices) and
    ``use_trivialization=False`` are not supported here."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")  # fmt: skip
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square else "householder"
    if orthogonal_map not in ("matrix_exp", "cayley", "householder"):
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')  # fmt: skip
    if orthogonal_map == "householder" or not use_trivialization:
        raise NotImplementedError("orthogonal: ember supports the 'matrix_exp' and 'cayley' "
                                  "maps with use_trivialization=True only")  # fmt: skip
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    return parametrize.register_parametrization(module, name, orth, unsafe=True)


__all__ = ["weight_norm", "spectral_norm", "orthogonal"]
