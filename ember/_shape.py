"""Shape arithmetic shared by infer rules and tensor methods: broadcasting, dimension wrapping."""

from __future__ import annotations

from ._errors import EmberIndexError, ShapeError


def broadcast_shapes(op: str, *shapes) -> tuple:
    """The broadcast of ``shapes``, or an error naming the op, both shapes and the dimension.

    >>> broadcast_shapes("add", (2, 1), (3,))
    (2, 3)
    """
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(-ndim, 0):
        size = 1
        for s in shapes:
            d = s[i] if -i <= len(s) else 1
            if d != 1:
                if size != 1 and d != size:
                    shown = " and ".join(str(tuple(x)) for x in shapes)
                    raise ShapeError(
                        f"{op}: shapes {shown} cannot be broadcast together: dimension {i} "
                        f"has sizes {size} and {d}"
                    )
                size = d
        out.append(size)
    return tuple(out)


def wrap_dim(dim: int, ndim: int, op: str) -> int:
    """``dim`` made non-negative, or an IndexError naming the op and the valid range."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise EmberIndexError(
            f"{op}: dimension out of range (expected to be in range of [{-n}, {n - 1}], "
            f"but got {dim})"
        )
    return dim % n
