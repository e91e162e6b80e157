"""``ember.linalg``: PyTorch's ``torch.linalg`` for real matrices (batched over leading dims):
norms, inverse, determinant, solve, Cholesky, symmetric eigendecomposition, SVD, matrix
powers and products. Gradients come from the primitives in ``ember/ops/dense.py``.

>>> import ember
>>> a = ember.tensor([[2.0, 1.0], [1.0, 3.0]])
>>> round(ember.linalg.det(a).item(), 4), ember.linalg.solve(a, ember.tensor([3.0, 5.0]))
(5.0, tensor([0.8000, 1.4000]))
"""

from __future__ import annotations

from . import dtypes as _dt
from . import return_types as RT
from ._config import no_grad
from ._errors import DTypeError, ShapeError
from ._tensor import Tensor
from .amp.autocast_mode import rule as _autocast_rule
from .ops import dense as D
from .ops import least_squares as LS
from .ops.base import apply


def _square(a: Tensor, name: str) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(
            f"linalg.{name}: A must be batches of square matrices, but they are "
            f"{a.shape[-2] if a.ndim >= 2 else '?'} by {a.shape[-1] if a.ndim else '?'} "
            f"matrices (shape {tuple(a.shape)})"
        )
    if not a.dtype.is_floating_point:
        raise DTypeError(f"linalg.{name}: expected a floating input, got {a.dtype}")


def _float(a: Tensor) -> Tensor:
    return a if a.dtype.is_floating_point else a.to(_dt.get_default_dtype())


# -- norms ---------------------------------------------------------------------------------


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The ``ord``-norm of ``x`` flattened (or over ``dim``).

    >>> import ember
    >>> ember.linalg.vector_norm(ember.tensor([3.0, -4.0]), ord=1)
    tensor(7.)
    """
    v = _float(x if dtype is None else x.to(dtype))
    dims = dim if dim is not None else tuple(range(v.ndim))
    a = v.abs()
    if ord == float("inf"):
        return a.amax(dims, keepdim=keepdim)
    if ord == float("-inf"):
        return a.amin(dims, keepdim=keepdim)
    if ord == 0:
        return (a != 0).to(v.dtype).sum(dims, keepdim=keepdim)
    if ord == 1:
        return a.sum(dims, keepdim=keepdim)
    if ord == 2:
        return (v * v).sum(dims, keepdim=keepdim).sqrt()
    return (a**ord).sum(dims, keepdim=keepdim) ** (1.0 / ord)


def matrix_norm(a: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False) -> Tensor:
    """Matrix norms: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf.

    >>> import ember
    >>> ember.linalg.matrix_norm(ember.tensor([[1.0, -2.0], [3.0, 4.0]]), ord=1)
    tensor(6.)
    """
    a = _float(a)
    r, c = dim
    if ord == "fro":
        return (a * a).sum(dim, keepdim=keepdim).sqrt()
    if ord in ("nuc", 2, -2):
        x = a.movedim((r, c), (-2, -1))
        s = svdvals(x)
        out = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
        if keepdim:
            out = out.unsqueeze(-1).unsqueeze(-1).movedim((-2, -1), (r, c))
        return out
    if ord in (1, -1):
        sums = a.abs().sum(r, keepdim=True)
        out = sums.amax(c, keepdim=True) if ord == 1 else sums.amin(c, keepdim=True)
    elif ord in (float("inf"), float("-inf")):
        sums = a.abs().sum(c, keepdim=True)
        out = sums.amax(r, keepdim=True) if ord > 0 else sums.amin(r, keepdim=True)
    else:
        raise ShapeError(f"linalg.matrix_norm: order {ord!r} is not supported")
    return (
        out
        if keepdim
        else out.squeeze(max(r % a.ndim, c % a.ndim)).squeeze(min(r % a.ndim, c % a.ndim))
    )


def norm(a: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``vector_norm`` for vectors (or one ``dim``), ``matrix_norm`` for matrices (or two
    dims); the 2-norm of everything flattened when ``ord`` and ``dim`` are None.

    >>> import ember
    >>> ember.linalg.norm(ember.tensor([[3.0, 4.0]]))
    tensor(5.)
    """
    x = a if dtype is None else a.to(dtype)
    if dim is None and ord is None:
        return vector_norm(x, 2, None, keepdim)
    dims = (dim,) if isinstance(dim, int) else dim
    if dims is None:
        dims = tuple(range(x.ndim))
    if len(dims) == 2:
        return matrix_norm(x, "fro" if ord is None else ord, tuple(dims), keepdim)
    return vector_norm(x, 2 if ord is None else ord, dims, keepdim)


# -- inverse, determinant, solve -------------------------------------------------------------


