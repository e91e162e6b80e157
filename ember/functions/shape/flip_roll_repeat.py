"""Flip, roll and repeat: flip, fliplr, flipud, roll (``Flip``, ``Roll``), and repeat and tile
(built from expand and reshape).

>>> import ember
>>> ember.tensor([1, 2, 3]).roll(1)
tensor([3, 1, 2])
"""

from __future__ import annotations

from ..._errors import ShapeError
from ..._node import named
from ..._shape import wrap_dim
from ..._tensor import Tensor
from ...ops import movement as M
from ...ops.base import apply
from ...ops.broadcast import Expand
from ._arguments import _dims_arg, _shape_arg
from .reshaping import _reshape


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
    from ..conversion import clone

    if all(r == 1 for r in reps):  # nothing to tile: still a copy, as in PyTorch
        return named(clone(_reshape(input, tuple(final))), "RepeatBackward0")
    x = _reshape(input, tuple(inter))
    x = apply(Expand(tuple(big)), x)
    out = _reshape(x, tuple(final))
    if all(s == 1 for r, s in zip(reps, shape) if r > 1):  # the reshape kept the broadcast
        out = clone(out)  # view (stride 0): PyTorch's repeat always copies
    return named(out, "RepeatBackward0")


def tile(input: Tensor, dims) -> Tensor:
    """Like ``repeat``, but fewer ``dims`` than dimensions are padded with 1s in front.

    >>> import ember
    >>> ember.tensor([[1, 2]]).tile((2,))
    tensor([[1, 2, 1, 2]])
    """
    dims = _shape_arg((dims,))
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)
