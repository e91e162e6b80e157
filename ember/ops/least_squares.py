"""The pseudo-inverse and least-squares solutions (``ember.linalg.pinv``, ``lstsq``): both
from one SVD with singular values at or below a cutoff dropped (the minimum-norm solution),
batched over leading dims; gradients are PyTorch's ``pinv_backward``, in ember ops.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(Pinv(), ember.tensor([[2.0], [0.0]]))
tensor([[0.5000, 0.0000]])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._shape import broadcast_shapes
from .base import Op, Spec, apply
from .broadcast import sum_to
from .dense import _work
from .linalg import matmul, transpose_last


def _pinv_array(xp, a, rtol: float, atol: float):
    """``a``'s pseudo-inverse: singular values <= max(atol, rtol * largest) count as zero."""
    a = _work(a)
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return xp.zeros(a.shape[:-2] + (n, m), a.dtype)
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    cut = xp.maximum(atol, rtol * s[..., :1])
    kept = s > cut
    inv_s = xp.where(kept, 1 / xp.where(kept, s, 1), 0).astype(a.dtype)
    return xp.matmul(xp.swapaxes(vh, -1, -2) * inv_s[..., None, :], xp.swapaxes(u, -1, -2))


def pinv_backward(g, p, a):
    """The gradient of ``a`` given the gradient ``g`` of its pseudo-inverse ``p`` (PyTorch's
    ``pinv_backward``: exact where the rank is locally constant, as for full-rank inputs)."""
    m, n = a.shape[-2:]
    ph, gh = transpose_last(p), transpose_last(g)
    if m <= n:
        k = matmul(gh, p)
        kph = matmul(k, ph)
        return (
            -transpose_last(matmul(p, k))
            + kph
            - matmul(matmul(a, p), kph)
            + matmul(matmul(ph, p), gh - matmul(k, a))
        )
    k = matmul(p, gh)
    phk = matmul(ph, k)
    return (
        -transpose_last(matmul(k, p))
        + matmul(matmul(gh - matmul(a, k), p), ph)
        + phk
        - matmul(matmul(phk, p), a)
    )


@dataclass(frozen=True)
class Pinv(Op):
    """The Moore-Penrose pseudo-inverse; ``rtol=None`` is PyTorch's default, eps * max(m, n)."""

    rtol: float | None = None
    atol: float = 0.0

    saves_inputs = True
    saves_output = True

    def forward(self, xp, a):
        rtol = self.rtol
        if rtol is None:
            rtol = np.finfo(_work(a).dtype).eps * max(a.shape[-2:]) if self.atol == 0 else 0.0
        return _pinv_array(xp, a, rtol, self.atol).astype(a.dtype, copy=False)

    def infer(self, a):
        return Spec(tuple(a.shape[:-2]) + (a.shape[-1], a.shape[-2]), a.dtype)

    def vjp(self, g, out, a):
        return (pinv_backward(g, out, a),)


@dataclass(frozen=True)
class Lstsq(Op):
    """The minimum-norm X minimizing ``||A X - B||`` (singular values <= ``rcond`` times the
    largest dropped); batch dims broadcast. Gradient: that of ``pinv(A) @ B``, as PyTorch's."""

    rcond: float

    saves_inputs = True

    def forward(self, xp, a, b):
        p = _pinv_array(xp, a, self.rcond, 0.0)
        return xp.matmul(p, _work(b)).astype(b.dtype, copy=False)

    def infer(self, a, b):
        batch = broadcast_shapes("linalg.lstsq", tuple(a.shape[:-2]), tuple(b.shape[:-2]))
        return Spec(tuple(batch) + (a.shape[-1], b.shape[-1]), b.dtype)

    def vjp(self, g, out, a, b):
        p = apply(Pinv(), a)
        ga = gb = None
        if a._requires_grad:
            ga = sum_to(pinv_backward(matmul(g, transpose_last(b)), p, a), tuple(a.shape))
        if b._requires_grad:
            gb = sum_to(matmul(transpose_last(p), g), tuple(b.shape))
        return ga, gb
