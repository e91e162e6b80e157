"""Argument normalization shared by convolution and pooling functions."""

from __future__ import annotations

from ..._errors import ShapeError


def pair(value, name: str, op: str) -> tuple:
    """An int or a 2-sequence as a 2-tuple of ints.

    >>> pair(3, "stride", "conv2d"), pair([1, 2], "stride", "conv2d")
    ((3, 3), (1, 2))
    """
    if isinstance(value, int):
        return (value, value)
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return (value[0], value[0])
    if len(value) != 2:
        raise ValueError(f"{op}: {name} must be an int or a pair of ints, got {value}")
    return value


def single(value, name: str, op: str) -> int:
    """An int or a 1-sequence as an int.

    >>> single((4,), "kernel_size", "conv1d")
    4
    """
    if isinstance(value, int):
        return value
    value = tuple(value)
    if len(value) != 1:
        raise ValueError(f"{op}: {name} must be an int or a 1-tuple, got {value}")
    return int(value[0])


def at_least(value, name: str, op: str, low: int = 1) -> None:
    """Refuse ``value`` (an int or a tuple of ints) below ``low``, naming the op and argument.

    >>> at_least((1, 0), "stride", "conv2d")
    Traceback (most recent call last):
    ember._errors.ShapeError: conv2d: stride must be greater than zero, got stride=(1, 0)
    """
    values = value if isinstance(value, tuple) else (value,)
    if any(v < low for v in values):
        what = "greater than zero" if low == 1 else "non-negative"
        raise ShapeError(f"{op}: {name} must be {what}, got {name}={value}")