def inv(a: Tensor) -> Tensor:
    """The inverse of square matrices.

    >>> import ember
    >>> ember.linalg.inv(ember.tensor([[2.0, 0.0], [0.0, 4.0]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    _square(a, "inv")
    _check_invertible(a, "inv")
    return apply(D.Inv(), a)


def _check_invertible(a: Tensor, name: str) -> None:
    with no_grad():
        s, _ = slogdet(a.detach())
        if bool((s == 0).any().item()):
            raise ShapeError(
                f"linalg.{name}: the input (shape {tuple(a.shape)}) is singular (not invertible)"
            )


def slogdet(a: Tensor):
    """``(sign, log|det|)`` of square matrices (sign 0 and -inf for singular ones).

    >>> import ember
    >>> ember.linalg.slogdet(ember.tensor([[0.0, 2.0], [1.0, 0.0]]))
    ember.return_types.linalg_slogdet(
    sign=tensor(-1.),
    logabsdet=tensor(0.6931))
    """
    from .backend import xp_of

    _square(a, "slogdet")
    with no_grad():
        xp = xp_of(a._data)
        sign = xp.linalg.slogdet(D._work(a.detach()._data))[0]
        sign_t = Tensor._make(xp.asarray(sign).astype(a._data.dtype))
    return RT.linalg_slogdet(sign_t, apply(D.LogAbsDet(), a))


def det(a: Tensor) -> Tensor:
    """The determinant of square matrices.

    >>> import ember
    >>> round(ember.linalg.det(ember.tensor([[1.0, 2.0], [3.0, 4.0]])).item(), 4)
    -2.0
    """
    sign, logabs = slogdet(a)
    return sign * logabs.exp()


def logdet(a: Tensor) -> Tensor:
    """log det (NaN for a negative determinant, -inf for a zero one).

    >>> import ember
    >>> ember.logdet(ember.eye(3) * 2)
    tensor(2.0794)
    """
    from .functions.creation import full_like
    from .functions.elementwise import where

    sign, logabs = slogdet(a)
    return where(sign < 0, full_like(logabs.detach(), float("nan")), logabs)


def solve(a: Tensor, b: Tensor, *, left: bool = True) -> Tensor:
    """X with ``A X = B`` (``X A = B`` when ``left=False``); B may be a vector.

    >>> import ember
    >>> ember.linalg.solve(ember.eye(2) * 2, ember.tensor([[2.0], [4.0]]))
    tensor([[1.],
            [2.]])
    """
    _square(a, "solve")
    if not left:
        return _mT(solve(_mT(a), _mT(b)))
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))
    rhs = b.unsqueeze(-1) if vector else b
    if rhs.shape[-2] != a.shape[-1]:
        raise ShapeError(
            f"linalg.solve: incompatible shapes of A {tuple(a.shape)} and B {tuple(b.shape)}"
        )
    _check_invertible(a, "solve")
    out = apply(D.Solve(), a, rhs.to(a.dtype))
    return out.squeeze(-1) if vector else out


def _mT(x: Tensor) -> Tensor:  # noqa: N802
    return x.transpose(-2, -1)


# -- factorizations ----------------------------------------------------------------------


def cholesky(a: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor of symmetric positive-definite matrices (lower, or upper).

    >>> import ember
    >>> ember.linalg.cholesky(ember.tensor([[4.0, 2.0], [2.0, 2.0]]))
    tensor([[2., 0.],
            [1., 1.]])
    """
    _square(a, "cholesky")
    with no_grad():
        w = apply(D.EighValues(), a.detach())
        if bool((w <= 0).any().item()):
            raise ShapeError(
                f"linalg.cholesky: the input (shape {tuple(a.shape)}) is not positive-definite"
            )
    low = apply(D.Cholesky(), a)
    return _mT(low) if upper else low


def eigh(a: Tensor, UPLO: str = "L"):  # noqa: N803
    """Eigenvalues (ascending) and orthonormal eigenvectors of symmetric matrices.

    >>> import ember
    >>> ember.linalg.eigh(ember.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues
    tensor([1., 2.])
    """
    _square(a, "eigh")
    sym = _triangle(a, UPLO, "eigh")
    return RT.linalg_eigh(apply(D.EighValues(), sym), apply(D.EighVectors(), sym))


