"""Shape arithmetic shared by infer rules and tensor methods: broadcasting, dimension wrapping."""

from __future__ import annotations

from ._errors import EmberIndexError, ShapeError


def broadcast_shapes(op: str, *shapes) -> tuple:
    """The broadcast of ``shapes``, or an error naming the op, both shapes and the dimension.

    With two shapes the error's first line is PyTorch's ("The size of tensor a (3) must match
    the size of tensor b (4) at non-singleton dimension 1"), ember's own detail follows it.

    >>> broadcast_shapes("add", (2, 1), (3,))
    (2, 3)
    """
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(-1, -ndim - 1, -1):  # from the last dimension, as PyTorch checks
        size = 1
        for s in shapes:
            d = s[i] if -i <= len(s) else 1
            if d != 1:
                if size != 1 and d != size:
                    shown = " and ".join(str(tuple(x)) for x in shapes)
                    torch_line = ""
                    if len(shapes) == 2:
                        torch_line = (
                            f"The size of tensor a ({size}) must match the size of tensor b "
                            f"({d}) at non-singleton dimension {ndim + i}\n"
                        )
                    raise ShapeError(
                        f"{torch_line}{op}: shapes {shown} cannot be broadcast together: "
                        f"dimension {i} has sizes {size} and {d}"
                    )
                size = d
        out.append(size)
    return tuple(reversed(out))


def broadcast_shapes_of(*shapes) -> tuple:
    """``torch.broadcast_shapes``: shapes (or ints) broadcast in turn, with PyTorch's error
    naming the argument that does not fit and the shape so far.

    >>> broadcast_shapes_of((2, 1), 3)
    (2, 3)
    """
    shapes = [(s,) if isinstance(s, int) else s for s in shapes]
    result = [1] * max((len(s) for s in shapes), default=0)
    for k, shape in enumerate(shapes):
        for i in range(-1, -len(shape) - 1, -1):
            if shape[i] == 1 or shape[i] == result[i]:
                continue
            if result[i] != 1:
                raise ShapeError(
                    f"Attempting to broadcast a dimension of length {shape[i]} at {i}! "
                    f"Mismatching argument at index {k} had {shape}; but expected shape should "
                    f"be broadcastable to {result}"
                )
            result[i] = shape[i]
    return tuple(result)


def wrap_dim(dim: int, ndim: int, op: str) -> int:
    """``dim`` made non-negative, or an IndexError naming the op and the valid range."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise EmberIndexError(
            f"{op}: dimension out of range (expected to be in range of [{-n}, {n - 1}], "
            f"but got {dim})"
        )
    return dim % n
