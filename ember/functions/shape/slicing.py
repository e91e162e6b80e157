"""Slicing along one dim: narrow, select, split, chunk, tensor_split and unbind, each piece a
view of the input (``BasicIndex``).

>>> import ember
>>> [p.tolist() for p in ember.arange(5).split(2)]
[[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

from collections.abc import Sequence

from ..._errors import EmberIndexError, ShapeError
from ..._shape import wrap_dim
from ..._tensor import Tensor
from ...ops.base import apply
from ...ops.indexing import FULL, basic_index, slice_dim


def narrow(input: Tensor, dim: int, start, length: int) -> Tensor:
    """Elements ``start .. start + length - 1`` along ``dim`` (a view).

    >>> import ember
    >>> ember.arange(6).narrow(0, 2, 3)
    tensor([2, 3, 4])
    """
    shape = input._data.shape
    if not shape:
        raise EmberIndexError("narrow: cannot be applied to a 0-dim tensor")
    d = wrap_dim(dim, len(shape), "narrow")
    n = shape[d]
    start = int(start)
    if not -n <= start <= n:
        raise EmberIndexError(f"narrow: start ({start}) out of range for dimension {d} of size {n}")
    start %= n if n else 1
    if length < 0 or start + length > n:
        raise EmberIndexError(
            f"narrow: start ({start}) + length ({length}) exceeds dimension size ({n})"
        )
    return slice_dim(input, d, start, start + length)


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at ``index`` along ``dim``, with that dimension removed (a view).

    >>> import ember
    >>> ember.arange(6).view(2, 3).select(1, -1)
    tensor([2, 5])
    """
    shape = input._data.shape
    if not shape:
        raise EmberIndexError("select: cannot be applied to a 0-dim tensor")
    d = wrap_dim(dim, len(shape), "select")
    n = shape[d]
    i = int(index)
    if not -n <= i < n:
        raise EmberIndexError(
            f"select: index {i} out of range for tensor of size {list(shape)} at dimension {d}"
        )
    return apply(basic_index((FULL,) * d + (i % n,)), input)


def split(tensor: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Split into pieces of ``split_size`` (the last may be smaller) or of the given sizes.

    >>> import ember
    >>> [p.tolist() for p in ember.arange(5).split(2)]
    [[0, 1], [2, 3], [4]]
    """
    shape = tensor._data.shape
    if not shape:
        raise ShapeError("split: expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, len(shape), "split")
    n = shape[d]
    if isinstance(split_size_or_sections, Sequence) or hasattr(split_size_or_sections, "tolist"):
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise ShapeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                f"at dimension {d}), but got split_sizes={sizes}"
            )
    else:
        size = int(split_size_or_sections)
        if size < 0 or (size == 0 and n != 0):
            raise ShapeError(f"split: split_size can only be 0 if dimension size is 0, got {size}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if n else [0]
    out, start = [], 0
    for s in sizes:
        out.append(slice_dim(tensor, d, start, start + s))
        start += s
    return tuple(out)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """Split into ``chunks`` pieces of equal size (the last may be smaller, and there may be
    fewer pieces, as in PyTorch).

    >>> import ember
    >>> [p.tolist() for p in ember.arange(5).chunk(3)]
    [[0, 1], [2, 3], [4]]
    """
    if chunks <= 0:
        raise ShapeError(f"chunk: chunk expects `chunks` to be greater than 0, got: {chunks}")
    shape = input._data.shape
    if not shape:
        raise ShapeError("chunk: expects at least a 1-dimensional tensor")
    n = shape[wrap_dim(dim, len(shape), "chunk")]
    return split(input, -(-n // chunks) if n else [0] * chunks, dim)


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    """Split into ``n`` nearly equal pieces, or at the given indices.

    >>> import ember
    >>> [p.tolist() for p in ember.tensor_split(ember.arange(5), 3)]
    [[0, 1], [2, 3], [4]]
    """
    shape = input._data.shape
    d = wrap_dim(dim, len(shape), "tensor_split")
    n = shape[d]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise ShapeError(f"tensor_split: number of sections must be larger than 0, got {k}")
        q, r = divmod(n, k)
        bounds = [i * q + min(i, r) for i in range(k + 1)]
    else:
        cuts = [min(max(int(i) if i >= 0 else int(i) + n, 0), n) for i in indices_or_sections]
        bounds = [0] + cuts + [n]
    return tuple(slice_dim(input, d, a, max(a, b)) for a, b in zip(bounds[:-1], bounds[1:]))


def split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    """Split into pieces of the given sizes along ``dim`` (they must sum to its size).

    >>> import ember
    >>> [p.tolist() for p in ember.arange(5).split_with_sizes([3, 2])]
    [[0, 1, 2], [3, 4]]
    """
    return split(input, list(split_sizes), dim)


def _split_along(input: Tensor, sections, dim: int, name: str, min_ndim: int) -> tuple:
    if input.ndim < min_ndim:
        raise ShapeError(
            f"torch.{name} requires a tensor with at least {min_ndim} dimension, but got a tensor "
            f"with {input.ndim} dimensions!"
        )
    if isinstance(sections, int) and sections > 0 and input.shape[dim] % sections:
        raise ShapeError(
            f"torch.{name} attempted to split along dimension {dim}, but the size of the "
            f"dimension {input.shape[dim]} is not divisible by the split_size {sections}!"
        )
    return tensor_split(input, sections, dim)


def hsplit(input: Tensor, indices_or_sections) -> tuple:
    """``tensor_split`` along the columns (dim 1; dim 0 of a 1-D tensor), equal sections only.

    >>> import ember
    >>> [p.shape for p in ember.ones(2, 4).hsplit(2)]
    [ember.Size([2, 2]), ember.Size([2, 2])]
    """
    return _split_along(input, indices_or_sections, 1 if input.ndim > 1 else 0, "hsplit", 1)


def vsplit(input: Tensor, indices_or_sections) -> tuple:
    """``tensor_split`` along the rows (dim 0) of a tensor of 2 or more dims.

    >>> import ember
    >>> [p.shape for p in ember.vsplit(ember.ones(4, 2), [1])]
    [ember.Size([1, 2]), ember.Size([3, 2])]
    """
    return _split_along(input, indices_or_sections, 0, "vsplit", 2)


def dsplit(input: Tensor, indices_or_sections) -> tuple:
    """``tensor_split`` along the depth (dim 2) of a tensor of 3 or more dims.

    >>> import ember
    >>> len(ember.dsplit(ember.ones(1, 1, 6), 3))
    3
    """
    return _split_along(input, indices_or_sections, 2, "dsplit", 3)


def unbind(input: Tensor, dim: int = 0) -> tuple:
    """The slices along ``dim``, each with that dimension removed (views).

    >>> import ember
    >>> [u.tolist() for u in ember.arange(4).view(2, 2).unbind(1)]
    [[0, 2], [1, 3]]
    """
    shape = input._data.shape
    if not shape:
        raise ShapeError("unbind: dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, len(shape), "unbind")
    return tuple(apply(basic_index((FULL,) * d + (i,)), input) for i in range(shape[d]))
