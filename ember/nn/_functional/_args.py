"""Argument normalization shared by convolution and pooling functions."""

from __future__ import annotations


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
