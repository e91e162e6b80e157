"""Indexing: ``x[key]``, ``x[key] = value``, gather/scatter, index_select, masked_select.

Keys follow PyTorch: ints (negative ok), slices with positive steps, ``None``, ``...``, boolean
masks and integer index tensors / arrays / lists, in any combination. Like PyTorch, integers and
slices are applied first (a view of the input) and index tensors second (a copy), so mixing
them gives PyTorch's result shapes (``x[0, :, [0, 1]]`` has shape ``(n1, 2)``, not NumPy's
``(2, n1)``). Boolean masks become the integer indices of their nonzero elements.

>>> import ember
>>> x = ember.arange(12).reshape(3, 4)
>>> x[1], x[:, ::2].shape, x[[0, 2], -1], x[x > 9]
(tensor([4, 5, 6, 7]), ember.Size([3, 2]), tensor([ 3, 11]), tensor([10, 11]))
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

from .. import dtypes as _dt
from .._config import graph_tracer, state
from .._errors import DTypeError, EmberError, EmberIndexError, ShapeError
from .._shape import broadcast_shapes, wrap_dim
from .._tensor import Tensor
from ..backend import full, to_device
from ..ops import indexing as I
from ..ops.base import apply
from ..ops.broadcast import Expand
from ..ops.checks import CheckRange
from ..ops.elementwise import cast
from ..ops.movement import Reshape
from ._promote import scalar_tensor
from .inplace import apply_inplace

_FULL = I.FULL


class _Bool:
    """A Python/0-d boolean index: ``True`` adds a dimension of size 1, ``False`` of size 0."""

    __slots__ = ("value",)

    def __init__(self, value: bool) -> None:
        self.value = value


def _bad_index(op: str, k) -> EmberIndexError:
    return EmberIndexError(
        f"{op}: only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
        f"are valid indices (got {type(k).__name__})"
    )


def _classify(k, x: Tensor, op: str):
    """One non-trivial key item as an int, a ``_Bool``, ``("mask", t)`` or an index Tensor."""
    if isinstance(k, (np.integer,)):
        return int(k)
    if isinstance(k, np.bool_):
        return _Bool(bool(k))
    if isinstance(k, Tensor):
        t = k
    elif isinstance(k, np.ndarray):
        t = Tensor._make(k)
    elif isinstance(k, (list, tuple, range)):
        arr = np.asarray(k)
        if arr.dtype.kind == "f" and arr.size == 0:
            arr = arr.astype(np.int64)
        if arr.dtype.kind not in "iub":
            raise _bad_index(op, k)
        t = Tensor._make(arr)
    else:
        raise _bad_index(op, k)
    kind = t._data.dtype.kind
    if kind == "b" or t._data.dtype == np.uint8:
        if t._data.ndim == 0:
            return _Bool(bool(t.item()))
        return ("mask", t)
    if kind not in "iu":
        raise EmberIndexError(
            f"{op}: tensors used as indices must be long, int, byte or bool tensors, got {t.dtype}"
        )
    if t._data.ndim == 0:
        return int(t.item())  # a 0-d integer tensor selects, as in PyTorch
    return t


def _on_device(t: Tensor, x: Tensor) -> Tensor:
    if type(t._data) is type(x._data) or t.device == x.device:  # (a traced value: a Symbol)
        return t
    return Tensor._make(to_device(t._data, x.device))


def _bound(v):
    return None if v is None else operator.index(v)


def parse_index(x: Tensor, key, op: str = "getitem") -> tuple:
    """``key`` as ``(basic, adv, index_tensors)``: the hashable basic key applied first, the
    advanced key over its result (None when there are no index tensors) and the tensors."""
    if type(key) is not tuple:
        key = (key,)
    shape = x._data.shape
    ndim = len(shape)
    items, consumed = [], 0
    for k in key:
        tk = type(k)
        if tk is int or tk is slice:
            consumed += 1
        elif k is None or k is Ellipsis:
            pass
        elif tk is bool:
            k = _Bool(k)
        else:
            k = _classify(k, x, op)
            if type(k) is tuple:
                consumed += k[1]._data.ndim
            elif type(k) is not _Bool:
                consumed += 1
        items.append(k)
    if consumed > ndim:
        raise EmberIndexError(f"{op}: too many indices for tensor of dimension {ndim}")
    basic, adv, tensors = [], [], []
    d, ellipsis = 0, False
    for k in items:
        tk = type(k)
        if tk is int:
            n = shape[d]
            if not -n <= k < n:
                raise EmberIndexError(
                    f"{op}: index {k} is out of bounds for dimension {d} with size {n}"
                )
            basic.append(k % n)
            d += 1
        elif tk is slice:
            step = _bound(k.step)
            if step is not None and step <= 0:
                raise ShapeError(f"{op}: step must be greater than zero (got {step})")
            basic.append(("s", _bound(k.start), _bound(k.stop), step))
            adv.append(":")
            d += 1
        elif k is None:
            basic.append(None)
            adv.append(":")
        elif k is Ellipsis:
            if ellipsis:
                raise EmberIndexError(f"{op}: an index can only have a single ellipsis ('...')")
            ellipsis = True
            m = ndim - consumed
            basic += [_FULL] * m
            adv += [":"] * m
            d += m
        elif tk is _Bool:
            basic.append(None)
            if k.value:
                adv.append(":")
            else:
                adv.append(len(tensors))
                tensors.append(Tensor._make(full((0,), 0, np.int64, x.device)))
        elif tk is tuple:  # a boolean mask: the indices of its nonzero elements
            mask = _on_device(k[1], x)
            ms = mask._data.shape
            for j, s in enumerate(ms):
                if s != shape[d + j]:
                    raise EmberIndexError(
                        f"{op}: the shape of the mask {list(ms)} at index {j} does not match "
                        f"the shape of the indexed tensor {list(shape)} at index {d + j}"
                    )
            for arr in mask._data.nonzero():
                basic.append(_FULL)
                adv.append(len(tensors))
                tensors.append(Tensor._make(arr))
            d += len(ms)
        else:
            basic.append(_FULL)
            adv.append(len(tensors))
            tensors.append(_on_device(k, x))
            d += 1
    while basic and basic[-1] == _FULL:
        basic.pop()
    if not tensors:
        return tuple(basic), None, ()
    while adv[-1] == ":":
        adv.pop()
    return tuple(basic), tuple(adv), tuple(tensors)


def getitem(input: Tensor, key) -> Tensor:
    """``input[key]``: a view for ints, slices, None and ``...``; a copy with index tensors.

    >>> import ember
    >>> x = ember.arange(6).view(2, 3)
    >>> x[-1, 1:], x[..., None].shape, x[:, [2, 0]]
    (tensor([4, 5]), ember.Size([2, 3, 1]), tensor([[2, 0],
            [5, 3]]))
    """
    basic, adv, idx = parse_index(input, key)
    if adv is None:
        return apply(I.basic_index(basic), input)
    return I.select(input, basic, adv, idx)


def _value_tensor(value, x: Tensor, op: str) -> Tensor:
    if isinstance(value, Tensor):
        v = value
        if type(v._data) is not type(x._data) or v.device != x.device:
            from .conversion import to

            v = to(v, x.device)
        return cast(v, x.dtype)
    if isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, complex):
        return scalar_tensor(value, x.dtype, x)
    if isinstance(value, (np.ndarray, list, tuple)):
        arr = np.asarray(value)
        if arr.dtype == object:
            raise DTypeError(f"{op}: can't assign a value of type {type(value).__name__}")
        return Tensor._make(to_device(arr.astype(x.dtype.np), x.device))
    raise DTypeError(f"{op}: can't assign a value of type {type(value).__name__}")


def _fit_value(v: Tensor, shape: tuple, op: str) -> Tensor:
    """Drop leading size-1 dims of ``v`` beyond ``shape``'s rank (as PyTorch's copy_ allows)."""
    extra = v.ndim - len(shape)
    if extra > 0:
        if any(s != 1 for s in v.shape[:extra]):
            raise ShapeError(
                f"{op}: shape mismatch: value tensor of shape {list(v.shape)} cannot be "
                f"broadcast to indexing result of shape {list(shape)}"
            )
        v = apply(Reshape(tuple(v.shape[extra:])), v)
    return v


def setitem(input: Tensor, key, value) -> None:
    """``input[key] = value`` in place (value: a number or a broadcastable tensor, converted to
    ``input``'s dtype); differentiable with respect to both.

    >>> import ember
    >>> x = ember.zeros(2, 3)
    >>> x[0, 1:] = ember.tensor([1.0, 2.0]); x[1] = 5; x
    tensor([[0., 1., 2.],
            [5., 5., 5.]])
    """
    basic, adv, idx = parse_index(input, key, "setitem")
    if adv is None and _is_own_view(input, basic, value):
        # ``x[k] += v`` with a basic key: ``x[k]`` was a view and ``+=`` already wrote through it
        # (and recorded the history); copying it onto itself would change nothing.
        input._version[0] += 1
        return
    v = _value_tensor(value, input, "setitem")
    if graph_tracer(input, v) is None and not (
        state.grad_enabled and (input._requires_grad or v._requires_grad)
    ):
        data = input._data
        if input._readonly:
            raise EmberError(
                f"setitem: the tensor (shape {list(data.shape)}) is a read-only broadcast view "
                "(from expand); clone() it before writing in place"
            )
        target = data[I._np_key(basic) + (Ellipsis,)]
        sub = Ellipsis if adv is None else I._adv_key(adv, [t._data for t in idx])
        try:
            target[sub] = v._data
        except IndexError as e:
            raise I._index_error("setitem", data, e) from None
        except ValueError:
            raise ShapeError(
                f"setitem: shape mismatch: value tensor of shape {list(v.shape)} cannot be "
                f"broadcast to indexing result of shape {list(target[sub].shape)}"
            ) from None
        input._version[0] += 1
        return
    shape = I.basic_shape(tuple(input.shape), basic, "setitem")
    if adv is not None:
        shape = I.adv_shape(shape, adv, [tuple(t.shape) for t in idx], "setitem")
    v = _fit_value(v, shape, "setitem")
    op = I.IndexPut(basic, adv)
    apply_inplace(input, lambda src, val, *ix: apply(op, src, val, *ix), v, *idx, name="setitem")


def _is_own_view(x: Tensor, basic: tuple, value) -> bool:
    """Whether ``value`` is exactly the view ``x[basic]`` (same storage, same view ops)."""
    if not isinstance(value, Tensor) or value._base is None:
        return False
    base = x._base if x._base is not None else x
    return value._base is base and value._view_ops == (x._view_ops or ()) + (I.basic_index(basic),)


def _setitem_method(self: Tensor, key, value) -> None:
    setitem(self, key, value)


def index_put_(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """``input[indices] = values`` (``+=`` with ``accumulate=True``, repeated indices adding up).

    >>> import ember
    >>> x = ember.zeros(3)
    >>> x.index_put_((ember.tensor([0, 0, 2]),), ember.tensor(1.0), accumulate=True)
    tensor([2., 0., 1.])
    """
    key = tuple(indices)
    if not accumulate:
        setitem(input, key, values)
        return input
    basic, adv, idx = parse_index(input, key, "index_put_")
    if adv is None:  # no index tensors: a plain add into the view
        shape = I.basic_shape(tuple(input.shape), basic, "index_put_")
        adv, idx = (), ()
    else:
        shape = I.adv_shape(
            I.basic_shape(tuple(input.shape), basic),
            adv,
            [tuple(t.shape) for t in idx],
            "index_put_",
        )
    v = _fit_value(_value_tensor(values, input, "index_put_"), shape, "index_put_")
    if tuple(v.shape) != shape:
        v = apply(Expand(shape), v)

    def put(src, val, *ix):
        from .elementwise import add

        inner = I.basic_shape(tuple(src.shape), basic)
        added = apply(I.AdvIndexGrad(adv, inner), val, *ix) if adv else val
        if basic:
            added = apply(I.BasicIndexGrad(basic, tuple(src.shape)), added)
        return add(src, added)

    return apply_inplace(input, put, v, *idx, name="index_put_")


def index_put(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """Out-of-place ``index_put_``.

    >>> import ember
    >>> ember.zeros(3).index_put((ember.tensor([1]),), ember.tensor(5.0))
    tensor([0., 5., 0.])
    """
    from .conversion import clone

    return index_put_(clone(input), indices, values, accumulate)


# -- gather / scatter ------------------------------------------------------------------------


def _dim(input: Tensor, dim: int, op: str) -> int:
    return wrap_dim(dim, input._data.ndim, op)


def checked_index(op: str, index: Tensor, input: Tensor, dim: int, verb: str = "out of bounds"):
    """``index`` on ``input``'s device, checked to lie in ``[0, input.shape[dim])``.

    Negative indices are refused, not counted from the end, as PyTorch does for gather,
    scatter, scatter_add, index_select, index_add and take_along_dim. The check is a
    ``CheckRange`` op: on the CPU it raises at once, on a GPU at the next read from the device
    (no wait in the step), in a compiled graph on every run.

    >>> import ember
    >>> checked_index("gather", ember.tensor([0, 2]), ember.ones(3), 0)
    tensor([0, 2])
    >>> checked_index("gather", ember.tensor([0, -1]), ember.ones(3), 0)
    Traceback (most recent call last):
    ember._errors.EmberIndexError: gather(): index -1 is out of bounds for dimension 0 ...
    """
    index = _on_device(index, input)
    size = input.shape[dim] if input.ndim else 1
    if index.numel():
        message = (
            f"{op}(): index {{value}} is {verb} for dimension {dim} with size {size} "
            f"(input of shape {list(input.shape)})"
        )
        apply(CheckRange(message, 0, size), index)
    return index


def _1d(t):
    """A 0-d tensor as one of shape ``(1,)``: gather and scatter take a scalar input, index or
    src as a 1-d one of one element, as PyTorch does (``zeros(10).scatter_(0, tensor(3), 1)``)."""
    return t.reshape(1) if isinstance(t, Tensor) and t.ndim == 0 else t


def _gather(input: Tensor, dim: int, index: Tensor, op: str) -> Tensor:
    shape = tuple(index.shape)
    input, index = _1d(input), _1d(index)
    d = _dim(input, dim, op)
    I._check_along(op, d, input, index)
    out = apply(I.Gather(d), input, checked_index(op, index, input, d))
    return out.reshape(shape) if not shape else out


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j] = input[index[i][j]][j]`` for ``dim=0`` (``input[i][index[i][j]]`` for 1).

    Every index must lie in ``[0, input.shape[dim])``: a negative one is an error, as in
    PyTorch (on a GPU, raised at the next read from the device).

    >>> import ember
    >>> ember.tensor([[1, 2], [3, 4]]).gather(1, ember.tensor([[0, 0], [1, 0]]))
    tensor([[1, 1],
            [4, 3]])
    """
    return _gather(input, dim, index, "gather")


def _src(input: Tensor, index: Tensor, src, value, op: str) -> Tensor:
    if src is None:
        src = value
    if src is None:
        raise DTypeError(f"{op}(): expected a src tensor or a value")
    if not isinstance(src, Tensor):
        xp = input.device.xp
        return Tensor._make(xp.full(tuple(index.shape), src, dtype=input._data.dtype))
    if src.dtype is not input.dtype:
        raise DTypeError(
            f"{op}(): Expected self.dtype to be equal to src.dtype (got {input.dtype} and "
            f"{src.dtype})"
        )
    return src


def scatter(
    input: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce: str | None = None
) -> Tensor:
    """A copy of ``input`` with ``src`` (a tensor, or a number) written at ``index`` along
    ``dim``: ``out[index[i][j]][j] = src[i][j]`` for ``dim=0``.

    >>> import ember
    >>> ember.zeros(2, 3).scatter(1, ember.tensor([[2], [0]]), 7.0)
    tensor([[0., 0., 7.],
            [7., 0., 0.]])
    """
    if reduce == "add":
        return scatter_add(input, dim, index, _src(input, index, src, value, "scatter"))
    if reduce is not None:
        raise EmberError(f"scatter(): reduce={reduce!r} is not supported (use scatter_reduce)")
    shape = tuple(input.shape)
    input, index, src = _1d(input), _1d(index), _1d(src)
    d = _dim(input, dim, "scatter")
    s = _src(input, index, src, value, "scatter")
    I._check_along("scatter", d, input, index, s)
    out = apply(I.Scatter(d), input, checked_index("scatter", index, input, d), s)
    return out.reshape(shape) if not shape else out


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim`` (repeats add up).

    >>> import ember
    >>> ember.zeros(3).scatter_add(0, ember.tensor([0, 0, 2]), ember.ones(3))
    tensor([2., 0., 1.])
    """
    shape = tuple(input.shape)
    input, index, src = _1d(input), _1d(index), _1d(src)
    d = _dim(input, dim, "scatter_add")
    s = _src(input, index, src, None, "scatter_add")
    I._check_along("scatter_add", d, input, index, s)
    out = apply(I.ScatterAdd(d), input, checked_index("scatter_add", index, input, d), s)
    return out.reshape(shape) if not shape else out


def scatter_(
    input: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce: str | None = None
) -> Tensor:
    """In-place ``scatter``.

    >>> import ember
    >>> ember.zeros(3).scatter_(0, ember.tensor([1]), 4.0)
    tensor([0., 4., 0.])
    """
    return apply_inplace(
        input, scatter, dim, index, src, name="scatter_", value=value, reduce=reduce
    )


def scatter_add_(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """In-place ``scatter_add``.

    >>> import ember
    >>> ember.zeros(2).scatter_add_(0, ember.tensor([1, 1]), ember.ones(2))
    tensor([0., 2.])
    """
    return apply_inplace(input, scatter_add, dim, index, src, name="scatter_add_")


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The entries at ``index`` (a 1-d integer tensor of positions in ``[0, size)``; negative
    ones are an error, as in PyTorch) along ``dim``.

    >>> import ember
    >>> ember.arange(6).view(2, 3).index_select(1, ember.tensor([2, 0]))
    tensor([[2, 0],
            [5, 3]])
    """
    if not isinstance(index, Tensor) or index.dtype not in (_dt.int64, _dt.int32):
        got = index.dtype if isinstance(index, Tensor) else type(index).__name__
        raise DTypeError(f"index_select(): Expected dtype int32 or int64 for index, got {got}")
    if index.ndim > 1:
        raise EmberIndexError(
            f"index_select(): Index is supposed to be a vector, got shape {list(index.shape)}"
        )
    if input.ndim == 0:
        index = checked_index("index_select", index, input, 0, "out of range")
        return getitem(apply(Reshape((1,)), input), index).reshape(())
    d = _dim(input, dim, "index_select")
    if index.ndim == 0:
        index = apply(Reshape((1,)), index)
    index = checked_index("index_select", index, input, d, "out of range")
    return apply(I.AdvIndex((":",) * d + (0,)), input, index)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements where ``mask`` (bool, broadcast with ``input``) is True, as a 1-d tensor.

    >>> import ember
    >>> ember.masked_select(ember.tensor([[1, 2], [3, 4]]), ember.tensor([True, False]))
    tensor([1, 3])
    """
    if not isinstance(mask, Tensor) or mask.dtype is not _dt.bool_:
        got = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
        raise DTypeError(f"masked_select: expected a bool mask, got {got}")
    shape = broadcast_shapes("masked_select", tuple(input.shape), tuple(mask.shape))
    if tuple(input.shape) != shape:
        input = apply(Expand(shape), input)
    m = mask._data if tuple(mask.shape) == shape else mask.device.xp.broadcast_to(mask._data, shape)
    return getitem(input, Tensor._make(m))


__all__ = [
    "gather",
    "scatter",
    "scatter_add",
    "index_select",
    "masked_select",
    "index_put",
]

TENSOR_METHODS = {
    "__getitem__": getitem,
    "__setitem__": _setitem_method,
    "gather": gather,
    "scatter": scatter,
    "scatter_": scatter_,
    "scatter_add": scatter_add,
    "scatter_add_": scatter_add_,
    "index_select": index_select,
    "masked_select": masked_select,
    "index_put_": index_put_,
    "index_put": index_put,
}
