"""Matrix structure: triangles, diagonals, grids, block and Kronecker products, small products.

Each is composed from ember ops (``where``, ``index_select``, ``cat``, ``matmul``...), so
gradients of every order, devices and static graphs come with them.

>>> import ember
>>> ember.ones(3, 3).tril()
tensor([[1., 0., 0.],
        [1., 1., 0.],
        [1., 1., 1.]])
"""

from __future__ import annotations

import itertools

from .. import dtypes as _dt
from .._errors import ShapeError
from .._shape import broadcast_shapes, wrap_dim
from .._tensor import Tensor
from ..amp.autocast_mode import rule as _autocast_rule
from . import creation as C
from .inplace import apply_inplace


def _matrix(input: Tensor, name: str) -> None:
    if input.ndim < 2:
        raise ShapeError(
            f"{name}: input must have at least 2 dimensions, got shape {tuple(input.shape)}"
        )


def _band(input: Tensor, diagonal: int, lower: bool) -> Tensor:
    """The bool mask of the lower (or upper) triangle of the last two dims."""
    n, m = input.shape[-2], input.shape[-1]
    rows = C.arange(n, device=input.device).unsqueeze(1)
    cols = C.arange(m, device=input.device).unsqueeze(0)
    return (cols - rows <= diagonal) if lower else (cols - rows >= diagonal)


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims (on and below ``diagonal``); the rest zero.

    >>> import ember
    >>> ember.tril(ember.ones(2, 3), diagonal=1)
    tensor([[1., 1., 0.],
            [1., 1., 1.]])
    """
    _matrix(input, "tril")
    return input.masked_fill(~_band(input, int(diagonal), True), 0)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims (on and above ``diagonal``); the rest zero.

    >>> import ember
    >>> ember.triu(ember.ones(2, 2))
    tensor([[1., 1.],
            [0., 1.]])
    """
    _matrix(input, "triu")
    return input.masked_fill(~_band(input, int(diagonal), False), 0)


def tril_(self: Tensor, diagonal: int = 0) -> Tensor:
    """``tril`` in place.

    >>> import ember
    >>> ember.ones(2, 2).tril_()
    tensor([[1., 0.],
            [1., 1.]])
    """
    return apply_inplace(self, tril, diagonal, name="tril_")


def triu_(self: Tensor, diagonal: int = 0) -> Tensor:
    """``triu`` in place.

    >>> import ember
    >>> ember.ones(2, 2).triu_(1)
    tensor([[0., 1.],
            [0., 0.]])
    """
    return apply_inplace(self, triu, diagonal, name="triu_")


