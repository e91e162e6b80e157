"""Reductions: sum, mean, prod, max/min, amax/amin, argmax/argmin, var/std, logsumexp, norm,
cumsum/cumprod, all/any.

``dim`` is an int, a tuple of ints (negative ones count from the end) or None for every
dimension; ``keepdim=True`` keeps reduced dimensions with size 1. Result dtypes follow PyTorch:
integer and bool sums and products are int64, mean/var/std/norm want floating input.

>>> import ember
>>> ember.sum(ember.ones(2, 3), dim=1)
tensor([3., 3.])
"""

from __future__ import annotations

import builtins
import math

from .. import dtypes as _dt
from .. import return_types as RT
from .._errors import DTypeError, EmberError
from .._node import named
from .._shape import wrap_dim
from .._tensor import Tensor
from ..amp.autocast_mode import rule as _autocast_rule
from ..ops import elementwise as E
from ..ops import reduce as R
from ..ops.base import apply
from ..ops.movement import reshape as _reshape
from ._promote import to_float

_SUM_ALL = R.Sum(None, False)


def normalize_dims(dim, ndim: int, op: str) -> tuple | None:
    """``dim`` (int, sequence or None) as a sorted tuple of non-negative dims, or None for all.

    >>> normalize_dims((-1, 0), 3, "sum")
    (0, 2)
    """
    if dim is None:
        return None
    if isinstance(dim, int):
        d = wrap_dim(dim, ndim, op)
        return (d,) if ndim else None
    dims = [wrap_dim(d, ndim, op) for d in dim]
    if len(set(dims)) != len(dims):
        twice = next(d for d in dims if dims.count(d) > 1)
        raise EmberError(f"{op}: dim {twice} appears multiple times in the list of dims {dim}")
    if not dims or not ndim:
        return None
    return tuple(sorted(dims))


def _count(shape: tuple, axis: tuple | None) -> int:
    return math.prod(shape) if axis is None else math.prod(shape[d] for d in axis)


def _int_to_long(x: Tensor, dtype) -> Tensor:
    """The input of sum/prod/cumsum: cast to ``dtype``, or ints and bools to int64."""
    if dtype is not None:
        return E.cast(x, _dt.to_dtype(dtype))
    if x._data.dtype.kind in "biu":
        return E.cast(x, _dt.int64)
    return x


def _floating(x: Tensor, op: str, dtype=None) -> Tensor:
    if dtype is not None:
        x = E.cast(x, _dt.to_dtype(dtype))
    if not x.dtype.is_floating_point:
        raise DTypeError(
            f"{op}(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {x.dtype} (pass dtype=, e.g. ember.float32)"
        )
    return x


def _scale(s: Tensor, n) -> Tensor:
    """``s / n`` for a Python number ``n`` (NaN or inf, silently, where ``n`` is 0)."""
    if n == 0:
        return apply(E.MUL, s, E.const_like(s, math.nan))
    return apply(E.DIV, s, E.const_like(s, n))


def _abs(x: Tensor) -> Tensor:
    return apply(E.MUL, x, apply(R.SignConst(), x))  # gradient sign(x), 0 at 0 as in PyTorch


# -- sums and products ------------------------------------------------------------------------


@_autocast_rule("sum")
def sum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Sum of elements over ``dim`` (all when None); bool and integer inputs sum as int64.

    >>> import ember
    >>> ember.sum(ember.tensor([[1, 2], [3, 4]]))
    tensor(10)
    >>> ember.tensor([[1.0, 2.0], [3.0, 4.0]]).sum(-1, keepdim=True)
    tensor([[3.],
            [7.]])
    """
    if dim is None and dtype is None and not keepdim and input._data.dtype.kind == "f":
        return apply(_SUM_ALL, input)  # the hot path: loss = (...).sum()
    x = _int_to_long(input, dtype)
    return apply(R.Sum(normalize_dims(dim, x.ndim, "sum"), keepdim), x)


@_autocast_rule("mean")
def mean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Mean over ``dim``; floating inputs only (or pass ``dtype=``), as PyTorch.

    >>> import ember
    >>> ember.mean(ember.tensor([[1.0, 2.0], [3.0, 4.0]]), dim=0)
    tensor([2., 3.])
    """
    x = _floating(input, "mean", dtype)
    axis = normalize_dims(dim, x.ndim, "mean")
    s = apply(R.Sum(axis, keepdim), x)
    return named(_scale(s, _count(tuple(x.shape), axis)), f"MeanBackward{int(dim is not None)}")


