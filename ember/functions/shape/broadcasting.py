"""Broadcasting: expand, expand_as and broadcast_to (``Expand``, a view with stride 0 along the
new or widened dims).

>>> import ember
>>> ember.tensor([1, 2]).expand(2, -1)
tensor([[1, 2],
        [1, 2]])
"""

from __future__ import annotations

from ..._errors import ShapeError
from ..._tensor import Tensor
from ...ops.base import apply
from ...ops.broadcast import Expand
from ._arguments import _shape_arg


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
    for i in reversed(range(len(sizes))):  # the last dimension first, as PyTorch checks
        s = sizes[i]
        if i < lead:
            if s < 0:
                raise ShapeError(
                    f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            continue
        have = shape[i - lead]
        if s == -1:
            target[i] = have
        elif have != s and have != 1:
            raise ShapeError(
                f"The expanded size of the tensor ({s}) must match the existing size "
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


def sum_to_size(input: Tensor, *size) -> Tensor:
    """``input`` summed down to ``size``, which must expand to ``input``'s shape (the reverse
    of ``expand``).

    >>> import ember
    >>> ember.ones(2, 3).sum_to_size(1, 3)
    tensor([[2., 2., 2.]])
    """
    from ...ops.broadcast import sum_to

    shape = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else tuple(size)
    target = tuple(input.shape)
    lead = len(target) - len(shape)
    if lead < 0 or any(s not in (1, t) for s, t in zip(shape, target[lead:])):
        raise ShapeError(
            f"sum_to_size: size {list(shape)} is not expandable to size {list(target)}"
        )
    return sum_to(input, shape)
