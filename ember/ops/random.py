"""Random primitives: drawn when the op runs, so a compiled graph draws anew on every run.

``has_side_effects`` keeps graph passes from merging, folding or dropping them (two dropout
masks are never the same mask).

>>> import ember
>>> from ember.ops.base import apply
>>> _ = ember.manual_seed(0)
>>> apply(DropoutMask((2, 3), 0.5), ember.ones(2, 3)).shape
ember.Size([2, 3])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import random as _random
from ..backend import device_of
from .base import Op, Spec


@dataclass(frozen=True)
class DropoutMask(Op):
    """A mask of ``shape`` (broadcastable to ``like``'s): 0 with probability ``p``, else
    1 / (1 - p), in ``like``'s dtype and device. Draws from ember's default generator."""

    shape: tuple
    p: float
    differentiable = False
    has_side_effects = True

    def forward(self, xp, like):
        # drawn where ``like`` lives: NumPy's generator on the CPU, cuRAND on a GPU (never drawn
        # on the host and copied)
        keep = _random.uniform(self.shape, np.float32, device_of(like)) >= self.p
        scale = xp.asarray(1.0 / (1.0 - self.p), dtype=like.dtype)
        return keep.astype(like.dtype) * scale

    def infer(self, like):
        return Spec(tuple(self.shape), like.dtype)