def _tri_indices(row: int, col: int, offset: int, lower: bool, dtype, device, name: str):
    if row < 0 or col < 0:
        raise ShapeError(f"{name}: row and col must be non-negative, got {row} and {col}")
    pairs = [
        (i, j)
        for i in range(row)
        for j in range(col)
        if (j - i <= offset if lower else j - i >= offset)
    ]
    rows = [p[0] for p in pairs]
    cols = [p[1] for p in pairs]
    return C.tensor([rows, cols], dtype=dtype or _dt.int64, device=device).reshape(2, len(pairs))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None) -> Tensor:
    """The (2, N) row and column indices of the lower triangle of a ``row`` x ``col`` matrix.

    >>> import ember
    >>> ember.tril_indices(3, 3)
    tensor([[0, 1, 1, 2, 2, 2],
            [0, 0, 1, 0, 1, 2]])
    """
    return _tri_indices(row, col, offset, True, dtype, device, "tril_indices")


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None) -> Tensor:
    """The (2, N) row and column indices of the upper triangle of a ``row`` x ``col`` matrix.

    >>> import ember
    >>> ember.triu_indices(2, 3, 1)
    tensor([[0, 0, 1],
            [1, 2, 2]])
    """
    return _tri_indices(row, col, offset, False, dtype, device, "triu_indices")


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of the ``dim1`` x ``dim2`` planes, as the last dim (a copy, not a view).

    >>> import ember
    >>> ember.arange(9).reshape(3, 3).diagonal(1)
    tensor([1, 5])
    """
    _matrix(input, "diagonal")
    d1, d2 = wrap_dim(dim1, input.ndim, "diagonal"), wrap_dim(dim2, input.ndim, "diagonal")
    if d1 == d2:
        raise ShapeError(f"diagonal: dim1 and dim2 cannot be the same dimension ({dim1})")
    x = input.movedim((d1, d2), (-2, -1))
    n, m = x.shape[-2], x.shape[-1]
    if offset >= 0:
        length, start = max(0, min(n, m - offset)), offset
    else:
        length, start = max(0, min(n + offset, m)), -offset * m
    flat = x.reshape(*x.shape[:-2], n * m)
    index = C.arange(length, device=input.device) * (m + 1) + start
    return flat.index_select(-1, index)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices whose ``offset`` diagonal (in dims ``dim1``, ``dim2``) holds the last dim.

    >>> import ember
    >>> ember.diag_embed(ember.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    """
    if input.ndim < 1:
        raise ShapeError("diag_embed: input must have at least 1 dimension, got a 0-d tensor")
    length, k = input.shape[-1], abs(int(offset))
    n = length + k
    pad = C.zeros(*input.shape[:-1], k, dtype=input.dtype, device=input.device)
    values = _cat([input, pad], -1)
    rows = C.arange(n, device=input.device).unsqueeze(1)
    cols = C.arange(n, device=input.device).unsqueeze(0)
    on = cols - rows == offset
    spread = values.unsqueeze(-1) if offset >= 0 else values.unsqueeze(-2)
    out = spread.expand(*input.shape[:-1], n, n).masked_fill(~on, 0)
    ndim = out.ndim
    d1, d2 = wrap_dim(dim1, ndim, "diag_embed"), wrap_dim(dim2, ndim, "diag_embed")
    if d1 == d2:
        raise ShapeError(f"diag_embed: dim1 and dim2 cannot be the same dimension ({dim1})")
    return out.movedim((-2, -1), (d1, d2))


def _cat(tensors, dim: int) -> Tensor:
    from .shape import cat

    return cat(tensors, dim)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-D input as the ``diagonal`` of a square matrix; a 2-D input's ``diagonal``.

    >>> import ember
    >>> ember.diag(ember.tensor([1.0, 2.0]))
    tensor([[1., 0.],
            [0., 2.]])
    >>> ember.diag(ember.eye(2))
    tensor([1., 1.])
    """
    if input.ndim == 1:
        return diag_embed(input, diagonal)
    if input.ndim == 2:
        return globals()["diagonal"](input, diagonal)
    raise ShapeError(f"diag: expected a 1-D or 2-D input, got shape {tuple(input.shape)}")


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """``diag`` of the flattened input.

    >>> import ember
    >>> ember.diagflat(ember.tensor([[1, 2]])).shape
    ember.Size([2, 2])
    """
    return diag_embed(input.reshape(-1), offset)


@_autocast_rule("trace")
def trace(input: Tensor) -> Tensor:
    """The sum of a matrix's main diagonal.

    >>> import ember
    >>> ember.trace(ember.arange(9.0).reshape(3, 3))
    tensor(12.)
    """
    if input.ndim != 2:
        raise ShapeError(f"trace: expected a matrix, got shape {tuple(input.shape)}")
    return diagonal(input).sum()


def broadcast_tensors(*tensors: Tensor) -> tuple:
    """The tensors expanded to their common broadcast shape.

    >>> import ember
    >>> [t.shape for t in ember.broadcast_tensors(ember.ones(2, 1), ember.ones(3))]
    [ember.Size([2, 3]), ember.Size([2, 3])]
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes("broadcast_tensors", *(tuple(t.shape) for t in tensors))
    return tuple(t.expand(*shape) for t in tensors)


