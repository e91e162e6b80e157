"""Reduction primitives: sum, prod, amax/amin, max/min along a dim, arg-reductions, cumulative
sums and products, the positions of cummax / cummin and of mode, all/any.

Composites built on these live in ``ember.functions.reduce`` (mean, var, std, logsumexp, norm).
Axes are normalized by the public functions: a sorted tuple of non-negative dims, or None for
all of them.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(Sum((1,), False), ember.ones(2, 3))
tensor([3., 3.])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import dtypes as _dt
from .._errors import EmberError, EmberIndexError
from ..backend.kernels import rows as _rows
from ..backend.kernels import sums as _sums
from ..backend.overrides import register
from .base import Op, Spec, apply
from .broadcast import expand
from .elementwise import ADD, DIV, MUL, SUB, const_like
from .movement import Permute, reshape


def reduced_shape(shape: tuple, axis: tuple | None, keepdim: bool) -> tuple:
    """``shape`` with ``axis`` (normalized, or None for all) removed or kept as 1."""
    if axis is None:
        return tuple(1 for _ in shape) if keepdim else ()
    if keepdim:
        return tuple(1 if i in axis else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axis)


def keepdim_shape(shape: tuple, axis: tuple | None) -> tuple:
    return reduced_shape(shape, axis, True)


def check_nonempty(op: str, shape: tuple, axis: tuple | None) -> None:
    """Reductions without an identity (max, argmax...) refuse empty reductions, as PyTorch."""
    if axis is None:
        if 0 in shape:
            raise EmberError(
                f"{op}(): Expected reduction dim to be specified for input.numel() == 0 "
                f"(input shape {shape}). Specify the reduction dim with the 'dim' argument."
            )
        return
    for d in axis:
        if shape and shape[d] == 0:
            raise EmberIndexError(
                f"{op}(): Expected reduction dim {d} to have non-zero size (input shape {shape})."
            )


# -- sum --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sum(Op):
    """Sum over ``axis`` (a tuple of non-negative dims, or None for all)."""

    axis: tuple | None = None
    keepdim: bool = False

    @property
    def node_name(self) -> str:  # PyTorch's sum() and sum(dim) overloads
        return "SumBackward0" if self.axis is None else "SumBackward1"

    def forward(self, xp, x):
        w = _dt.widen_half(x)
        return w.sum(axis=self.axis, keepdims=self.keepdim).astype(x.dtype, copy=False)

    def infer(self, x):
        return Spec(reduced_shape(tuple(x.shape), self.axis, self.keepdim), x.dtype)

    def vjp(self, g, out, x):
        shape = tuple(x.shape)
        if not self.keepdim:
            g = reshape(g, keepdim_shape(shape, self.axis))
        return (expand(g, shape),)


@register(Sum, "cuda")
def _sum_cuda(op, xp, x):
    out = _sums.leading_sum(xp, x, op.axis, op.keepdim)
    if out is NotImplemented and op.axis == (x.ndim - 1,):
        out = _rows.row_sum(xp, x, op.keepdim)
    return out


def sum_(x, axis: tuple | None = None, keepdim: bool = False):
    return apply(Sum(axis, keepdim), x)


# -- prod -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prod(Op):
    """Product over one dim (``axis`` an int) or all elements (None).

    The gradient is ``g * (product of the other elements)``, computed by ``ProdOthers`` without
    dividing by the input, so it is right where the input holds zeros (as PyTorch's is).
    """

    axis: int | None = None
    keepdim: bool = False
    saves_inputs = True

    def forward(self, xp, x):
        return x.prod(axis=self.axis, keepdims=self.keepdim)

    def infer(self, x):
        axis = None if self.axis is None else (self.axis,)
        return Spec(reduced_shape(tuple(x.shape), axis, self.keepdim), x.dtype)

    def vjp(self, g, out, x):
        shape = tuple(x.shape)
        if self.axis is None:
            others = reshape(prod_others(reshape(x, (math.prod(shape),))), shape)
        else:
            perm = _to_last(len(shape), self.axis)
            moved = prod_others(apply(Permute(perm), x))
            others = apply(Permute(_inverse(perm)), moved)
        axis = None if self.axis is None else (self.axis,)
        return (apply(MUL, reshape(g, keepdim_shape(shape, axis)), others),)


def _to_last(ndim: int, axis: int) -> tuple:
    return tuple(d for d in range(ndim) if d != axis) + (axis,)


def _inverse(perm: tuple) -> tuple:
    inv = [0] * len(perm)
    for i, d in enumerate(perm):
        inv[d] = i
    return tuple(inv)


@dataclass(frozen=True)
class ProdOthers(Op):
    """``out[..., i] = prod_{j != i} x[..., j]`` over the last axis, by exclusive cumulative
    products from both ends (no division, so zeros are fine). The vjp of ``Prod``.

    Its own vjp writes row ``i`` of an ``n x n`` matrix ``M`` with ``x`` off the diagonal and 1
    on it, so that ``d out_i / d x_k = ProdOthers(M)[i, k]`` for ``i != k``: exact with zeros and
    differentiable again, at ``n``-fold memory (only second-order gradients of prod pay it).
    """

    saves_inputs = True

    def forward(self, xp, x):
        if x.shape[-1] == 0:
            return x.copy()
        ones = xp.ones(x.shape[:-1] + (1,), dtype=x.dtype)
        left = xp.concatenate([ones, xp.cumprod(x[..., :-1], axis=-1)], axis=-1)
        right = xp.concatenate([xp.cumprod(x[..., :0:-1], axis=-1)[..., ::-1], ones], axis=-1)
        return left * right

    def infer(self, x):
        return Spec(tuple(x.shape), x.dtype)

    def vjp(self, h, out, x):
        shape = tuple(x.shape)
        n = shape[-1]
        xp = x.device.xp
        eye = const_like(x, xp.eye(n))
        off = const_like(x, 1 - xp.eye(n))
        rows = apply(ADD, apply(MUL, reshape(x, shape[:-1] + (1, n)), off), eye)
        p = prod_others(rows)  # p[..., i, k] = prod over j != i, k of x_j (for i != k)
        weighted = apply(MUL, apply(MUL, reshape(h, shape + (1,)), off), p)
        return (apply(Sum((len(shape) - 1,), False), weighted),)


def prod_others(x):
    return apply(PROD_OTHERS, x)


PROD_OTHERS = ProdOthers()


# -- amax / amin / max / min ------------------------------------------------------------------


@dataclass(frozen=True)
class Amax(Op):
    """Largest (``is_min``: smallest) element over ``axis``; the gradient is shared evenly
    among the elements that tie for it (as PyTorch's amax and max() do)."""

    axis: tuple | None = None
    keepdim: bool = False
    is_min: bool = False
    saves_inputs = True
    saves_output = True

    @property
    def node_name(self) -> str:  # over all elements: max() / min(); over dims: amax / amin
        if self.axis is None:
            return "MinBackward1" if self.is_min else "MaxBackward1"
        return "AminBackward0" if self.is_min else "AmaxBackward0"

    def forward(self, xp, x):
        if self.is_min:
            return x.min(axis=self.axis, keepdims=self.keepdim)
        return x.max(axis=self.axis, keepdims=self.keepdim)

    def infer(self, x):
        check_nonempty("amin" if self.is_min else "amax", tuple(x.shape), self.axis)
        return Spec(reduced_shape(tuple(x.shape), self.axis, self.keepdim), x.dtype)

    def vjp(self, g, out, x):
        ks = keepdim_shape(tuple(x.shape), self.axis)
        weights = apply(TieWeights(self.axis), x, reshape(out, ks))
        return (apply(MUL, reshape(g, ks), weights),)


@dataclass(frozen=True)
class TieWeights(Op):
    """``(x == m) / count`` along ``axis``: how a max/min's gradient is shared among ties."""

    axis: tuple | None = None
    differentiable = False

    def forward(self, xp, x, m):
        mask = (x == m).astype(x.dtype)
        return mask / mask.sum(axis=self.axis, keepdims=True)

    def infer(self, x, m):
        return Spec(tuple(x.shape), x.dtype)


@dataclass(frozen=True)
class SelectArg(Op):
    """The value at the first largest (``is_min``: smallest) position along ``dim``: the
    ``values`` of ``max(x, dim)``. The gradient goes to that position only, as in PyTorch."""

    dim: int
    keepdim: bool = False
    is_min: bool = False
    saves_inputs = True

    @property
    def node_name(self) -> str:  # max(x, dim) / min(x, dim)
        return "MinBackward0" if self.is_min else "MaxBackward0"

    def forward(self, xp, x):
        if x.ndim == 0:
            return x.copy()
        idx = _arg(xp, x, self.dim, True, self.is_min)
        v = xp.take_along_axis(x, idx, axis=self.dim)
        return v if self.keepdim else v.squeeze(self.dim)

    def infer(self, x):
        check_nonempty("min" if self.is_min else "max", tuple(x.shape), (self.dim,))
        axis = (self.dim,) if x.ndim else None
        return Spec(reduced_shape(tuple(x.shape), axis, self.keepdim), x.dtype)

    def vjp(self, g, out, x):
        if x.ndim == 0:
            return (g,)
        onehot = apply(ArgOneHot(self.dim, self.is_min), x)
        return (apply(MUL, reshape(g, keepdim_shape(tuple(x.shape), (self.dim,))), onehot),)


@dataclass(frozen=True)
class ArgOneHot(Op):
    """1 at the first arg-max (arg-min) along ``dim``, 0 elsewhere, in ``x``'s dtype."""

    dim: int
    is_min: bool = False
    differentiable = False

    def forward(self, xp, x):
        idx = _arg(xp, x, self.dim, True, self.is_min)
        place = [1] * x.ndim
        place[self.dim] = x.shape[self.dim]
        return (xp.arange(x.shape[self.dim]).reshape(place) == idx).astype(x.dtype)

    def infer(self, x):
        return Spec(tuple(x.shape), x.dtype)


def _arg(xp, x, dim, keepdim, is_min):
    f = xp.argmin if is_min else xp.argmax
    idx = f(x, axis=dim)
    return xp.expand_dims(idx, dim) if keepdim else idx


@dataclass(frozen=True)
class ArgReduce(Op):
    """argmax (``is_min``: argmin) along ``dim``, or of the flattened input when ``dim`` is None
    (``keepdim`` then gives all-ones dims, as PyTorch). First occurrence wins; NaN counts as the
    extreme, as in PyTorch."""

    dim: int | None = None
    keepdim: bool = False
    is_min: bool = False
    differentiable = False

    def forward(self, xp, x):
        if self.dim is None or x.ndim == 0:
            idx = _arg(xp, x.reshape(-1), 0, False, self.is_min)
            shape = (1,) * x.ndim if self.keepdim else ()
            return xp.asarray(idx, dtype=xp.int64).reshape(shape)
        return _arg(xp, x, self.dim, self.keepdim, self.is_min).astype(xp.int64, copy=False)

    def infer(self, x):
        op = "argmin" if self.is_min else "argmax"
        axis = None if self.dim is None or x.ndim == 0 else (self.dim,)
        check_nonempty(op, tuple(x.shape), axis)
        return Spec(reduced_shape(tuple(x.shape), axis, self.keepdim), _dt.int64)


# -- cumulative -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cumsum(Op):
    """Cumulative sum along ``dim`` (``reverse``: from the end); each direction's vjp is the
    other's."""

    dim: int
    reverse: bool = False

    def forward(self, xp, x):
        if x.ndim == 0:
            return x.copy()
        w = _dt.widen_half(x)
        if self.reverse:
            idx = (slice(None),) * self.dim + (slice(None, None, -1),)
            return xp.cumsum(w[idx], axis=self.dim)[idx].astype(x.dtype, copy=False)
        return xp.cumsum(w, axis=self.dim).astype(x.dtype, copy=False)

    def infer(self, x):
        return Spec(tuple(x.shape), x.dtype)

    def vjp(self, g, out, x):
        return (apply(Cumsum(self.dim, not self.reverse), g),)


# Above this many elements in the (n x n x rest) matrix of cumprod's exact gradient, use the
# cheaper formula that divides by the input (wrong where the input holds zeros).
CUMPROD_EXACT_LIMIT = 1 << 22


@dataclass(frozen=True)
class Cumprod(Op):
    """Cumulative product along ``dim``.

    vjp: ``y_i = prod_j M_ij`` with ``M_ij = x_j`` for ``j <= i`` and 1 above the diagonal, so the
    gradient is ``Prod``'s (through ``ProdOthers``): exact with zeros and differentiable again,
    at ``n``-fold memory. Past ``CUMPROD_EXACT_LIMIT`` it uses ``revcumsum(g * y) / x``.
    """

    dim: int
    saves_inputs = True
    saves_output = True

    def forward(self, xp, x):
        if x.ndim == 0:
            return x.copy()
        return xp.cumprod(x, axis=self.dim)

    def infer(self, x):
        return Spec(tuple(x.shape), x.dtype)

    def vjp(self, g, out, x):
        if x.ndim == 0:
            return (g,)
        shape = tuple(x.shape)
        n = shape[self.dim]
        if math.prod(shape) * n > CUMPROD_EXACT_LIMIT:
            return (apply(DIV, apply(Cumsum(self.dim, True), apply(MUL, g, out)), x),)
        xp = x.device.xp
        perm = _to_last(len(shape), self.dim)
        xt = apply(Permute(perm), x)
        gt = apply(Permute(perm), g)
        tshape = tuple(xt.shape)
        lower = const_like(x, xp.tri(n))
        upper = const_like(x, 1 - xp.tri(n))
        rows = apply(ADD, apply(MUL, reshape(xt, tshape[:-1] + (1, n)), lower), upper)
        d_rows = apply(MUL, reshape(gt, tshape + (1,)), prod_others(rows))
        gx = apply(Sum((len(shape) - 1,), False), apply(MUL, d_rows, lower))
        return (apply(Permute(_inverse(perm)), gx),)


def _running(xp, a, take_min: bool):
    """The running max (``take_min``: min) of ``a`` along its last axis, NaN propagating: a
    log2(n)-step doubling scan of ``maximum`` / ``minimum`` (CuPy has no ``accumulate`` for
    them)."""
    f = xp.minimum if take_min else xp.maximum
    n, k = a.shape[-1], 1
    while k < n:
        a = xp.concatenate([a[..., :k], f(a[..., k:], a[..., :-k])], axis=-1)
        k *= 2
    return a


@dataclass(frozen=True)
class CumArgExtreme(Op):
    """Where the running max (``is_min``: min) along ``dim`` was taken, the latest position on
    ties, a NaN's position once one is met: the ``indices`` of ``cummax`` / ``cummin``, whose
    values are a ``gather`` at them (so the gradient goes to those positions, as PyTorch's)."""

    dim: int
    is_min: bool = False
    differentiable = False

    def forward(self, xp, x):
        a = xp.moveaxis(x, self.dim, -1)
        if a.size == 0:
            return xp.zeros(x.shape, dtype=xp.int64)
        best = _running(xp, a, self.is_min)
        hit = (a == best) | (a != a)  # a record, or a NaN (which then stays the extreme)
        positions = xp.arange(a.shape[-1], dtype=xp.int64)
        index = _running(xp, xp.where(hit, positions, 0), False)
        return xp.ascontiguousarray(xp.moveaxis(index, -1, self.dim))

    def infer(self, x):
        return Spec(tuple(x.shape), _dt.int64)


@dataclass(frozen=True)
class ModeIndex(Op):
    """Where the most frequent value along ``dim`` was last seen (the smallest such value on
    ties; NaNs count as distinct), with ``dim`` kept as size 1: the ``indices`` of ``mode``,
    whose values are a ``gather`` at them (so the gradient goes to that position)."""

    dim: int
    differentiable = False

    def forward(self, xp, x):
        a = xp.moveaxis(x, self.dim, -1)
        n = a.shape[-1]
        order = xp.argsort(a, axis=-1, kind="stable")  # equal values: original order
        s = xp.take_along_axis(a, order, axis=-1)
        first = xp.ones(a.shape[:-1] + (1,), dtype=bool)
        starts = xp.concatenate([first, s[..., 1:] != s[..., :-1]], axis=-1)
        positions = xp.arange(n, dtype=xp.int64)
        run = positions - _running(xp, xp.where(starts, positions, 0), False)
        # the end of the first longest run: the smallest most frequent value, at its last index
        end = xp.expand_dims(xp.argmax(run, axis=-1), -1)
        index = xp.take_along_axis(order, end, axis=-1).astype(xp.int64)
        return xp.ascontiguousarray(xp.moveaxis(index, -1, self.dim))

    def infer(self, x):
        check_nonempty("mode", tuple(x.shape), (self.dim,))
        return Spec(keepdim_shape(tuple(x.shape), (self.dim,)), _dt.int64)


# -- all / any --------------------------------------------------------------------------------


@dataclass(frozen=True)
class AllAny(Op):
    """Logical all (``is_any``: any) over ``axis``: bool, or uint8 for uint8 input (PyTorch)."""

    axis: tuple | None = None
    keepdim: bool = False
    is_any: bool = False
    differentiable = False

    def forward(self, xp, x):
        f = xp.any if self.is_any else xp.all
        out = f(x, axis=self.axis, keepdims=self.keepdim)
        return out.astype(xp.uint8) if x.dtype == xp.uint8 else out

    def infer(self, x):
        dt = _dt.uint8 if x.dtype is _dt.uint8 else _dt.bool_
        return Spec(reduced_shape(tuple(x.shape), self.axis, self.keepdim), dt)


# -- helpers for composites -------------------------------------------------------------------


@dataclass(frozen=True)
class SignConst(Op):
    """sign(x) in x's dtype, as a constant (its derivative is 0 almost everywhere): used to
    write |x| = x * sign(x) so that the gradient of |x| at 0 is 0, as PyTorch's."""

    differentiable = False

    def forward(self, xp, x):
        return xp.sign(x)

    def infer(self, x):
        return Spec(tuple(x.shape), x.dtype)


@dataclass(frozen=True)
class SafeRoot(Op):
    """``s ** (1 / p)`` for ``s >= 0`` whose gradient is 0 (not inf) where ``s == 0``: the last
    step of a p-norm or a std, where PyTorch masks the gradient at 0 the same way."""

    p: float = 2.0
    saves_inputs = True
    saves_output = True

    def forward(self, xp, s):
        if self.p == 2:
            return xp.sqrt(s)
        return xp.power(s, xp.asarray(1.0 / self.p, dtype=s.dtype))

    def infer(self, s):
        return Spec(tuple(s.shape), s.dtype)

    def vjp(self, g, out, s):
        nonzero = apply(SignConst(), s)
        one = const_like(s, 1)
        safe = apply(ADD, s, apply(SUB, one, nonzero))  # 1 where s == 0
        scale = apply(MUL, const_like(s, 1.0 / self.p), apply(MUL, nonzero, out))
        return (apply(MUL, g, apply(DIV, scale, safe)),)


@dataclass(frozen=True)
class LseShift(Op):
    """The (constant) shift that keeps logsumexp stable: the max over ``axis`` (kept dims),
    with infinities and empty reductions replaced by 0, as PyTorch does."""

    axis: tuple | None = None
    differentiable = False

    def forward(self, xp, x):
        ks = keepdim_shape(x.shape, self.axis)
        if x.size == 0:
            return xp.zeros(ks, dtype=x.dtype)
        m = x.max(axis=self.axis, keepdims=True)
        return xp.where(xp.isfinite(m), m, 0).astype(x.dtype)

    def infer(self, x):
        return Spec(keepdim_shape(tuple(x.shape), self.axis), x.dtype)


__all__ = [
    "Sum",
    "Prod",
    "Amax",
    "SelectArg",
    "ArgReduce",
    "Cumsum",
    "Cumprod",
    "CumArgExtreme",
    "ModeIndex",
    "AllAny",
]
