"""Constant padding as a primitive (its gradient is a slice, its slice's gradient a pad).

>>> import ember
>>> from ember.ops.base import apply
>>> apply(Pad(((0, 0), (1, 2)), 0.0), ember.ones(1, 2))
tensor([[0., 1., 1., 0., 0.]])
"""

from __future__ import annotations

from dataclasses import dataclass

from .._errors import ShapeError
from .base import Op, Spec, apply


@dataclass(frozen=True)
class Pad(Op):
    """Pad (or, with negative widths, crop) each dimension by ``(before, after)``."""

    widths: tuple = ()
    value: float = 0.0

    def forward(self, xp, x):
        shape = tuple(s + b + a for s, (b, a) in zip(x.shape, self.widths))
        out = xp.full(shape, self.value, dtype=x.dtype)
        src, dst = [], []
        for s, (b, a) in zip(x.shape, self.widths):
            src.append(slice(max(-b, 0), s - max(-a, 0)))
            dst.append(slice(max(b, 0), max(b, 0) + s - max(-b, 0) - max(-a, 0)))
        out[tuple(dst)] = x[tuple(src)]
        return out

    def infer(self, x):
        shape = tuple(s + b + a for s, (b, a) in zip(x.shape, self.widths))
        if any(s < 0 for s in shape):
            raise ShapeError(
                f"pad: padding {self.widths} makes a negative size from input {tuple(x.shape)}"
            )
        return Spec(shape, x.dtype)

    def vjp(self, g, out, x):
        return (apply(Pad(tuple((-b, -a) for b, a in self.widths), 0.0), g),)
