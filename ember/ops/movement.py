"""Shape and movement primitives: reshape, permute (views), cat, flip, roll.

Everything else in the family (squeeze, unsqueeze, flatten, expand, stack, split, repeat, tile,
movedim...) is a composite in ``ember.functions.shape``; slicing lives in ``ops.indexing``.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(Permute((1, 0)), ember.zeros(2, 3)).shape
ember.Size([3, 2])
"""

from __future__ import annotations

from dataclasses import dataclass

from .._errors import ShapeError
from ..backend.kernels import row_copy as _row_copy
from ..backend.overrides import register
from .base import Op, Spec, apply


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _view(xp, x, shape):
    """``x`` reshaped to ``shape`` without copying, or None where its strides do not allow it."""
    if x.flags.c_contiguous:
        return x.reshape(shape)
    try:
        return xp.reshape(x, shape, copy=False)
    except (ValueError, TypeError):
        return None


@dataclass(frozen=True)
class Reshape(Op):
    """Reshape to ``shape`` (fully specified, no -1); a view when NumPy can make one."""

    shape: tuple
    is_view = True
    node_name = "ViewBackward0"

    def forward(self, xp, x):
        out = _view(xp, x, self.shape)
        if out is None:
            # A copy. NumPy's own copying reshape returns a view of a temporary (its ``base`` is
            # set), which ``apply`` would take for a view of ``x``: build a fresh array instead.
            out = xp.empty(self.shape, x.dtype)
            out.reshape(x.shape)[...] = x
        return out

    def infer(self, x):
        n, m = _numel(x.shape), _numel(self.shape)
        if n != m:
            raise ShapeError(
                f"reshape: shape {list(self.shape)} is invalid for input of shape "
                f"{list(x.shape)} ({n} elements)"
            )
        return Spec(self.shape, x.dtype)

    def vjp(self, g, out, x):
        return (reshape(g, tuple(x.shape)),)


@register(Reshape, "cuda")
def _reshape_cuda(op, xp, x):
    """A copying reshape as one kernel moving whole rows (``backend/kernels/row_copy.py``)."""
    out = _view(xp, x, op.shape)
    return _row_copy.c_order(xp, x, op.shape) if out is None else out


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


@dataclass(frozen=True)
class Cat(Op):
    """Concatenate same-dtype inputs along ``dim`` (the public ``cat`` promotes first)."""

    dim: int

    def forward(self, xp, *xs):
        return xp.concatenate(xs, axis=self.dim)

    def infer(self, *xs):
        first = xs[0]
        d = self.dim
        for i, x in enumerate(xs):
            if x.ndim != first.ndim:
                raise ShapeError(
                    f"cat: tensors must have same number of dimensions: got {first.ndim} and "
                    f"{x.ndim} (shapes {list(first.shape)} and {list(x.shape)} at positions 0 "
                    f"and {i})"
                )
            for k in range(x.ndim):
                if k != d and x.shape[k] != first.shape[k]:
                    raise ShapeError(
                        f"cat: sizes of tensors must match except in dimension {d}. Expected "
                        f"size {first.shape[k]} but got size {x.shape[k]} for tensor number {i} "
                        f"in the list (shapes {list(first.shape)} and {list(x.shape)})"
                    )
            if x.dtype is not first.dtype:
                raise ShapeError(f"cat: dtypes differ ({first.dtype} and {x.dtype})")
        shape = list(first.shape)
        shape[d] = sum(x.shape[d] for x in xs)
        return Spec(tuple(shape), first.dtype)

    def vjp(self, g, out, *xs):
        from .indexing import slice_dim

        grads, start = [], 0
        for x in xs:
            n = x.shape[self.dim]
            grads.append(slice_dim(g, self.dim, start, start + n) if x._requires_grad else None)
            start += n
        return tuple(grads)


@dataclass(frozen=True)
class Flip(Op):
    """Reverse the order of elements along ``dims`` (a copy, as in PyTorch)."""

    dims: tuple

    def forward(self, xp, x):
        return xp.flip(x, self.dims).copy()

    def infer(self, x):
        return Spec(tuple(x.shape), x.dtype)

    def vjp(self, g, out, x):
        return (apply(self, g),)


@dataclass(frozen=True)
class Roll(Op):
    """Shift elements cyclically by ``shifts`` along ``dims`` (``dims=None``: the flat order)."""

    shifts: tuple
    dims: tuple | None = None

    def forward(self, xp, x):
        if self.dims is None:
            return xp.roll(x, self.shifts[0])
        return xp.roll(x, self.shifts, axis=self.dims)

    def infer(self, x):
        return Spec(tuple(x.shape), x.dtype)

    def vjp(self, g, out, x):
        return (apply(Roll(tuple(-s for s in self.shifts), self.dims), g),)


def reshape(x, shape: tuple):
    """``x`` reshaped to the fully specified ``shape`` (``x`` itself when it already has it)."""
    if tuple(x.shape) == shape:
        return x
    return apply(Reshape(shape), x)
