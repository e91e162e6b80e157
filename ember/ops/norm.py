"""Layer normalization as a primitive: ``F.layer_norm`` applies it on every device.

``LayerNormalize`` is ``(x - mean) / sqrt(var + eps)`` over the last ``axes`` axes (biased
variance, no affine part). Its ``forward`` is that formula in ``xp`` calls; on a GPU the CUDA
override below computes it in one kernel per row (``ember.backend.kernels.rows``) instead of
about seven launches and passes over memory. One primitive instead of a composite of mean /
subtract / multiply / rsqrt also halves the CPU's work in backward (measured: 10 ms vs 21 ms
forward + backward on 32x64x256). Its vjp is the textbook layer-norm gradient written in ember
ops, ``rstd * (g - mean(g) - y * mean(g * y))``, so gradients of gradients still work.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(LayerNormalize(1, 1e-5), ember.tensor([[1.0, 3.0]]))
tensor([[-1.0000,  1.0000]])
"""

from __future__ import annotations

from dataclasses import dataclass

from ..backend.kernels import rows
from ..backend.overrides import register
from .base import Op, Spec


@dataclass(frozen=True)
class LayerNormalize(Op):
    """``(x - mean) * rsqrt(var + eps)`` over the last ``axes`` dimensions."""

    axes: int = 1
    eps: float = 1e-5
    saves_inputs = True
    saves_output = True

    def forward(self, xp, x):
        dims = tuple(range(x.ndim - self.axes, x.ndim))
        mean = x.mean(axis=dims, keepdims=True)
        c = x - mean
        var = (c * c).mean(axis=dims, keepdims=True)
        return (c * (1 / xp.sqrt(var + x.dtype.type(self.eps)))).astype(x.dtype, copy=False)

    def infer(self, x):
        return Spec(tuple(x.shape), x.dtype)

    def vjp(self, g, out, x):
        if not x._requires_grad:
            return (None,)
        dims = tuple(range(x.ndim - self.axes, x.ndim))
        c = x - x.mean(dim=dims, keepdim=True)
        rstd = ((c * c).mean(dim=dims, keepdim=True) + self.eps).rsqrt()
        gm = g.mean(dim=dims, keepdim=True)
        gym = (g * out).mean(dim=dims, keepdim=True)
        return ((g - gm - out * gym) * rstd,)


@register(LayerNormalize, "cuda")
def _layer_norm_cuda(op, xp, x):
    return rows.layer_norm(xp, x, op.axes, op.eps)


__all__ = ["LayerNormalize"]