def meshgrid(*tensors: Tensor, indexing: str | None = None) -> tuple:
    """Coordinate grids from 1-D tensors (``indexing='ij'``, the default, or ``'xy'``).

    >>> import ember
    >>> x, y = ember.meshgrid(ember.tensor([1, 2]), ember.tensor([3, 4, 5]), indexing="ij")
    >>> x.shape, y[0]
    (ember.Size([2, 3]), tensor([3, 4, 5]))
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    indexing = indexing or "ij"
    if indexing not in ("ij", "xy"):
        raise ShapeError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    for t in tensors:
        if t.ndim > 1:
            raise ShapeError(f"meshgrid: expects 0-D or 1-D tensors, got shape {tuple(t.shape)}")
    flat = [t.reshape(-1) for t in tensors]
    shape = tuple(t.shape[0] for t in flat)
    grids = []
    for k, t in enumerate(flat):
        view = [1] * len(flat)
        view[k] = shape[k]
        grid = t.reshape(*view).expand(*shape)
        grids.append(grid.transpose(0, 1) if indexing == "xy" and len(flat) >= 2 else grid)
    return tuple(grids)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element from each 1-D tensor, as rows.

    >>> import ember
    >>> ember.cartesian_prod(ember.tensor([1, 2]), ember.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    if len(tensors) == 1:
        return tensors[0]
    from .shape import stack

    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """Rows of ``r`` elements of a 1-D tensor, as ``itertools.combinations`` orders them.

    >>> import ember
    >>> ember.combinations(ember.tensor([1, 2, 3]))
    tensor([[1, 2],
            [1, 3],
            [2, 3]])
    """
    if input.ndim != 1:
        raise ShapeError(f"combinations: expects a 1-D tensor, got shape {tuple(input.shape)}")
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    if not rows:
        return C.empty(0, r, dtype=input.dtype, device=input.device) if r else input[:0]
    index = C.tensor(rows, dtype=_dt.int64, device=input.device)
    return input.index_select(0, index.reshape(-1)).reshape(len(rows), r)


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``dims`` (from the first toward the
    second).

    >>> import ember
    >>> ember.rot90(ember.tensor([[1, 2], [3, 4]]))
    tensor([[2, 4],
            [1, 3]])
    """
    if len(dims) != 2:
        raise ShapeError(f"rot90: expected 2 dims, got {len(dims)}")
    if input.ndim < 2:
        raise ShapeError(f"rot90: expected at least 2 dimensions, got shape {tuple(input.shape)}")
    d0, d1 = (wrap_dim(d, input.ndim, "rot90") for d in dims)
    if d0 == d1:
        raise ShapeError(f"rot90: the two dims must differ, got {tuple(dims)}")
    k %= 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip(d0, d1)
    if k == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


@_autocast_rule("kron")
def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product.

    >>> import ember
    >>> ember.kron(ember.eye(2), ember.tensor([[1.0, 2.0]]))
    tensor([[1., 2., 0., 0.],
            [0., 0., 1., 2.]])
    """
    nd = max(input.ndim, other.ndim)
    a = input.reshape(*([1] * (nd - input.ndim)), *input.shape)
    b = other.reshape(*([1] * (nd - other.ndim)), *other.shape)
    a_view, b_view = [], []
    for sa, sb in zip(a.shape, b.shape):
        a_view += [sa, 1]
        b_view += [1, sb]
    out = a.reshape(*a_view) * b.reshape(*b_view)
    return out.reshape(*(sa * sb for sa, sb in zip(a.shape, b.shape)))


def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix of the (0-, 1- or 2-D) tensors.

    >>> import ember
    >>> ember.block_diag(ember.tensor([[1, 2]]), ember.tensor(3))
    tensor([[1, 2, 0],
            [0, 0, 3]])
    """
    mats = []
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise ShapeError(
                f"block_diag: input {i} must have 2 or fewer dimensions, got shape {tuple(t.shape)}"
            )
        mats.append(t.reshape(1, -1) if t.ndim < 2 else t)
    if not mats:
        return C.empty(1, 0)
    dtype = _dt.result_type(*mats)
    device = mats[0].device
    width = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        h, w = m.shape
        parts = [
            C.zeros(h, left, dtype=dtype, device=device),
            m.to(dtype),
            C.zeros(h, width - left - w, dtype=dtype, device=device),
        ]
        rows.append(_cat(parts, 1))
        left += w
    return _cat(rows, 0)


