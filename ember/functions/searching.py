"""Finding, counting and index-driven copies: nonzero, unique, bincount, searchsorted,
repeat_interleave, take, index_add / index_copy / index_fill, masked_scatter, unfold.

Functions whose output size depends on the data (``nonzero``, ``unique``, tensor
``repeat_interleave``) read that size on the host; the values stay on the input's device.
``searchsorted``, ``bucketize`` and ``histc`` have static output shapes: they are ops
(``ember.ops.searching``), so they run under ``ember.compile`` and in static graphs too. So are
the bounds checks of ``take`` / ``index_add`` / ``index_copy`` / ``index_fill`` and the count
check of ``masked_scatter`` (``IndexInRange``, ``MaskedPositions``): made when the op runs, as
PyTorch's device-side checks, so an index computed in a compiled function is checked too.
The differentiable ones are built from ``gather``, ``scatter_add``, ``index_select`` and
``where``, so their gradients (of every order) come with them.

>>> import ember
>>> ember.tensor([0, 3, 0, 5]).nonzero()
tensor([[1],
        [3]])
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend as _backend
from .. import dtypes as _dt
from .._errors import DTypeError, ShapeError
from .._shape import wrap_dim
from .._tensor import Tensor
from ..ops.base import apply
from ..ops.indexing import IndexInRange, MaskedPositions
from ..ops.searching import Histc, SearchSorted, check_searchsorted
from . import creation as C
from .indexing import _gather
from .inplace import inplace_method


def _host(t: Tensor) -> np.ndarray:
    return _backend.to_device(t.detach()._data, _backend.CPU)


def _on(array: np.ndarray, like: Tensor) -> Tensor:
    return Tensor._make(_backend.to_device(np.ascontiguousarray(array), like.device))


def _int_index(index: Tensor, name: str) -> None:
    if not isinstance(index, Tensor) or index.dtype not in (_dt.int64, _dt.int32):
        got = index.dtype if isinstance(index, Tensor) else type(index).__name__
        raise DTypeError(f"{name}: index must be an int64 or int32 tensor, got {got}")


# -- finding -------------------------------------------------------------------------------


def nonzero(input: Tensor, *, as_tuple: bool = False):
    """Indices of the non-zero elements: an (N, ndim) int64 tensor, or one 1-D tensor per dim.

    >>> import ember
    >>> ember.nonzero(ember.tensor([[1, 0], [0, 2]]), as_tuple=True)
    (tensor([0, 1]), tensor([0, 1]))
    """
    where = np.argwhere(_host(input)) if input.ndim else np.argwhere(_host(input).reshape(1))
    where = where.astype(np.int64)
    if as_tuple:
        if input.ndim == 0:
            return (_on(where[:, 0], input),)
        return tuple(_on(where[:, k], input) for k in range(input.ndim))
    return _on(where if input.ndim else where[:, :0], input)


def argwhere(input: Tensor) -> Tensor:
    """``nonzero(input)``: the (N, ndim) indices of the non-zero elements.

    >>> import ember
    >>> ember.argwhere(ember.tensor([0, 1, 1]))
    tensor([[1],
            [2]])
    """
    return nonzero(input)


def count_nonzero(input: Tensor, dim=None) -> Tensor:
    """How many elements are non-zero, in all or along ``dim`` (an int or a tuple).

    >>> import ember
    >>> ember.count_nonzero(ember.tensor([[0, 1], [2, 3]]), dim=0)
    tensor([1, 2])
    """
    nz = (input != 0).to(_dt.int64)
    return nz.sum() if dim is None else nz.sum(dim)


def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
):
    """The distinct values (sorted), with where each element went and how often each occurs.

    >>> import ember
    >>> ember.unique(ember.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True)
    (tensor([1, 2, 3]), tensor([2, 0, 2, 1]), tensor([1, 1, 2]))
    """
    arr = _host(input)
    if arr.dtype == _dt.bfloat16.np:
        arr = arr.astype(np.float32)
    if dim is None:
        values, inverse, counts = np.unique(
            arr.reshape(-1), return_inverse=True, return_counts=True
        )
        inverse = inverse.reshape(tuple(input.shape))
    else:
        d = wrap_dim(dim, input.ndim, "unique")
        values, inverse, counts = np.unique(arr, return_inverse=True, return_counts=True, axis=d)
        inverse = inverse.reshape(-1)
    out = [_on(values.astype(input._data.dtype), input)]
    if return_inverse:
        out.append(_on(inverse.astype(np.int64), input))
    if return_counts:
        out.append(_on(counts.astype(np.int64), input))
    return out[0] if len(out) == 1 else tuple(out)


def unique_consecutive(
    input: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
):
    """Collapse runs of equal consecutive values (or slices along ``dim``) to one.

    >>> import ember
    >>> ember.unique_consecutive(ember.tensor([1, 1, 2, 2, 1]), return_counts=True)
    (tensor([1, 2, 1]), tensor([2, 2, 1]))
    """
    arr = _host(input)
    if dim is None:
        flat = arr.reshape(-1)
        change = flat[1:] != flat[:-1]
        moved = flat
    else:
        d = wrap_dim(dim, input.ndim, "unique_consecutive")
        moved = np.moveaxis(arr, d, 0)
        rows = moved.reshape(moved.shape[0], -1)
        change = np.any(rows[1:] != rows[:-1], axis=1)
    n = moved.shape[0]
    starts = (
        np.concatenate([[0], np.flatnonzero(change) + 1]).astype(np.int64)
        if n
        else np.zeros(0, np.int64)
    )
    values = moved[starts]
    if dim is not None:
        values = np.moveaxis(values, 0, d)
    out = [_on(values, input)]
    if return_inverse:
        inverse = np.cumsum(np.concatenate([[0], change.astype(np.int64)])) if n else np.zeros(0)
        shape = tuple(input.shape) if dim is None else (n,)
        out.append(_on(inverse.astype(np.int64).reshape(shape), input))
    if return_counts:
        out.append(_on(np.diff(np.append(starts, n)).astype(np.int64), input))
    return out[0] if len(out) == 1 else tuple(out)


# -- counting and searching sorted data ------------------------------------------------------


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each non-negative integer occurs (or the sum of its ``weights``).

    >>> import ember
    >>> ember.bincount(ember.tensor([0, 2, 2]), minlength=4)
    tensor([1, 0, 2, 0])
    """
    if input.ndim != 1 or input.dtype.is_floating_point or input.dtype is _dt.bool_:
        raise ShapeError(
            f"bincount: input must be a 1-D tensor of non-negative integers, got shape "
            f"{tuple(input.shape)} and dtype {input.dtype}"
        )
    if minlength < 0:
        raise ShapeError(f"bincount: minlength should be >= 0, got {minlength}")
    if input.numel() and int(input.min().item()) < 0:
        raise ShapeError(f"bincount: input must be non-negative, found {int(input.min().item())}")
    if weights is not None and tuple(weights.shape) != tuple(input.shape):
        raise ShapeError(
            f"bincount: weights should have the same shape as input, got {tuple(weights.shape)} "
            f"and {tuple(input.shape)}"
        )
    size = max(int(minlength), int(input.max().item()) + 1 if input.numel() else 0)
    if weights is None:
        ones = C.ones(tuple(input.shape), dtype=_dt.int64, device=input.device)
        return C.zeros(size, dtype=_dt.int64, device=input.device).scatter_add(
            0, input.long(), ones
        )
    dtype = weights.dtype if weights.dtype.is_floating_point else _dt.float64
    out = C.zeros(size, dtype=dtype, device=input.device)
    return out.scatter_add(0, input.long(), weights.to(dtype))


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
    """A histogram of ``bins`` equal bins over [min, max] (the data's range when min == max),
    in ``input``'s dtype; elements outside are ignored. Not differentiable (as in PyTorch).

    An op (``ember.ops.searching.Histc``), so it compiles: the data's range, when used, is read
    when the op runs.

    >>> import ember
    >>> ember.histc(ember.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    if not isinstance(input, Tensor):
        raise DTypeError(f"histc: expected a Tensor as input, got {type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise DTypeError(
            f"histc: expected a floating input, got {input.dtype} (shape {tuple(input.shape)})"
        )
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins <= 0:
        raise ShapeError(f"histc: bins must be an int > 0, got {bins!r}")
    lo, hi = float(min), float(max)
    if lo != hi:
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ShapeError(f"histc: range of [{lo:g}, {hi:g}] is not finite")
        if lo > hi:
            raise ShapeError(f"histc: max must be larger than min, got min {min} and max {max}")
    return apply(Histc(int(bins), lo, hi), input)


def _search_operands(seq: Tensor, values, name: str) -> tuple[Tensor, Tensor]:
    """``(seq, values)`` with one dtype (PyTorch's promotion; a Python number takes the
    sequence's kind as a weak scalar) and the shapes checked."""
    if not isinstance(seq, Tensor):
        raise DTypeError(f"{name}: boundaries must be a Tensor, got {type(seq).__name__}")
    scalar = not isinstance(values, Tensor)
    if scalar:
        if not isinstance(values, (bool, int, float, np.generic)):
            raise DTypeError(
                f"{name}: values must be a Tensor or a number, got {type(values).__name__}"
            )
        if seq.ndim != 1:
            raise ShapeError(
                f"{name}: input value can be a scalar only when boundaries tensor dimension is "
                f"1, but got boundaries tensor of shape {tuple(seq.shape)}"
            )
        # a weak scalar, as in PyTorch: a float against floats takes their dtype; against
        # integers the default float dtype; an int or bool compares exactly (int64)
        dt = seq.dtype if seq.dtype.is_floating_point else _dt.result_type(values)
        values = C.tensor(values, dtype=dt, device=seq.device)
    check_searchsorted(name, tuple(seq.shape), tuple(values.shape))
    if values.dtype is not seq.dtype:
        common = _dt.promote_types(seq.dtype, values.dtype)
        seq, values = seq.to(common), values.to(common)
    return seq, values


def searchsorted(
    sorted_sequence: Tensor,
    values,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
) -> Tensor:
    """Where ``values`` would be inserted into the sorted last dim of ``sorted_sequence``
    (1-D, or with the values' leading dims); ``right`` / ``side='right'`` puts equal values
    after their matches; ``sorter`` (int64) sorts an unsorted sequence. An op
    (``ember.ops.searching.SearchSorted``): the result has the values' shape, so it compiles.

    >>> import ember
    >>> ember.searchsorted(ember.tensor([1, 3, 5]), ember.tensor([0, 3, 6]))
    tensor([0, 1, 3])
    >>> ember.searchsorted(ember.tensor([[1, 3], [2, 4]]), ember.tensor([[3], [3]]), right=True)
    tensor([[2],
            [1]])
    """
    if side is not None:
        if side not in ("left", "right"):
            raise ShapeError(f"searchsorted: side can only be 'left' or 'right' but got {side!r}")
        if right and side == "left":
            raise ShapeError(
                "searchsorted: side and right can't be set to opposites, got side of left while "
                "right was True"
            )
        right = side == "right"
    seq = sorted_sequence
    if sorter is not None:
        if not isinstance(sorter, Tensor) or sorter.dtype is not _dt.int64:
            got = sorter.dtype if isinstance(sorter, Tensor) else type(sorter).__name__
            raise DTypeError(f"searchsorted: sorter must be a tensor of long dtype but got {got}")
        if tuple(sorter.shape) != tuple(seq.shape):
            raise ShapeError(
                f"searchsorted: boundary and sorter must have the same size, but got boundary "
                f"tensor {tuple(seq.shape)} and sorter tensor {tuple(sorter.shape)}"
            )
        seq = seq.gather(-1, sorter)
    seq, values = _search_operands(seq, values, "searchsorted")
    return apply(SearchSorted(bool(right), bool(out_int32)), seq.detach(), values.detach())


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False):
    """The bucket of each element given 1-D sorted ``boundaries``: ``searchsorted``'s index
    (``right=False``: ``boundaries[i-1] < x <= boundaries[i]``). ``input`` may be a number.

    >>> import ember
    >>> ember.bucketize(ember.tensor([1, 5, 9]), ember.tensor([2, 5, 8]))
    tensor([0, 1, 3])
    """
    if not isinstance(boundaries, Tensor) or boundaries.ndim != 1:
        got = tuple(boundaries.shape) if isinstance(boundaries, Tensor) else type(boundaries)
        raise ShapeError(f"bucketize: boundaries must be 1-D, got shape {got}")
    seq, values = _search_operands(boundaries, input, "bucketize")
    return apply(SearchSorted(bool(right), bool(out_int32)), seq.detach(), values.detach())


