"""Shape and movement primitives: reshape, permute (views where NumPy gives views).

>>> import ember
>>> from ember.ops.base import apply
>>> apply(Permute((1, 0)), ember.zeros(2, 3)).shape
ember.Size([3, 2])
"""

from __future__ import annotations

from dataclasses import dataclass

from .._errors import ShapeError
from .base import Op, Spec, apply


@dataclass(frozen=True)
class Reshape(Op):
    """Reshape to ``shape`` (fully specified, no -1); a view when NumPy can make one."""

    shape: tuple
    is_view = True

    def forward(self, xp, x):
        return x.reshape(self.shape)

    def infer(self, x):
        n = 1
        for s in x.shape:
            n *= s
        m = 1
        for s in self.shape:
            m *= s
        if n != m:
            raise ShapeError(
                f"reshape: shape {self.shape} is invalid for input of shape {tuple(x.shape)} "
                f"({n} elements)"
            )
        return Spec(self.shape, x.dtype)

    def vjp(self, g, out, x):
        return (reshape(g, tuple(x.shape)),)


@dataclass(frozen=True)
class Permute(Op):
    """Reorder dimensions by ``dims`` (a view)."""

    dims: tuple
    is_view = True

    def forward(self, xp, x):
        return x.transpose(self.dims)

    def infer(self, x):
        if sorted(self.dims) != list(range(x.ndim)):
            raise ShapeError(
                f"permute: dims {self.dims} are not a permutation of the {x.ndim} dimensions "
                f"of shape {tuple(x.shape)}"
            )
        return Spec(tuple(x.shape[d] for d in self.dims), x.dtype)

    def vjp(self, g, out, x):
        inverse = [0] * len(self.dims)
        for i, d in enumerate(self.dims):
            inverse[d] = i
        return (apply(Permute(tuple(inverse)), g),)


def reshape(x, shape: tuple):
    if tuple(x.shape) == shape:
        return x
    return apply(Reshape(shape), x)
