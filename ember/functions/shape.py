"""Shape functions: reshape/view, squeeze, expand, permute, cat/stack, split, flip, repeat...

Primitives are few (``Reshape``, ``Permute``, ``Expand``, ``BasicIndex``, ``Cat``, ``Flip``,
``Roll``); everything else here is built from them, so it has no gradient code of its own.
Results are views of the input wherever PyTorch's are (reshape of a contiguous tensor, squeeze,
transpose, narrow, split, unbind, expand...).

>>> import ember
>>> ember.ones(2, 3).view(-1).shape
ember.Size([6])
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from .. import _caches
from .. import dtypes as _dt
from .._errors import DTypeError, EmberIndexError, ShapeError
from .._shape import wrap_dim
from .._tensor import Tensor
from ..ops import movement as M
from ..ops.base import apply
from ..ops.broadcast import Expand
from ..ops.elementwise import cast
from ..ops.indexing import FULL, basic_index, slice_dim

# -- helpers -----------------------------------------------------------------------------------


def _shape_arg(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    if type(shape) is tuple and all(type(s) is int for s in shape):
        return shape
    try:
        return tuple(int(s) for s in shape)
    except TypeError:
        raise DTypeError(f"expected a shape of integers, got {shape!r}") from None


def _dims_arg(dims, ndim: int, op: str) -> tuple:
    if isinstance(dims, int):
        dims = (dims,)
    out = tuple(wrap_dim(int(d), ndim, op) for d in dims)
    if len(set(out)) != len(out):
        raise ShapeError(f"{op}: dim {list(dims)} appears multiple times in the list of dims")
    return out


def infer_shape(shape: tuple, numel: int, op: str, src: tuple) -> tuple:
    """Fill in a single -1 in ``shape`` so it holds ``numel`` elements."""
    known = prod(shape)
    if known == numel and known >= 0 and min(shape, default=0) >= 0:
        return shape
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise ShapeError(f"{op}: only one dimension can be inferred (-1), got shape {list(shape)}")
    for s in shape:
        if s < -1:
            raise ShapeError(f"{op}: invalid shape dimension {s} in {list(shape)}")
    if unknown:
        known = -known
        if known == 0 or numel % known:
            raise ShapeError(
                f"{op}: shape {list(shape)} is invalid for input of shape {list(src)} "
                f"({numel} elements)"
            )
        return shape[: unknown[0]] + (numel // known,) + shape[unknown[0] + 1 :]
    raise ShapeError(
        f"{op}: shape {list(shape)} is invalid for input of shape {list(src)} ({numel} elements)"
    )


_RESHAPE_OPS: dict = {}
_caches.register("reshape ops", _RESHAPE_OPS.clear, _RESHAPE_OPS.__len__)


def _reshape_op(shape: tuple) -> M.Reshape:
    if not all(type(s) is int for s in shape):  # unknown sizes of a graph: never shared
        return M.Reshape(shape)
    op = _RESHAPE_OPS.get(shape)
    if op is None:
        if len(_RESHAPE_OPS) > 4096:
            _RESHAPE_OPS.clear()
        op = _RESHAPE_OPS[shape] = M.Reshape(shape)
    return op


def _reshape(x: Tensor, shape: tuple) -> Tensor:
    return apply(_reshape_op(shape), x)


# -- reshaping ---------------------------------------------------------------------------------


def reshape(input: Tensor, *shape) -> Tensor:
    """The same elements in a new shape (one dimension may be -1); a view when possible.

    >>> import ember
    >>> ember.reshape(ember.arange(6), (2, -1)).shape
    ember.Size([2, 3])
    """
    target = infer_shape(_shape_arg(shape), input._data.size, "reshape", input._data.shape)
    return apply(_reshape_op(target), input)


def view(input: Tensor, *shape) -> Tensor:
    """The same elements in a new shape (ember copies where NumPy cannot make a view).

    >>> import ember
    >>> ember.ones(4).view(2, 2).shape
    ember.Size([2, 2])
    """
    if len(shape) == 1 and isinstance(shape[0], (_dt.DType, type, str)):
        raise DTypeError("view: reinterpreting the dtype (view(dtype)) is not supported")
    target = infer_shape(_shape_arg(shape), input._data.size, "view", input._data.shape)
    return apply(_reshape_op(target), input)


def view_as(input: Tensor, other: Tensor) -> Tensor:
    """``input.view(other.shape)``.

    >>> import ember
    >>> ember.arange(4).view_as(ember.zeros(2, 2)).shape
    ember.Size([2, 2])
    """
    return view(input, tuple(other.shape))


def reshape_as(input: Tensor, other: Tensor) -> Tensor:
    """``input.reshape(other.shape)``.

    >>> import ember
    >>> ember.arange(4).reshape_as(ember.zeros(4, 1)).shape
    ember.Size([4, 1])
    """
    return reshape(input, tuple(other.shape))


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions ``start_dim..end_dim`` into one (a 0-d tensor becomes 1-d).

    >>> import ember
    >>> ember.zeros(2, 3, 4).flatten(1).shape
    ember.Size([2, 12])
    """
    shape = input._data.shape
    n = len(shape)
    if n == 0:
        return _reshape(input, (1,))
    s, e = wrap_dim(start_dim, n, "flatten"), wrap_dim(end_dim, n, "flatten")
    if s > e:
        raise ShapeError(
            f"flatten: start_dim cannot come after end_dim (got {start_dim} and {end_dim} for a "
            f"{n}-d tensor)"
        )
    if s == e:
        return input
    m = 1
    for d in shape[s : e + 1]:
        m *= d
    return _reshape(input, shape[:s] + (m,) + shape[e + 1 :])


