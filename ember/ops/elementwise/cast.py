"""Dtype conversion: the ``Cast`` primitive and the ``cast`` helper vjps use.

>>> import ember
>>> cast(ember.tensor([1.5, -2.5]), ember.int32)
tensor([ 1, -2], dtype=ember.int32)
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import dtypes as _dt
from ...backend import overrides
from ...backend.arrays import assign, castable
from ...backend.kernels import cast as _cast_kernels
from ..base import Spec, apply
from .kinds import Elementwise


def cast(x, dtype: _dt.DType):
    """``x`` converted to ``dtype`` (itself when it already has it)."""
    if x.dtype is dtype:
        return x
    return apply(Cast(dtype), x)


def _mask_to(mask, like):
    """A bool mask as 0/1 in ``like``'s dtype (a constant: masks carry no gradient)."""
    return cast(mask, like.dtype)


@dataclass(frozen=True)
class Cast(Elementwise):
    """Conversion to ``dtype``; float64 becomes float16 or bfloat16 through float32, as
    PyTorch converts (``backend.arrays.castable``): the same value eager, in a fused kernel,
    on the CPU and on a GPU."""

    dtype: _dt.DType
    node_name = "ToCopyBackward0"
    scalar = "cast(x)"

    def forward(self, xp, x, out=None):
        if out is None:
            return castable(x, self.dtype.np).astype(self.dtype.np)
        assign(out, x)  # the same C conversion, into out (whose dtype is self.dtype)
        return out

    def infer(self, x):
        return Spec(tuple(x.shape), self.dtype)

    def vjp(self, g, out, x):
        if not x.dtype.is_floating_point:
            return (None,)
        return (cast(g, x.dtype),)


@overrides.register(Cast, "cuda")
def _cast_cuda(op, xp, x, out=None):
    """float32 <-> bfloat16 / float16 as one 16-byte-access kernel (``backend/kernels/cast.py``)."""
    return _cast_kernels.cast(xp, x, op.dtype.np, out)


_cast_cuda.writes_out = True  # ``copy_`` across these dtypes: into the tensor's own storage
