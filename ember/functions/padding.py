"""``pad``'s one definition, below ``nn`` (``nn.functional.pad`` and ``data.transforms`` use
it), with PyTorch's argument order: pairs for the last dimension first.

>>> import ember
>>> import ember.nn.functional as F
>>> F.pad(ember.ones(1, 2), (1, 1))
tensor([[0., 1., 1., 0.]])
"""

from __future__ import annotations

import numpy as np

from .._errors import ShapeError
from .._tensor import Tensor
from ..ops.base import apply
from ..ops.pad import Pad
from .creation import tensor


def _widths(ndim: int, pad: tuple) -> list:
    if len(pad) % 2:
        raise ValueError(f"pad: padding length must be divisible by 2, got {len(pad)}")
    if len(pad) // 2 > ndim:
        raise ShapeError(f"pad: padding length {len(pad)} is too large for a {ndim}-D input")
    widths = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        widths[ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
    return widths


def _index_pad(x: Tensor, widths: list, mode: str) -> Tensor:
    for dim, (b, a) in enumerate(widths):
        if not (b or a):
            continue
        n = x.shape[dim]
        pos = np.arange(-b, n + a)
        if mode == "reflect":
            if b >= n or a >= n:
                raise ShapeError(
                    f"pad: reflect padding ({b}, {a}) must be smaller than dimension {dim} of "
                    f"size {n}"
                )
            period = 2 * (n - 1)
            pos = np.abs(pos) % period if period else np.zeros_like(pos)
            pos = np.where(pos >= n, period - pos, pos)
        elif mode == "replicate":
            pos = np.clip(pos, 0, n - 1)
        elif mode == "circular":
            if b > n or a > n:
                raise ShapeError(f"pad: circular padding ({b}, {a}) is larger than size {n}")
            pos = pos % n
        x = x.index_select(dim, tensor(pos))
    return x


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last dimensions: ``pad = (left, right, top, bottom, ...)``.

    Modes: ``'constant'`` (with ``value``), ``'reflect'``, ``'replicate'``, ``'circular'``.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.pad(ember.tensor([[1.0, 2.0, 3.0]]), (2, 0), mode="reflect")
    tensor([[3., 2., 1., 2., 3.]])
    """
    widths = _widths(input.ndim, tuple(pad))
    if mode == "constant":
        return apply(Pad(tuple(widths), float(value or 0.0)), input)
    if mode not in ("reflect", "replicate", "circular"):
        raise ValueError(
            f"pad: unknown mode {mode!r}; expected 'constant', 'reflect', 'replicate' or 'circular'"
        )
    if any(b < 0 or a < 0 for b, a in widths):
        raise ValueError(f"pad: negative padding is only supported in constant mode, got {pad}")
    return _index_pad(input, widths, mode)
