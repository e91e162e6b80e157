"""Turning a list of samples into a batch: ``default_collate``, ``default_convert``, ``collate``.

Tensors and NumPy arrays are stacked along a new first dimension with the array module's own
``stack`` (one copy into one contiguous block, which then moves to a device in one copy);
Python ints become int64, floats float64 and bools bool (as PyTorch does); strings stay as they
are; tuples, lists, dicts and namedtuples are collated field by field.

>>> import ember
>>> from ember.data import default_collate
>>> default_collate([(ember.zeros(2), 1), (ember.ones(2), 2)])
[tensor([[0., 0.],
        [1., 1.]]), tensor([1, 2])]
>>> default_collate([{"x": 1.5, "name": "a"}, {"x": 2.5, "name": "b"}])
{'x': tensor([1.5000, 2.5000], dtype=ember.float64), 'name': ['a', 'b']}
"""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable

import numpy as np

from .. import dtypes as _dt
from .._errors import ShapeError
from .._tensor import Tensor
from ..backend import xp_of

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map"]

_STR_OR_OBJECT = re.compile(r"[SaUO]")  # NumPy dtype codes that cannot become tensors

_ERR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _as_tensor(data) -> Tensor:
    from ..functions.creation import as_tensor

    return as_tensor(data)


def default_convert(data):
    """Convert NumPy arrays (also inside lists, tuples, dicts) to tensors; leave the rest.

    The collate function used when automatic batching is off (``batch_size=None``).

    >>> import numpy as np
    >>> from ember.data import default_convert
    >>> default_convert((np.arange(2), "x", 3))
    [tensor([0, 1]), 'x', 3]
    """
    if isinstance(data, Tensor):
        return data
    elem_type = type(data)
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "bytes_"):
        if isinstance(data, np.ndarray) and _STR_OR_OBJECT.search(data.dtype.str):
            return data
        return _as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: default_convert(data[k]) for k in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # a list, as PyTorch does
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(elem, values: dict):
    """A mapping like ``elem`` (same type, extra attributes kept) holding ``values``."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(values)
            return clone
        return type(elem)(values)
    except TypeError:  # a mapping type that can't be built this way
        return values


def _rebuild_sequence(elem, values: list):
    try:
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(elem)(values)
    except TypeError:
        return values


def collate(batch, *, collate_fn_map: dict | None = None):
    """Collate ``batch`` (a list of samples) using ``collate_fn_map`` for the leaf types.

    ``collate_fn_map`` maps a type (or tuple of types) to ``fn(batch, *, collate_fn_map)``;
    an exact type match wins, then the first ``isinstance`` match in insertion order.
    Containers (mappings, namedtuples, sequences) are handled here, field by field.

    >>> from ember.data.collate import collate, default_collate_fn_map
    >>> collate([[1, 2], [3, 4]], collate_fn_map=default_collate_fn_map)
    [tensor([1, 3]), tensor([2, 4])]
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        fn = collate_fn_map.get(elem_type)
        if fn is not None:
            return fn(batch, collate_fn_map=collate_fn_map)
        for key, fn in collate_fn_map.items():
            if isinstance(elem, key):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        values = {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem}
        return _rebuild_mapping(elem, values)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        values = [collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return values  # a list, as PyTorch does
        return _rebuild_sequence(elem, values)
    raise TypeError(_ERR.format(elem_type))


def _stack_arrays(arrays, what: str):
    first = arrays[0]
    xp = xp_of(first)
    try:
        out = xp.stack(arrays)
    except ValueError:
        for i, a in enumerate(arrays):
            if a.shape != first.shape:
                raise ShapeError(
                    f"{what} expects each tensor to be equal size, but got {list(first.shape)} at "
                    f"entry 0 and {list(a.shape)} at entry {i}"
                ) from None
        raise
    if out.dtype != first.dtype:  # mixed dtypes: promote the PyTorch way, not NumPy's
        dt = _dt.from_numpy_dtype(first.dtype)
        for a in arrays[1:]:
            dt = _dt.promote_types(dt, _dt.from_numpy_dtype(a.dtype))
        if dt.np != out.dtype:
            out = out.astype(dt.np)
    return out


def collate_tensor_fn(batch, *, collate_fn_map=None) -> Tensor:
    """Stack tensors along a new first dimension (one copy, on the tensors' device)."""
    if any(t._requires_grad for t in batch):  # keep the autograd history
        from ..functions.shape import stack

        return stack(list(batch), 0)
    return Tensor._make(_stack_arrays([t._data for t in batch], "stack"))


def collate_numpy_array_fn(batch, *, collate_fn_map=None) -> Tensor:
    if _STR_OR_OBJECT.search(batch[0].dtype.str):
        raise TypeError(_ERR.format(batch[0].dtype))
    out = _stack_arrays(list(batch), "default_collate")
    _dt.from_numpy_dtype(out.dtype)  # a clear error for dtypes ember has no tensor for
    return Tensor._make(out)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None) -> Tensor:
    return _as_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None) -> Tensor:
    return Tensor._make(np.asarray(batch, dtype=np.float64))


def collate_int_fn(batch, *, collate_fn_map=None) -> Tensor:
    # As torch.tensor(batch): ints -> int64, bools -> bool, ints mixed with floats -> float32.
    arr = np.asarray(batch)
    if arr.dtype.kind == "i" and arr.dtype != np.int64:
        arr = arr.astype(np.int64)
    elif arr.dtype.kind not in "ib":  # floats mixed in, or ints too large for int64
        from ..functions.creation import tensor

        return tensor(batch)
    return Tensor._make(arr)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map: dict[type | tuple[type, ...], Callable] = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Collate a list of samples into a batch (the default ``collate_fn`` of ``DataLoader``).

    Tensors/arrays -> one stacked tensor; ints -> int64; floats -> float64; bools -> bool;
    str/bytes -> unchanged list; mappings, namedtuples and sequences -> the same structure with
    each field collated (tuples become lists, as in PyTorch).

    >>> from collections import namedtuple
    >>> from ember.data import default_collate
    >>> default_collate([0, 1, 2])
    tensor([0, 1, 2])
    >>> Point = namedtuple("Point", ["x", "y"])
    >>> default_collate([Point(0, 0.5), Point(1, 1.5)])
    Point(x=tensor([0, 1]), y=tensor([0.5000, 1.5000], dtype=ember.float64))
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