# -- index-driven gathers and copies -----------------------------------------------------


def take(input: Tensor, index: Tensor) -> Tensor:
    """Elements of the flattened input at ``index`` (shaped like ``index``).

    >>> import ember
    >>> ember.take(ember.tensor([[1, 2], [3, 4]]), ember.tensor([0, 3]))
    tensor([1, 4])
    """
    _int_index(index, "take")
    flat = apply(IndexInRange("take", input.numel()), index.reshape(-1))
    return input.reshape(-1).index_select(0, flat).reshape(*index.shape)


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """``gather`` along ``dim`` with ``indices`` broadcast against ``input``; flattened when
    ``dim`` is None.

    >>> import ember
    >>> x = ember.tensor([[10, 30, 20], [60, 40, 50]])
    >>> ember.take_along_dim(x, x.argmax(1, keepdim=True), dim=1)
    tensor([[30],
            [60]])
    """
    _int_index(indices, "take_along_dim")
    if dim is None:
        return _gather(input.reshape(-1), 0, indices.reshape(-1).long(), "take_along_dim")
    d = wrap_dim(dim, input.ndim, "take_along_dim")
    if input.ndim != indices.ndim:
        raise ShapeError(
            f"take_along_dim: input and indices should have the same number of dimensions, "
            f"got shapes {tuple(input.shape)} and {tuple(indices.shape)}"
        )
    shape_x, shape_i = list(input.shape), list(indices.shape)
    for k in range(input.ndim):
        if k != d:
            size = max(shape_x[k], shape_i[k])
            shape_x[k] = shape_i[k] = size
    x = input.expand(*shape_x[:d], input.shape[d], *shape_x[d + 1 :])
    idx = indices.expand(*shape_i[:d], indices.shape[d], *shape_i[d + 1 :])
    return _gather(x, d, idx.long(), "take_along_dim")


