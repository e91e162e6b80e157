"""Layer normalization as a primitive, for the GPU: one fused kernel per row.

On the CPU ``F.layer_norm`` stays a composite of mean / subtract / multiply / rsqrt (NumPy has
no fusion, and the composite's graph is what static passes and ONNX export know). On a GPU
that composite is about seven kernel launches and passes over memory, so ``F.layer_norm`` of a
cuda tensor applies ``LayerNormalize`` instead: ``(x - mean) / sqrt(var + eps)`` over the last
``axes`` axes (biased variance, no affine part) in one CUDA kernel
(``ember.backend.kernels.rows``). Its forward on NumPy is the same formula (the reference the
tests compare the GPU with); its vjp is the textbook layer-norm gradient written in ember ops,
``rstd * (g - mean(g) - y * mean(g * y))``, so gradients of gradients still work.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(LayerNormalize(1, 1e-5), ember.tensor([[1.0, 3.0]]))
tensor([[-1.0000,  1.0000]])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backend.kernels import rows as _gpu
from .base import Op, Spec


@dataclass(frozen=True)
class LayerNormalize(Op):
    """``(x - mean) * rsqrt(var + eps)`` over the last ``axes`` dimensions."""

    axes: int = 1
    eps: float = 1e-5
    saves_inputs = True
    saves_output = True

    def forward(self, xp, x):
        if xp is np:
            return _gpu.layer_norm_reference(np, x, self.axes, self.eps)
        return _gpu.layer_norm(xp, x, self.axes, self.eps)

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


__all__ = ["LayerNormalize"]