def eigvalsh(a: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803
    """Eigenvalues (ascending) of symmetric matrices.

    >>> import ember
    >>> ember.linalg.eigvalsh(ember.eye(2))
    tensor([1., 1.])
    """
    _square(a, "eigvalsh")
    return apply(D.EighValues(), _triangle(a, UPLO, "eigvalsh"))


def _triangle(a: Tensor, uplo: str, name: str) -> Tensor:
    """The matrix whose lower triangle LAPACK reads: ``a`` (UPLO='L') or its transpose ('U').
    Gradients are symmetric, as PyTorch's (the input is taken to be symmetric)."""
    if uplo not in ("L", "U"):
        raise ShapeError(f"linalg.{name}: UPLO must be 'L' or 'U', got {uplo!r}")
    return a if uplo == "L" else _mT(a)


def svdvals(a: Tensor) -> Tensor:
    """Singular values, descending (first-order gradients: ``U diag(gS) V^T``).

    >>> import ember
    >>> ember.linalg.svdvals(ember.tensor([[3.0, 0.0], [0.0, -4.0]]))
    tensor([4., 3.])
    """
    if a.ndim < 2:
        raise ShapeError(f"linalg.svdvals: expected a matrix, got shape {tuple(a.shape)}")
    return apply(D.SingularValues(), _float(a))


def svd(a: Tensor, full_matrices: bool = True):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh`` (the reduced form; ``full_matrices`` is
    accepted but the square factors are not computed). Gradients flow through ``S`` only:
    ``U`` and ``Vh`` are constants to autograd.

    >>> import ember
    >>> u, s, vh = ember.linalg.svd(ember.tensor([[3.0, 0.0], [0.0, 4.0]]))
    >>> s
    tensor([4., 3.])
    """
    if a.ndim < 2:
        raise ShapeError(f"linalg.svd: expected a matrix, got shape {tuple(a.shape)}")
    x = _float(a)
    return RT.linalg_svd(apply(D.SvdU(), x), svdvals(x), apply(D.SvdVh(), x))


def matrix_rank(a: Tensor, tol: float | None = None, hermitian: bool = False) -> Tensor:
    """The number of singular values above ``tol`` (default: max(m, n) * eps * largest).

    >>> import ember
    >>> ember.linalg.matrix_rank(ember.tensor([[1.0, 2.0], [2.0, 4.0]]))
    tensor(1)
    """
    with no_grad():
        s = svdvals(a.detach())
        if tol is None:
            eps = _dt.finfo(s.dtype).eps
            cut = s.amax(-1, keepdim=True) * (max(a.shape[-2:]) * eps)
        else:
            cut = tol
        return (s > cut).to(_dt.int64).sum(-1)


# -- least squares -------------------------------------------------------------------------

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def pinv(a: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudo-inverse (singular values <= max(atol, rtol * largest) dropped;
    rtol defaults to eps * max(m, n) when neither is given, else to 0).

    >>> import ember
    >>> ember.linalg.pinv(ember.tensor([[1.0, 0.0], [0.0, 0.0]]))
    tensor([[1., 0.],
            [0., 0.]])
    """
    if a.ndim < 2:
        raise ShapeError(
            f"linalg.pinv: expected a tensor with 2 or more dimensions, got shape {tuple(a.shape)}"
        )
    if not a.dtype.is_floating_point:
        raise DTypeError(f"linalg.pinv: expected a floating input, got {a.dtype}")
    return apply(LS.Pinv(rtol=rtol, atol=0.0 if atol is None else float(atol)), a)


def lstsq(a: Tensor, b: Tensor, rcond: float | None = None, *, driver: str | None = None):
    """The least-squares solution X of ``A X = B`` and what PyTorch's CPU ``driver`` reports:
    ``residuals`` (squared residual norms, for m > n except with 'gelsy', and with
    'gelsd'/'gelss' only when every matrix has rank n), ``rank`` (not for 'gels') and
    ``singular_values`` ('gelsd'/'gelss'). B may be a (batched) vector. X is the minimum-norm
    solution; gradients flow through X and the residuals (PyTorch's rule: that of
    ``pinv(A) @ B``).

    >>> import ember
    >>> a = ember.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> r = ember.linalg.lstsq(a, ember.tensor([[1.0], [2.0], [3.0]]), driver="gelsd")
    >>> r.solution.flatten(), r.residuals, r.rank
    (tensor([1., 2.]), tensor([9.]), tensor(2))
    """
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise ShapeError(
            f"linalg.lstsq: parameter `driver` should be one of {_DRIVERS}, got {driver!r}"
        )
    if a.ndim < 2:
        raise ShapeError(
            f"linalg.lstsq: input must have at least 2 dimensions, got shape {tuple(a.shape)}"
        )
    for t in (a, b):
        if t.dtype not in (_dt.float32, _dt.float64):
            raise DTypeError(
                f"linalg.lstsq: only float32 and float64 inputs are supported, got {t.dtype}"
            )
    if a.dtype is not b.dtype:
        raise DTypeError(
            f"linalg.lstsq: expected input and other to have the same dtype, but got {a.dtype} "
            f"and {b.dtype}"
        )
    vector = b.ndim == a.ndim - 1
    rhs = b.unsqueeze(-1) if vector else b
    m, n = a.shape[-2:]
    if rhs.ndim < 2 or rhs.shape[-2] != m:
        raise ShapeError(
            f"linalg.lstsq: input.size(-2) should match other.size(-2), got shapes "
            f"{tuple(a.shape)} and {tuple(b.shape)}"
        )
    if rcond is None:
        rcond = _dt.finfo(a.dtype).eps * max(m, n)
    x = apply(LS.Lstsq(rcond=float(rcond)), a, rhs)
    batch = tuple(a.shape[:-2])  # rank and singular values: per matrix of A, unbroadcast
    empty_real = a.new_zeros((0,))
    with no_grad():
        s = svdvals(a.detach()) if m and n else a.new_zeros(batch + (0,))
        if driver == "gels":
            rank = a.new_zeros((0,), dtype=_dt.int64)
        elif s.shape[-1] == 0 or rhs.shape[-1] == 0:
            rank = a.new_zeros(batch, dtype=_dt.int64)
        else:
            rank = (s > rcond * s[..., :1]).to(_dt.int64).sum(-1)
    residuals = empty_real
    if m > n and driver != "gelsy":
        if driver == "gels" or bool((rank == n).all().item()):
            residuals = ((a @ x - rhs) ** 2).sum(-2)
        if driver == "gels" and n == 0:  # LAPACK's gels returns at once: nothing computed
            residuals = residuals * 0
    values = s if driver in ("gelsd", "gelss") else empty_real
    return RT.linalg_lstsq(x.squeeze(-1) if vector else x, residuals, rank, values)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:  # noqa: N803
    """The Vandermonde matrices of the vectors in ``x``'s last dim: increasing powers
    ``x**0 ... x**(N-1)`` (N defaults to the vectors' length).

    >>> import ember
    >>> ember.linalg.vander(ember.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [1, 2, 4],
            [1, 3, 9]])
    """
    from .functions.matrices import linalg_vander

    return linalg_vander(x, N)


# -- products and powers ----------------------------------------------------------------------


def matrix_power(a: Tensor, n: int) -> Tensor:
    """``a`` multiplied by itself ``n`` times (the inverse's powers for negative ``n``).

    >>> import ember
    >>> ember.linalg.matrix_power(ember.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)
    tensor([[1., 3.],
            [0., 1.]])
    """
    _square(a, "matrix_power")
    if n == 0:
        return a * 0 + D._eye_like(a)
    base = inv(a) if n < 0 else a
    out, k = None, abs(n)
    while k:  # square-and-multiply
        if k & 1:
            out = base if out is None else out @ base
        k >>= 1
        if k:
            base = base @ base
    return out


@_autocast_rule("multi_dot")
def multi_dot(tensors) -> Tensor:
    """The product of a chain of matrices (the first and last may be vectors).

    >>> import ember
    >>> ember.linalg.multi_dot([ember.ones(2), ember.eye(2), ember.ones(2)])
    tensor(2.)
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise ShapeError(f"linalg.multi_dot: expected at least 2 tensors, got {len(tensors)}")
    out = tensors[0]
    for t in tensors[1:]:
        out = out @ t
    return out


@_autocast_rule("linalg_vecdot")
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """Dot products along ``dim``.

    >>> import ember
    >>> ember.linalg.vecdot(ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
    tensor(11.)
    """
    return (x * y).sum(dim)


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The 3-D cross product along ``dim`` (default the last).

    >>> import ember
    >>> ember.linalg.cross(ember.tensor([0.0, 0.0, 1.0]), ember.tensor([1.0, 0.0, 0.0]))
    tensor([0., 1., 0.])
    """
    from .functions.structure import cross as _cross

    return _cross(input, other, dim)


def diagonal(a: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonals of the matrices in the last two dims.

    >>> import ember
    >>> ember.linalg.diagonal(ember.eye(2))
    tensor([1., 1.])
    """
    from .functions.structure import diagonal as _diagonal

    return _diagonal(a, offset, dim1, dim2)


def _torch_slogdet(input: Tensor):
    """``torch.slogdet``: ``linalg.slogdet`` as the older ``return_types.slogdet``.

    >>> import ember
    >>> ember.slogdet(ember.eye(2)).logabsdet
    tensor(0.)
    """
    return RT.slogdet(*slogdet(input))


def _torch_svd(input: Tensor, some: bool = True, compute_uv: bool = True):
    """``torch.svd``: ``(U, S, V)`` (V, not Vh); gradients through S only (see ``svd``).

    >>> import ember
    >>> ember.svd(ember.eye(2)).S
    tensor([1., 1.])
    """
    u, s, vh = svd(input)
    return RT.svd(u, s, _mT(vh))


__all__ = [
    "vector_norm", "matrix_norm", "norm", "inv", "det", "slogdet", "solve", "cholesky",
    "eigh", "eigvalsh", "svdvals", "svd", "matrix_rank", "matrix_power", "multi_dot", "vecdot",
    "cross", "diagonal", "pinv", "lstsq", "vander",
]  # fmt: skip