@_autocast_rule("prod")
def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Product of elements over one ``dim`` (all when None); ints and bools give int64. The
    gradient is right where the input holds zeros.

    >>> import ember
    >>> ember.prod(ember.tensor([[1.0, 2.0], [3.0, 4.0]]), 1)
    tensor([ 2., 12.])
    """
    x = _int_to_long(input, dtype)
    if dim is not None and not isinstance(dim, int):
        raise DTypeError(f"prod: dim must be an int or None, got {type(dim).__name__}")
    axis = None
    if dim is not None:
        axis = wrap_dim(dim, x.ndim, "prod")
        if x.ndim == 0:  # dim 0 / -1 of a 0-d tensor: the whole (single-element) tensor
            axis = None
    return apply(R.Prod(axis, keepdim), x)


@_autocast_rule("cumsum")
def cumsum(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Running sum along ``dim``; ints and bools accumulate as int64.

    >>> import ember
    >>> ember.cumsum(ember.tensor([1, 2, 3]), 0)
    tensor([1, 3, 6])
    """
    x = _int_to_long(input, dtype)
    return apply(R.Cumsum(wrap_dim(dim, x.ndim, "cumsum")), x)


@_autocast_rule("cumprod")
def cumprod(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Running product along ``dim``; ints and bools accumulate as int64. The gradient is right
    where the input holds zeros.

    >>> import ember
    >>> ember.cumprod(ember.tensor([1.0, 2.0, 3.0]), 0)
    tensor([1., 2., 6.])
    """
    x = _int_to_long(input, dtype)
    return apply(R.Cumprod(wrap_dim(dim, x.ndim, "cumprod")), x)


# -- max / min --------------------------------------------------------------------------------


def _extreme(input: Tensor, dim, keepdim: bool, is_min: bool, op: str):
    if isinstance(dim, Tensor):  # max(input, other) is maximum(input, other), as in PyTorch
        from .elementwise import maximum, minimum

        return (minimum if is_min else maximum)(input, dim)
    if dim is None:
        if keepdim:
            raise DTypeError(f"{op}(): keepdim=True needs a dim")
        R.check_nonempty(op, tuple(input.shape), None)  # named max(), not amax()
        return apply(R.Amax(None, False, is_min), input)
    d = wrap_dim(dim, input.ndim, op)
    values = apply(R.SelectArg(d, keepdim, is_min), input)
    indices = apply(R.ArgReduce(d, keepdim, is_min), input)
    return (RT.min if is_min else RT.max)(values, indices)


def max(input: Tensor, dim=None, keepdim: bool = False):
    """The largest element; with ``dim``, a ``(values, indices)`` named tuple along it.

    Without ``dim`` the gradient is shared evenly among tied maxima; with ``dim`` it goes to
    the returned index (the first maximum), as in PyTorch. ``max(a, b)`` with a tensor ``b``
    is ``ember.maximum(a, b)``.

    >>> import ember
    >>> x = ember.tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> ember.max(x)
    tensor(7.)
    >>> x.max(dim=1)
    ember.return_types.max(
    values=tensor([5., 7.]),
    indices=tensor([1, 0]))
    """
    return _extreme(input, dim, keepdim, False, "max")


def min(input: Tensor, dim=None, keepdim: bool = False):
    """The smallest element; with ``dim``, a ``(values, indices)`` named tuple (see ``max``).

    >>> import ember
    >>> ember.tensor([[1.0, 5.0], [7.0, 2.0]]).min(0).indices
    tensor([0, 1])
    """
    return _extreme(input, dim, keepdim, True, "min")


def amax(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """Largest elements over ``dim`` (all when empty or None); the gradient is shared evenly
    among ties.

    >>> import ember
    >>> ember.amax(ember.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=0)
    tensor([7., 5.])
    """
    return apply(R.Amax(normalize_dims(dim, input.ndim, "amax"), keepdim, False), input)


def amin(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """Smallest elements over ``dim`` (all when empty or None); ties share the gradient.

    >>> import ember
    >>> ember.amin(ember.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=1)
    tensor([1., 2.])
    """
    return apply(R.Amax(normalize_dims(dim, input.ndim, "amin"), keepdim, True), input)


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index (int64) of the first largest element along ``dim``, or in the flattened input.

    >>> import ember
    >>> ember.argmax(ember.tensor([[1.0, 5.0], [7.0, 2.0]])), ember.argmax(ember.tensor([3, 9]), 0)
    (tensor(2), tensor(1))
    """
    d = None if dim is None else wrap_dim(dim, input.ndim, "argmax")
    return apply(R.ArgReduce(d, keepdim, False), input)


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index (int64) of the first smallest element along ``dim``, or in the flattened input.

    >>> import ember
    >>> ember.argmin(ember.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=1, keepdim=True)
    tensor([[0],
            [1]])
    """
    d = None if dim is None else wrap_dim(dim, input.ndim, "argmin")
    return apply(R.ArgReduce(d, keepdim, True), input)


# -- statistics -------------------------------------------------------------------------------


def _correction(op: str, unbiased, correction) -> float:
    if unbiased is not None and correction is not None:
        raise EmberError(f"{op}: pass either unbiased= or correction=, not both")
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


@_autocast_rule("var")
def var(
    input: Tensor,
    dim=None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: float | None = None,
) -> Tensor:
    """Variance over ``dim``, dividing by ``N - correction`` (default 1, Bessel's correction;
    the legacy ``unbiased=False`` means 0). Floating inputs only.

    >>> import ember
    >>> ember.var(ember.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor(1.6667)
    >>> ember.tensor([1.0, 2.0, 3.0, 4.0]).var(correction=0)
    tensor(1.2500)
    """
    if isinstance(dim, bool):  # legacy var(input, unbiased)
        dim, unbiased = None, dim
    x = input
    if not x.dtype.is_floating_point:
        raise DTypeError(f"var: std and var only support floating point dtypes, got {x.dtype}")
    c = _correction("var", unbiased, correction)
    axis = normalize_dims(dim, x.ndim, "var")
    n = _count(tuple(x.shape), axis)
    mu = _scale(apply(R.Sum(axis, True), x), n)
    d = apply(E.SUB, x, mu)
    ss = apply(R.Sum(axis, keepdim), apply(E.MUL, d, d))
    dof = builtins.max(0, n - c)
    if dof == 0:
        return apply(E.MUL, ss, E.const_like(ss, math.inf))  # PyTorch: inf (NaN for 0 / 0)
    return named(apply(E.DIV, ss, E.const_like(ss, dof)), "VarBackward0")


@_autocast_rule("std")
def std(
    input: Tensor,
    dim=None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: float | None = None,
) -> Tensor:
    """Standard deviation: the square root of ``var`` (same arguments). The gradient where it
    is 0 is 0, as in PyTorch.

    >>> import ember
    >>> ember.std(ember.tensor([[1.0, 3.0], [2.0, 2.0]]), dim=1)
    tensor([1.4142, 0.0000])
    """
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    v = var(input, dim, unbiased, keepdim, correction=correction)
    return named(apply(R.SafeRoot(2.0), v), "StdBackward0")


@_autocast_rule("logsumexp")
def logsumexp(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input)))`` over ``dim``, computed stably (shifted by the maximum); integer
    inputs become floats.

    >>> import ember
    >>> ember.logsumexp(ember.tensor([0.0, 0.0]), dim=0)
    tensor(0.6931)
    >>> round(ember.logsumexp(ember.tensor([1000.0, 1000.0]), dim=0).item() - 1000, 4)
    0.6932
    """
    x = to_float(input)
    axis = normalize_dims(dim, x.ndim, "logsumexp")
    m = apply(R.LseShift(axis), x)
    s = apply(R.Sum(axis, True), apply(E.Exp(), apply(E.SUB, x, m)))
    out = apply(E.ADD, apply(E.Log(), s), m)
    if not keepdim:
        out = _reshape(out, R.reduced_shape(tuple(x.shape), axis, False))
    return out


@_autocast_rule("norm")
def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """Vector p-norm over ``dim`` (all elements when None): ``p`` is ``'fro'`` or 2 (default),
    1, ``inf``, ``-inf``, 0 (count of non-zeros) or any other number. The gradient at 0 is 0,
    as in PyTorch.

    >>> import ember
    >>> ember.norm(ember.tensor([3.0, 4.0]))
    tensor(5.)
    >>> ember.tensor([[1.0, -2.0], [3.0, 0.0]]).norm(p=1, dim=1)
    tensor([3., 3.])
    """
    x = input
    if dtype is not None:
        x = E.cast(x, _dt.to_dtype(dtype))
    if not x.dtype.is_floating_point:
        raise DTypeError(f"norm: expected a floating point tensor as input, got {x.dtype}")
    axis = normalize_dims(dim, x.ndim, "norm")
    return named(_vector_norm(x, p, axis, keepdim), "LinalgVectorNormBackward0")


def _vector_norm(x: Tensor, p, axis, keepdim: bool) -> Tensor:
    if p is None or p == "fro" or p == 2:
        return apply(R.SafeRoot(2.0), apply(R.Sum(axis, keepdim), apply(E.MUL, x, x)))
    if isinstance(p, str):
        raise EmberError(f"norm: p={p!r} is not supported (use 'fro' or a number)")
    if p == math.inf or p == -math.inf:
        return apply(R.Amax(axis, keepdim, p < 0), _abs(x))
    if p == 0:  # the count of non-zeros; x * 0 keeps a (zero) gradient, as PyTorch gives
        sign = apply(R.SignConst(), x)
        nonzero = apply(E.MUL, sign, sign)
        zero = apply(E.MUL, x, E.const_like(x, 0))
        return apply(R.Sum(axis, keepdim), apply(E.ADD, zero, nonzero))
    if p == 1:
        return apply(R.Sum(axis, keepdim), _abs(x))
    powered = apply(E.POW, _abs(x), E.const_like(x, p))
    return apply(R.SafeRoot(float(p)), apply(R.Sum(axis, keepdim), powered))


# -- logical ----------------------------------------------------------------------------------


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """``input`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled
    down to norm ``maxnorm`` (by ``maxnorm / (norm + 1e-7)``, as PyTorch).

    >>> import ember
    >>> ember.renorm(ember.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    from ..linalg import vector_norm

    if input.ndim < 2:
        raise EmberError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    if p <= 0:
        raise EmberError(f"renorm: non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise EmberError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if not input.dtype.is_floating_point:
        raise DTypeError(f"renorm: expected a floating point input, got {input.dtype}")
    d = wrap_dim(dim, input.ndim, "renorm")
    others = tuple(k for k in range(input.ndim) if k != d)
    wide = _dt.promote_types(input.dtype, _dt.float32)
    norm = vector_norm(input, p, others, keepdim=True, dtype=wide)
    factor = E.where(norm > maxnorm, maxnorm / (norm + 1e-7), E.const_like(norm, 1))
    return (input * factor).to(input.dtype)


def all(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Whether every element (along ``dim``) is non-zero: bool (uint8 for uint8 input).

    >>> import ember
    >>> ember.all(ember.tensor([[True, False], [True, True]]), dim=1)
    tensor([False,  True])
    """
    return apply(R.AllAny(normalize_dims(dim, input.ndim, "all"), keepdim, False), input)


def any(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Whether any element (along ``dim``) is non-zero: bool (uint8 for uint8 input).

    >>> import ember
    >>> ember.tensor([0, 0, 3]).any()
    tensor(True)
    """
    return apply(R.AllAny(normalize_dims(dim, input.ndim, "any"), keepdim, True), input)


__all__ = [
    "sum",
    "mean",
    "prod",
    "cumsum",
    "cumprod",
    "max",
    "min",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "var",
    "std",
    "logsumexp",
    "norm",
    "renorm",
    "all",
    "any",
]
TENSOR_METHODS = {name: globals()[name] for name in __all__}