def ravel(input: Tensor) -> Tensor:
    """The elements as a 1-d tensor (a view when possible).

    >>> import ember
    >>> ember.zeros(2, 3).ravel().shape
    ember.Size([6])
    """
    return _reshape(input, (input._data.size,))


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    """Split dimension ``dim`` into ``sizes`` (one may be -1).

    >>> import ember
    >>> ember.zeros(2, 12).unflatten(1, (3, -1)).shape
    ember.Size([2, 3, 4])
    """
    shape = input._data.shape
    d = wrap_dim(dim, len(shape), "unflatten")
    sizes = _shape_arg((sizes,))
    if not sizes:
        raise ShapeError("unflatten: sizes must be non-empty")
    sizes = infer_shape(sizes, shape[d] if shape else 1, "unflatten", shape)
    return _reshape(input, shape[:d] + sizes + shape[d + 1 :])


def squeeze(input: Tensor, dim=None) -> Tensor:
    """Remove dimensions of size 1 (all of them, or those in ``dim`` that have size 1).

    >>> import ember
    >>> ember.zeros(2, 1, 3, 1).squeeze().shape, ember.zeros(2, 1, 3).squeeze(0).shape
    (ember.Size([2, 3]), ember.Size([2, 1, 3]))
    """
    shape = input._data.shape
    if dim is None:
        drop = {i for i, s in enumerate(shape) if s == 1}
    else:
        drop = {d for d in _dims_arg(dim, len(shape), "squeeze") if shape and shape[d] == 1}
    return _reshape(input, tuple(s for i, s in enumerate(shape) if i not in drop))


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at ``dim`` (in ``[-ndim - 1, ndim]``).

    >>> import ember
    >>> ember.zeros(2, 3).unsqueeze(-1).shape
    ember.Size([2, 3, 1])
    """
    shape = input._data.shape
    d = wrap_dim(dim, len(shape) + 1, "unsqueeze")
    return _reshape(input, shape[:d] + (1,) + shape[d:])


# -- broadcasting ------------------------------------------------------------------------------


def expand(input: Tensor, *sizes) -> Tensor:
    """Broadcast to ``sizes`` without copying (-1 keeps a dimension); a read-only view.

    >>> import ember
    >>> ember.tensor([[1], [2]]).expand(2, 3)
    tensor([[1, 1, 1],
            [2, 2, 2]])
    """
    sizes = _shape_arg(sizes)
    shape = input._data.shape
    lead = len(sizes) - len(shape)
    if lead < 0:
        raise ShapeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to "
            f"the number of dimensions in the tensor ({len(shape)})"
        )
    target = list(sizes)
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise ShapeError(
                    f"expand: the expanded size of the tensor ({s}) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            continue
        have = shape[i - lead]
        if s == -1:
            target[i] = have
        elif have != s and have != 1:
            raise ShapeError(
                f"expand: the expanded size of the tensor ({s}) must match the existing size "
                f"({have}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                f"Tensor sizes: {list(shape)}"
            )
        elif s < 0:
            raise ShapeError(f"expand: invalid size {s} in {list(sizes)}")
    return apply(Expand(tuple(target)), input)


def expand_as(input: Tensor, other: Tensor) -> Tensor:
    """``input.expand(other.shape)``.

    >>> import ember
    >>> ember.ones(3).expand_as(ember.zeros(2, 3)).shape
    ember.Size([2, 3])
    """
    return expand(input, tuple(other.shape))


def broadcast_to(input: Tensor, size) -> Tensor:
    """``input.expand(size)``.

    >>> import ember
    >>> ember.broadcast_to(ember.ones(3), (2, 3)).shape
    ember.Size([2, 3])
    """
    return expand(input, tuple(size))


# -- reordering --------------------------------------------------------------------------------


def permute(input: Tensor, *dims) -> Tensor:
    """Reorder dimensions (a view).

    >>> import ember
    >>> ember.zeros(2, 3, 4).permute(2, 0, 1).shape
    ember.Size([4, 2, 3])
    """
    n = input._data.ndim
    dims = _shape_arg(dims)
    if len(dims) != n:
        raise ShapeError(
            f"permute: number of dims don't match in permute: input has {n} dims ("
            f"shape {list(input.shape)}) but {len(dims)} were given: {list(dims)}"
        )
    return apply(M.Permute(_dims_arg(dims, n, "permute")), input)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions (a view).

    >>> import ember
    >>> ember.zeros(2, 3).transpose(0, 1).shape
    ember.Size([3, 2])
    """
    n = input._data.ndim
    d0, d1 = wrap_dim(dim0, n, "transpose"), wrap_dim(dim1, n, "transpose")
    dims = list(range(n))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return apply(M.Permute(tuple(dims)), input)