def repeat_interleave(input: Tensor, repeats=None, dim: int | None = None, *, output_size=None):
    """Repeat each element (or slice along ``dim``) ``repeats`` times (an int or a tensor of
    counts); with only a tensor of counts, repeat its positions.

    >>> import ember
    >>> ember.tensor([1, 2]).repeat_interleave(2)
    tensor([1, 1, 2, 2])
    >>> ember.repeat_interleave(ember.tensor([2, 1]))
    tensor([0, 0, 1])
    """
    if repeats is None:
        counts = input
        return repeat_interleave(C.arange(counts.shape[0], device=counts.device), counts)
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else wrap_dim(dim, input.ndim, "repeat_interleave")
    n = x.shape[d] if x.ndim else 1
    if isinstance(repeats, Tensor):
        counts = _host(repeats).astype(np.int64).reshape(-1)
        if counts.size == 1:
            counts = np.full(n, counts[0])
    else:
        counts = np.full(n, int(repeats))
    if counts.size != n:
        raise ShapeError(
            f"repeat_interleave: repeats must have the same size as input along dim ({n}), got "
            f"{counts.size}"
        )
    if (counts < 0).any():
        raise ShapeError("repeat_interleave: repeats can not be negative")
    index = _on(np.repeat(np.arange(n, dtype=np.int64), counts), x)
    if x.ndim == 0:
        x = x.reshape(1)
    return x.index_select(d, index)


