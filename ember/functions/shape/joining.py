"""Joining: cat (concat, concatenate), stack, hstack, vstack and atleast_1d, with PyTorch's
dtype promotion across the inputs and its legacy skipping of 1-D empty tensors in cat.

>>> import ember
>>> ember.stack([ember.tensor([1, 2]), ember.tensor([3, 4])], 1)
tensor([[1, 3],
        [2, 4]])
"""

from __future__ import annotations

from ... import dtypes as _dt
from ..._errors import DTypeError, ShapeError
from ..._node import named
from ..._shape import wrap_dim
from ..._tensor import Tensor
from ...ops import movement as M
from ...ops.base import apply
from ...ops.elementwise import cast
from .reshaping import _reshape


def _tensor_list(tensors, op: str) -> list:
    if isinstance(tensors, Tensor):
        raise DTypeError(
            f"{op}() received an invalid combination of arguments: expected a tuple or list of "
            "tensors, got a single Tensor"
        )
    tensors = list(tensors)
    if not tensors:
        raise ShapeError(f"{op}(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise DTypeError(
                f"{op}(): expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
    return tensors


def _same_dtype(tensors: list) -> list:
    dt = tensors[0].dtype
    if all(t.dtype is dt for t in tensors):
        return tensors
    for t in tensors[1:]:
        dt = _dt.promote_types(dt, t.dtype)
    return [cast(t, dt) for t in tensors]


def cat(tensors, dim: int = 0) -> Tensor:
    """Concatenate along ``dim``, promoting dtypes as PyTorch does (1-d empty tensors are
    skipped, as in PyTorch).

    >>> import ember
    >>> ember.cat([ember.tensor([1, 2]), ember.tensor([3.5])])
    tensor([1.0000, 2.0000, 3.5000])
    """
    tensors = _tensor_list(tensors, "cat")
    for i, t in enumerate(tensors):
        if not t._data.ndim:
            raise ShapeError(
                f"cat: zero-dimensional tensor (at position {i}) cannot be concatenated"
            )
    tensors = _same_dtype(tensors)
    kept = [t for t in tensors if t._data.shape != (0,)]
    if not kept:
        return tensors[0] if len(tensors) == 1 else apply(M.Cat(0), *tensors)
    if len(kept) != len(tensors) and any(t._data.ndim != 1 for t in kept):
        tensors = kept
    d = wrap_dim(dim, tensors[0]._data.ndim, "cat")
    return apply(M.Cat(d), *tensors)


concat = cat
concatenate = cat


def stack(tensors, dim: int = 0) -> Tensor:
    """Join same-shape tensors along a new dimension ``dim``.

    >>> import ember
    >>> ember.stack([ember.ones(2), ember.zeros(2)], dim=1)
    tensor([[1., 0.],
            [1., 0.]])
    """
    tensors = _tensor_list(tensors, "stack")
    shape = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != shape:
            raise ShapeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                f"and {list(t._data.shape)} at entry {i}"
            )
    d = wrap_dim(dim, len(shape) + 1, "stack")
    new = shape[:d] + (1,) + shape[d:]
    return named(
        apply(M.Cat(d), *(_reshape(t, new) for t in _same_dtype(tensors))), "StackBackward0"
    )


def hstack(tensors) -> Tensor:
    """Concatenate along dim 1 (dim 0 for 1-d tensors).

    >>> import ember
    >>> ember.hstack([ember.ones(2), ember.zeros(1)])
    tensor([1., 1., 0.])
    """
    tensors = [atleast_1d(t) for t in _tensor_list(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """Stack rows: 1-d tensors become rows, then concatenate along dim 0.

    >>> import ember
    >>> ember.vstack([ember.ones(2), ember.zeros(2)]).shape
    ember.Size([2, 2])
    """
    tensors = _tensor_list(tensors, "vstack")
    return cat([t.reshape(1, -1) if t.ndim < 2 else t for t in tensors], 0)


def atleast_1d(input: Tensor) -> Tensor:
    """``input`` with at least one dimension.

    >>> import ember
    >>> ember.atleast_1d(ember.tensor(1.0)).shape
    ember.Size([1])
    """
    return _reshape(input, (1,)) if input.ndim == 0 else input