def t(input: Tensor) -> Tensor:
    """Transpose a tensor of at most 2 dimensions.

    >>> import ember
    >>> ember.zeros(2, 3).t().shape
    ember.Size([3, 2])
    """
    if input.ndim > 2:
        raise ShapeError(f"t: expects a tensor with <= 2 dimensions, but got {input.ndim}-D")
    return transpose(input, 0, -1) if input.ndim == 2 else apply(basic_index(()), input)


def movedim(input: Tensor, source, destination) -> Tensor:
    """Move dimensions ``source`` to positions ``destination`` (a view).

    >>> import ember
    >>> ember.zeros(2, 3, 4).movedim(0, -1).shape
    ember.Size([3, 4, 2])
    """
    n = input._data.ndim
    src = _dims_arg(source, n, "movedim")
    dst = _dims_arg(destination, n, "movedim")
    if len(src) != len(dst):
        raise ShapeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)"
        )
    order = [d for d in range(n) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return apply(M.Permute(tuple(order)), input)


def _T(self: Tensor) -> Tensor:
    return apply(M.Permute(tuple(range(self.ndim - 1, -1, -1))), self)


def _mT(self: Tensor) -> Tensor:
    if self.ndim < 2:
        raise ShapeError(f"mT: tensor must have at least 2 dimensions, got {self.ndim}")
    return transpose(self, -2, -1)


# -- slicing along a dim -----------------------------------------------------------------------


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


# -- joining -----------------------------------------------------------------------------------


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


def cat(tensors, dim: int = 0, *, out=None) -> Tensor:
    """Concatenate along ``dim``, promoting dtypes as PyTorch does (1-d empty tensors are
    skipped, as in PyTorch).

    >>> import ember
    >>> ember.cat([ember.tensor([1, 2]), ember.tensor([3.5])])
    tensor([1.0000, 2.0000, 3.5000])
    """
    if out is not None:
        raise DTypeError("cat: the out= argument is not supported")
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


def stack(tensors, dim: int = 0, *, out=None) -> Tensor:
    """Join same-shape tensors along a new dimension ``dim``.

    >>> import ember
    >>> ember.stack([ember.ones(2), ember.zeros(2)], dim=1)
    tensor([[1., 0.],
            [1., 0.]])
    """
    if out is not None:
        raise DTypeError("stack: the out= argument is not supported")
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
    return apply(M.Cat(d), *(_reshape(t, new) for t in _same_dtype(tensors)))


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


# -- flip, roll, repeat ------------------------------------------------------------------------


def flip(input: Tensor, dims, *more: int) -> Tensor:
    """Reverse the order of elements along ``dims`` (a copy).

    >>> import ember
    >>> ember.arange(3).flip(0)
    tensor([2, 1, 0])
    """
    if isinstance(dims, int):
        dims = (dims,)
    dims = tuple(dims) + tuple(more)
    return apply(M.Flip(_dims_arg(tuple(dims), input._data.ndim, "flip")), input)


def fliplr(input: Tensor) -> Tensor:
    """Flip along dim 1.

    >>> import ember
    >>> ember.tensor([[1, 2]]).fliplr()
    tensor([[2, 1]])
    """
    if input.ndim < 2:
        raise ShapeError("fliplr: input must be >= 2-d")
    return flip(input, (1,))


def flipud(input: Tensor) -> Tensor:
    """Flip along dim 0.

    >>> import ember
    >>> ember.tensor([1, 2]).flipud()
    tensor([2, 1])
    """
    if input.ndim < 1:
        raise ShapeError("flipud: input must be >= 1-d")
    return flip(input, (0,))


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """Shift elements cyclically along ``dims`` (the flattened tensor when ``dims`` is None).

    >>> import ember
    >>> ember.arange(4).roll(1)
    tensor([3, 0, 1, 2])
    """
    shifts = (int(shifts),) if isinstance(shifts, int) else tuple(int(s) for s in shifts)
    if dims is None:
        if len(shifts) != 1:
            raise ShapeError(
                f"roll: shifts and dimensions must align (shifts: {len(shifts)}, dims: 0)"
            )
        return apply(M.Roll(shifts, None), input)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise ShapeError(
            f"roll: shifts and dimensions must align (shifts: {len(shifts)}, dims: {len(dims)})"
        )
    n = input._data.ndim
    return apply(M.Roll(shifts, tuple(wrap_dim(int(d), n, "roll") for d in dims)), input)


def repeat(input: Tensor, *sizes) -> Tensor:
    """Tile the tensor ``sizes[i]`` times along each dimension (leading new dims allowed).

    >>> import ember
    >>> ember.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
    """
    reps = _shape_arg(sizes)
    shape = input._data.shape
    if len(reps) < len(shape):
        raise ShapeError(
            f"repeat: number of dimensions of repeat dims ({len(reps)}) can not be smaller than "
            f"number of dimensions of tensor ({len(shape)})"
        )
    if any(r < 0 for r in reps):
        raise ShapeError(f"repeat: repeats can not be negative, got {list(reps)}")
    shape = (1,) * (len(reps) - len(shape)) + shape
    inter, big, final = [], [], []
    for r, s in zip(reps, shape):
        inter += [1, s]
        big += [r, s]
        final.append(r * s)
    if all(r == 1 for r in reps):  # nothing to tile: still a copy, as in PyTorch
        from .conversion import clone

        return clone(_reshape(input, tuple(final)))
    x = _reshape(input, tuple(inter))
    x = apply(Expand(tuple(big)), x)
    return _reshape(x, tuple(final))


def tile(input: Tensor, dims) -> Tensor:
    """Like ``repeat``, but fewer ``dims`` than dimensions are padded with 1s in front.

    >>> import ember
    >>> ember.tensor([[1, 2]]).tile((2,))
    tensor([[1, 2, 1, 2]])
    """
    dims = _shape_arg((dims,))
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


__all__ = [
    "reshape",
    "view_as",
    "reshape_as",
    "flatten",
    "ravel",
    "unflatten",
    "squeeze",
    "unsqueeze",
    "expand_as",
    "broadcast_to",
    "permute",
    "transpose",
    "swapaxes",
    "swapdims",
    "t",
    "movedim",
    "moveaxis",
    "narrow",
    "select",
    "split",
    "chunk",
    "tensor_split",
    "unbind",
    "cat",
    "concat",
    "concatenate",
    "stack",
    "hstack",
    "vstack",
    "atleast_1d",
    "flip",
    "fliplr",
    "flipud",
    "roll",
    "tile",
]

swapaxes = swapdims = transpose
moveaxis = movedim

TENSOR_METHODS = {
    "reshape": reshape,
    "view": view,
    "view_as": view_as,
    "reshape_as": reshape_as,
    "flatten": flatten,
    "ravel": ravel,
    "unflatten": unflatten,
    "squeeze": squeeze,
    "unsqueeze": unsqueeze,
    "expand": expand,
    "expand_as": expand_as,
    "broadcast_to": broadcast_to,
    "permute": permute,
    "transpose": transpose,
    "swapaxes": transpose,
    "swapdims": transpose,
    "t": t,
    "movedim": movedim,
    "moveaxis": movedim,
    "narrow": narrow,
    "select": select,
    "split": split,
    "chunk": chunk,
    "tensor_split": tensor_split,
    "unbind": unbind,
    "flip": flip,
    "fliplr": fliplr,
    "flipud": flipud,
    "roll": roll,
    "repeat": repeat,
    "tile": tile,
    "T": property(_T),
    "mT": property(_mT),
}
