"""Reshaping: reshape, view, view_as, reshape_as, flatten, ravel, unflatten, squeeze and
unsqueeze, all on the one ``Reshape`` primitive (one op object per shape, cached); views of
the input wherever PyTorch's are.

>>> import ember
>>> ember.zeros(2, 1, 3).squeeze(1).shape
ember.Size([2, 3])
"""

from __future__ import annotations

from ... import _caches
from ... import dtypes as _dt
from ..._errors import DTypeError, ShapeError
from ..._node import named
from ..._shape import wrap_dim
from ..._tensor import Tensor
from ...ops import movement as M
from ...ops.base import apply
from ._arguments import _dims_arg, _shape_arg, infer_shape

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


def reshape(input: Tensor, *shape) -> Tensor:
    """The same elements in a new shape (one dimension may be -1); a view when possible.

    >>> import ember
    >>> ember.reshape(ember.arange(6), (2, -1)).shape
    ember.Size([2, 3])
    """
    target = infer_shape(_shape_arg(shape), input._data.size, "reshape", input._data.shape)
    return apply(_reshape_op(target), input)


def _viewable(shape: tuple, strides: tuple, new_shape: tuple) -> bool:
    """Whether an array of ``shape`` and ``strides`` (in elements) can be seen as ``new_shape``
    without a copy: PyTorch's ``computeStride``. Each run of dimensions that are contiguous with
    each other ("a contiguous subspace") must map to whole dimensions of the new shape."""
    if not shape or 0 in shape:
        return True
    view_d = len(new_shape) - 1
    chunk_base_stride = strides[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        if tensor_d == 0 or (
            shape[tensor_d - 1] != 1 and strides[tensor_d - 1] != tensor_numel * chunk_base_stride
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return False
            if tensor_d > 0:
                chunk_base_stride = strides[tensor_d - 1]
                tensor_numel = view_numel = 1
    return view_d == -1


def view(input: Tensor, *shape) -> Tensor:
    """The same elements in a new shape, sharing memory with ``input`` (writes to one show in
    the other). As in PyTorch, a view of a tensor whose strides don't allow the new shape (a
    transposed or expanded tensor, most often) is an error: use ``reshape``, which copies then.

    >>> import ember
    >>> x = ember.zeros(4)
    >>> y = x.view(2, 2)
    >>> y[0, 1] = 5.0
    >>> x
    tensor([0., 5., 0., 0.])
    >>> ember.zeros(2, 3).t().view(-1)
    Traceback (most recent call last):
    ember._errors.ShapeError: view size is not compatible with input tensor's size and stride ...
    """
    if len(shape) == 1 and isinstance(shape[0], (_dt.DType, type, str)):
        raise DTypeError("view: reinterpreting the dtype (view(dtype)) is not supported")
    data = input._data
    target = infer_shape(_shape_arg(shape), data.size, "view", data.shape)
    strides = getattr(data, "strides", None)  # (none on a value being traced)
    # A tensor that is no view (_base None) with an unusual layout of NumPy's making is one
    # PyTorch would hold contiguous: copied, as before, rather than refused.
    if (
        strides is not None
        and input._base is not None
        and not data.flags.c_contiguous
        and not _viewable(data.shape, tuple(s // data.itemsize for s in strides), target)
    ):
        raise ShapeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead. "
            f"(view: input of shape {list(data.shape)} and strides "
            f"{[s // data.itemsize for s in strides]} as shape {list(target)})"
        )
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
    out = _reshape(input, tuple(s for i, s in enumerate(shape) if i not in drop))
    form = 0 if dim is None else 2 if isinstance(dim, (tuple, list)) else 1  # PyTorch's overload
    return named(out, f"SqueezeBackward{form}")


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at ``dim`` (in ``[-ndim - 1, ndim]``).

    >>> import ember
    >>> ember.zeros(2, 3).unsqueeze(-1).shape
    ember.Size([2, 3, 1])
    """
    shape = input._data.shape
    d = wrap_dim(dim, len(shape) + 1, "unsqueeze")
    return named(_reshape(input, shape[:d] + (1,) + shape[d:]), "UnsqueezeBackward0")
