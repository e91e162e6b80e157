"""Helpers shared by the model zoo: argument checks and spatial-size arithmetic."""

from __future__ import annotations

from collections.abc import Sequence


def check_common(
    name: str, num_classes: int, in_channels: int, image_size: Sequence[int] | None
) -> tuple[int, int] | None:
    """Validate the three arguments every model takes; return ``image_size`` as an int pair.

    >>> check_common("mlp", 10, 1, (8, 8))
    (8, 8)
    """
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
        raise ValueError(f"{name}: num_classes must be a positive int, got {num_classes!r}")
    if isinstance(in_channels, bool) or not isinstance(in_channels, int) or in_channels < 1:
        raise ValueError(f"{name}: in_channels must be a positive int, got {in_channels!r}")
    if image_size is None:
        return None
    if isinstance(image_size, int) and not isinstance(image_size, bool):
        image_size = (image_size, image_size)
    try:
        h, w = (int(s) for s in image_size)
        ok = all(isinstance(s, int) and not isinstance(s, bool) for s in image_size)
    except (TypeError, ValueError):
        ok = False
    if not ok or h < 1 or w < 1:
        raise ValueError(
            f"{name}: image_size must be a pair of positive ints (height, width), "
            f"got {image_size!r}"
        )
    return h, w


def conv_out(size: int, kernel: int, stride: int = 1, padding: int = 0) -> int:
    """Output length of a convolution or pooling window along one axis (floor mode).

    >>> conv_out(28, 5, padding=2), conv_out(14, 2, stride=2)
    (28, 7)
    """
    return (size + 2 * padding - kernel) // stride + 1