def _checked_index(x: Tensor, dim: int, index: Tensor, name: str) -> Tensor:
    """``index`` as a flat int64 tensor of non-negative positions along ``dim`` of ``x``
    (negative indices: counted from the end for index_fill, refused for index_add and
    index_copy, as in PyTorch)."""
    _int_index(index, name)
    if index.ndim > 1:
        raise ShapeError(f"{name}: index should have at most 1 dimension, got {tuple(index.shape)}")
    size = x.shape[dim] if x.ndim else 1
    negative = name == "index_fill"
    return apply(IndexInRange(name, size, dim, negative), index.reshape(-1))


def _index_along(x: Tensor, dim: int, index: Tensor, like: Tensor, name: str) -> Tensor:
    """``index`` (1-D) shaped to scatter ``like`` (source) into ``x`` along ``dim``."""
    flat = _checked_index(x, dim, index, name)
    view = [1] * like.ndim
    if like.ndim:
        view[dim] = flat.shape[0]
    return flat.reshape(*view).expand(*like.shape)


def _check_source(x: Tensor, dim: int, index: Tensor, source: Tensor, name: str) -> None:
    want = list(x.shape)
    if want:
        want[dim] = index.numel()
    if list(source.shape) != want and not (x.ndim == 0 and source.numel() == index.numel()):
        raise ShapeError(
            f"{name}: source of shape {tuple(source.shape)} does not match input "
            f"{tuple(x.shape)} with {index.numel()} indices along dim {dim} (expected "
            f"{tuple(want)})"
        )


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """``input`` with ``alpha * source`` added at ``index`` along ``dim`` (repeats add up).

    >>> import ember
    >>> ember.zeros(3).index_add(0, ember.tensor([0, 0, 2]), ember.ones(3))
    tensor([2., 0., 1.])
    """
    d = wrap_dim(dim, max(input.ndim, 1), "index_add")
    _check_source(input, d, index, source, "index_add")
    src = source if alpha == 1 else source * alpha
    idx = _index_along(input, d, index, src, "index_add")
    return input.scatter_add(d, idx, src.to(input.dtype))


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``input`` with slices along ``dim`` at ``index`` replaced by ``source``'s.

    >>> import ember
    >>> ember.zeros(3).index_copy(0, ember.tensor([2]), ember.tensor([5.0]))
    tensor([0., 0., 5.])
    """
    d = wrap_dim(dim, max(input.ndim, 1), "index_copy")
    _check_source(input, d, index, source, "index_copy")
    idx = _index_along(input, d, index, source, "index_copy")
    return input.scatter(d, idx, source.to(input.dtype))


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """``input`` with slices along ``dim`` at ``index`` set to ``value``.

    >>> import ember
    >>> ember.ones(2, 3).index_fill(1, ember.tensor([0, 2]), -1.0)
    tensor([[-1.,  1., -1.],
            [-1.,  1., -1.]])
    """
    d = wrap_dim(dim, max(input.ndim, 1), "index_fill")
    flat = _checked_index(input, d, index, "index_fill")
    size = input.shape[d] if input.ndim else 1
    ones = C.ones(flat.shape[0], dtype=_dt.bool_, device=input.device)
    hit = C.zeros(size, dtype=_dt.bool_, device=input.device).scatter(0, flat, ones)
    view = [1] * input.ndim
    if input.ndim:
        view[d] = size
    return input.masked_fill(hit.reshape(*view), value)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``input`` with the positions where ``mask`` is True filled, in order, from ``source``.

    >>> import ember
    >>> ember.zeros(4).masked_scatter(ember.tensor([True, False, True, False]),
    ...                               ember.tensor([1.0, 2.0, 3.0]))
    tensor([1., 0., 2., 0.])
    """
    if mask.dtype is not _dt.bool_:
        raise DTypeError(f"masked_scatter: mask must be a bool tensor, got {mask.dtype}")
    m = mask.expand(*input.shape) if tuple(mask.shape) != tuple(input.shape) else mask
    position = apply(MaskedPositions(tuple(source.shape)), m)  # checks the count when it runs
    src = source.reshape(-1).to(input.dtype)
    if src.numel() == 0:  # nothing to read (the check passed: the mask is all False)
        src = C.zeros(1, dtype=input.dtype, device=input.device)
    picked = src.gather(0, position).reshape(*input.shape)
    from .elementwise import where

    return where(m, picked, input)


