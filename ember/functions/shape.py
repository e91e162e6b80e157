"""Shape functions: reshape/view, permute, transpose.

>>> import ember
>>> ember.ones(2, 3).view(-1).shape
ember.Size([6])
"""

from __future__ import annotations

from .._errors import ShapeError
from .._shape import wrap_dim
from .._tensor import Tensor
from ..ops import movement as M
from ..ops.base import apply


def _shape_arg(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def infer_shape(shape: tuple, numel: int, op: str, src: tuple) -> tuple:
    """Fill in a single -1 in ``shape`` so it holds ``numel`` elements."""
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise ShapeError(f"{op}: only one dimension can be inferred (-1), got shape {shape}")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise ShapeError(f"{op}: invalid shape dimension {s} in {shape}")
            known *= s
    if unknown:
        if known == 0 or numel % known:
            raise ShapeError(f"{op}: shape {shape} is invalid for input of shape {src} ({numel} elements)")
        shape = shape[: unknown[0]] + (numel // known,) + shape[unknown[0] + 1 :]
    elif known != numel:
        raise ShapeError(f"{op}: shape {shape} is invalid for input of shape {src} ({numel} elements)")
    return shape


def reshape(input: Tensor, *shape) -> Tensor:
    """The same elements in a new shape (one dimension may be -1).

    >>> import ember
    >>> ember.reshape(ember.arange(6), (2, -1)).shape
    ember.Size([2, 3])
    """
    target = infer_shape(_shape_arg(shape), input.numel(), "reshape", tuple(input.shape))
    return M.reshape(input, target)


def view(input: Tensor, *shape) -> Tensor:
    """Like reshape (ember makes a copy where NumPy cannot make a view).

    >>> import ember
    >>> ember.ones(4).view(2, 2).shape
    ember.Size([2, 2])
    """
    target = infer_shape(_shape_arg(shape), input.numel(), "view", tuple(input.shape))
    return M.reshape(input, target)


def permute(input: Tensor, *dims) -> Tensor:
    """Reorder dimensions.

    >>> import ember
    >>> ember.zeros(2, 3, 4).permute(2, 0, 1).shape
    ember.Size([4, 2, 3])
    """
    dims = tuple(wrap_dim(d, input.ndim, "permute") for d in _shape_arg(dims))
    return apply(M.Permute(dims), input)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions.

    >>> import ember
    >>> ember.zeros(2, 3).transpose(0, 1).shape
    ember.Size([3, 2])
    """
    n = input.ndim
    d0, d1 = wrap_dim(dim0, n, "transpose"), wrap_dim(dim1, n, "transpose")
    if n < 2 or d0 == d1:
        return input
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
    return transpose(input, 0, 1) if input.ndim == 2 else input


def _T(self):
    return permute(self, tuple(range(self.ndim - 1, -1, -1)))


__all__ = ["reshape", "permute", "transpose", "t"]
TENSOR_METHODS = {
    "reshape": reshape,
    "view": view,
    "permute": permute,
    "transpose": transpose,
    "t": t,
    "T": property(_T),
}