def column_stack(tensors) -> Tensor:
    """Stack 0-/1-D tensors as columns (and 2-D ones as they are) side by side.

    >>> import ember
    >>> ember.column_stack([ember.tensor([1, 2]), ember.tensor([3, 4])])
    tensor([[1, 3],
            [2, 4]])
    """
    return _cat([t.reshape(-1, 1) if t.ndim < 2 else t for t in tensors], 1)


@_autocast_rule("tensordot")
def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    """Sum products over ``dims``: the last ``dims`` of ``a`` with the first of ``b``, or the
    pairs of lists ``([a dims], [b dims])``.

    >>> import ember
    >>> ember.tensordot(ember.ones(2, 3, 4), ember.ones(3, 4, 5)).shape
    ember.Size([2, 5])
    """
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise ShapeError(f"tensordot: expects dims >= 0, got {dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise ShapeError(f"tensordot: both dim lists should have the same length, got {da}, {db}")
    da = [wrap_dim(d, a.ndim, "tensordot") for d in da]
    db = [wrap_dim(d, b.ndim, "tensordot") for d in db]
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise ShapeError(
                f"tensordot: contracted dimensions need to match, but first has size "
                f"{a.shape[x]} in dim {x} and second has size {b.shape[y]} in dim {y} "
                f"(shapes {tuple(a.shape)} and {tuple(b.shape)})"
            )
    free_a = [d for d in range(a.ndim) if d not in da]
    free_b = [d for d in range(b.ndim) if d not in db]
    k = 1
    for d in da:
        k *= a.shape[d]
    am = a.permute(*free_a, *da).reshape(-1, k)
    bm = b.permute(*db, *free_b).reshape(k, -1)
    out = am.to(_dt.result_type(a, b)) @ bm.to(_dt.result_type(a, b))
    return out.reshape(*(a.shape[d] for d in free_a), *(b.shape[d] for d in free_b))


@_autocast_rule("inner")
def inner(input: Tensor, other: Tensor) -> Tensor:
    """Dot products over the last dims (a scalar times a tensor for 0-d inputs).

    >>> import ember
    >>> ember.inner(ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
    tensor(11.)
    """
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise ShapeError(
            f"inner: last dimensions must match, got shapes {tuple(input.shape)} and "
            f"{tuple(other.shape)}"
        )
    return tensordot(input, other, ([-1], [-1]))


@_autocast_rule("mv")
def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix times vector.

    >>> import ember
    >>> ember.mv(ember.eye(2), ember.tensor([1.0, 2.0]))
    tensor([1., 2.])
    """
    if input.ndim != 2 or vec.ndim != 1:
        raise ShapeError(
            f"mv: expected a matrix and a vector, got shapes {tuple(input.shape)} and "
            f"{tuple(vec.shape)}"
        )
    return input @ vec


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The 3-D cross product along ``dim`` (default: the first dim of size 3).

    >>> import ember
    >>> ember.cross(ember.tensor([1.0, 0.0, 0.0]), ember.tensor([0.0, 1.0, 0.0]))
    tensor([0., 0., 1.])
    """
    a, b = broadcast_tensors(input, other)
    if dim is None:
        sizes = [i for i, s in enumerate(a.shape) if s == 3]
        if not sizes:
            raise ShapeError(f"cross: no dimension of size 3 in shape {tuple(a.shape)}")
        dim = sizes[0]
    d = wrap_dim(dim, a.ndim, "cross")
    if a.shape[d] != 3:
        raise ShapeError(
            f"cross: dimension {dim} does not have size 3 (shapes {tuple(input.shape)} and "
            f"{tuple(other.shape)})"
        )
    a0, a1, a2 = (a.narrow(d, i, 1) for i in range(3))
    b0, b1, b2 = (b.narrow(d, i, 1) for i in range(3))
    return _cat([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


@_autocast_rule("baddbmm")
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)`` for batches of matrices.

    >>> import ember
    >>> ember.baddbmm(ember.zeros(1, 2, 2), ember.ones(1, 2, 3), ember.ones(1, 3, 2))[0, 0]
    tensor([3., 3.])
    """
    from .linalg import bmm

    return _scaled_sum(input, bmm(batch1, batch2), beta, alpha)


def _scaled_sum(input: Tensor, product: Tensor, beta, alpha) -> Tensor:
    out = product if alpha == 1 else product * alpha
    if beta == 0:  # PyTorch ignores input (even nan/inf) when beta is 0
        return out.expand(*broadcast_shapes("addmm", tuple(input.shape), tuple(out.shape)))
    return out + (input if beta == 1 else input * beta)


@_autocast_rule("addmv")
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``.

    >>> import ember
    >>> ember.addmv(ember.ones(2), ember.eye(2), ember.tensor([1.0, 2.0]))
    tensor([2., 3.])
    """
    return _scaled_sum(input, mv(mat, vec), beta, alpha)


@_autocast_rule("addr")
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``.

    >>> import ember
    >>> ember.addr(ember.zeros(2, 2), ember.tensor([1.0, 2.0]), ember.tensor([1.0, 1.0]))
    tensor([[1., 1.],
            [2., 2.]])
    """
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise ShapeError(
            f"addr: expected 1-D vectors, got shapes {tuple(vec1.shape)} and {tuple(vec2.shape)}"
        )
    return _scaled_sum(input, vec1.unsqueeze(1) * vec2.unsqueeze(0), beta, alpha)


def _pnorm(diff: Tensor, p: float, dim) -> Tensor:
    if p == float("inf"):
        return diff.abs().amax(dim)
    if p == 0:
        return (diff != 0).to(diff.dtype).sum(dim)
    if p == 1:
        return diff.abs().sum(dim)
    return (diff.abs() ** p).sum(dim) ** (1.0 / p)


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm of ``input - other``.

    >>> import ember
    >>> ember.dist(ember.tensor([3.0, 0.0]), ember.tensor([0.0, 4.0]))
    tensor(5.)
    """
    return _pnorm((input - other).reshape(-1), p, 0)


@_autocast_rule("cdist")
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode=None) -> Tensor:
    """Pairwise ``p``-norm distances between the rows of ``x1`` (…, P, M) and ``x2`` (…, R, M).

    >>> import ember
    >>> ember.cdist(ember.tensor([[0.0, 0.0]]), ember.tensor([[3.0, 4.0], [0.0, 1.0]]))
    tensor([[5., 1.]])
    """
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(
            f"cdist: expected (..., P, M) and (..., R, M) inputs with the same M, got shapes "
            f"{tuple(x1.shape)} and {tuple(x2.shape)}"
        )
    if p < 0:
        raise ShapeError(f"cdist: p must be non-negative, got {p}")
    return _pnorm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, -1)


__all__ = [
    "tril", "triu", "tril_indices", "triu_indices", "diagonal", "diag_embed", "diag",
    "diagflat", "trace", "broadcast_tensors", "meshgrid", "cartesian_prod", "combinations",
    "rot90", "kron", "block_diag", "column_stack", "tensordot", "inner", "mv", "cross",
    "baddbmm", "addmv", "addr", "dist", "cdist",
]  # fmt: skip

_NOT_METHODS = {
    "tril_indices", "triu_indices", "broadcast_tensors", "meshgrid", "cartesian_prod",
    "combinations", "block_diag", "column_stack", "tensordot", "cdist",
}  # fmt: skip

TENSOR_METHODS = {name: globals()[name] for name in __all__ if name not in _NOT_METHODS}
TENSOR_METHODS.update(tril_=tril_, triu_=triu_)