def type_as(self: Tensor, other: Tensor) -> Tensor:
    """This tensor converted to ``other``'s dtype.

    >>> import ember
    >>> ember.tensor([1, 2]).type_as(ember.zeros(1)).dtype
    ember.float32
    """
    return self.to(other.dtype)


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Windows of ``size`` elements every ``step`` along ``dimension``, as a new last dim
    (a copy, differentiable; PyTorch returns a view).

    >>> import ember
    >>> ember.arange(5).unfold(0, 2, 2)
    tensor([[0, 1],
            [2, 3]])
    """
    d = wrap_dim(dimension, max(self.ndim, 1), "unfold")
    length = self.shape[d] if self.ndim else 1
    if size > length or size < 0:
        raise ShapeError(
            f"unfold: maximum size for tensor at dimension {d} is {length} but size is {size}"
        )
    if step <= 0:
        raise ShapeError(f"unfold: step is {step} but must be > 0")
    x = self.reshape(1) if self.ndim == 0 else self
    count = (length - size) // step + 1
    starts = np.arange(count, dtype=np.int64) * step
    index = _on((starts[:, None] + np.arange(size, dtype=np.int64)).reshape(-1), x)
    picked = x.index_select(d, index)
    shape = list(x.shape)
    shape[d : d + 1] = [count, size]
    return picked.reshape(*shape).movedim(d + 1, -1)


__all__ = [
    "nonzero", "argwhere", "count_nonzero", "unique", "unique_consecutive", "bincount", "histc",
    "searchsorted", "bucketize", "take", "take_along_dim", "repeat_interleave", "index_add",
    "index_copy", "index_fill",
]  # fmt: skip

TENSOR_METHODS = {
    name: globals()[name] for name in __all__ if name not in ("searchsorted", "bucketize")
}
TENSOR_METHODS.update(
    masked_scatter=masked_scatter,
    type_as=type_as,
    unfold=unfold,
    index_add_=inplace_method(index_add, "index_add_"),
    index_copy_=inplace_method(index_copy, "index_copy_"),
    index_fill_=inplace_method(index_fill, "index_fill_"),
    masked_scatter_=inplace_method(masked_scatter, "masked_scatter_"),
)
