"""Random primitives: drawn when the op runs, so a compiled graph draws anew on every run.

``has_side_effects`` keeps graph passes from merging, folding or dropping them (two dropout
masks are never the same mask). Every draw goes through ``ember.random``, on the device the
op's array lives on (NumPy's generator on the CPU, cuRAND on a GPU), never drawn on the host
and copied.

- ``DropoutMask``: dropout's scaled keep-mask, in its input's dtype and device;
- ``Random``: a new tensor of uniform, normal or integer numbers, or a permutation (what
  ``ember.rand``, ``randn``, ``randint``, ``randperm`` and their ``_like`` forms build). It
  takes one array, the *anchor*, only for its dtype and device (its values are not read), so
  eager mode, ``ember.compile`` and static graphs run the same ``apply`` path.

>>> import ember
>>> from ember.ops.base import apply
>>> _ = ember.manual_seed(0)
>>> apply(DropoutMask((2, 3), 0.5), ember.ones(2, 3)).shape
ember.Size([2, 3])
>>> apply(Random("normal", (2, 3)), ember.zeros(0, dtype=ember.float64)).dtype
ember.float64
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import dtypes as _dt
from .. import random as _random
from .._errors import EmberError
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


_NP = np.ndarray
_F16, _BF16 = np.dtype(np.float16), _dt.bfloat16.np
# float16 / bfloat16 uniform numbers are drawn in float32 and rounded; one that rounds up to
# 1.0 becomes 0.0, as in PyTorch (so [0, 1) holds)
_ROUNDED = (_F16, np.dtype(_BF16))
_KINDS = ("uniform", "normal", "integers", "permutation")


@dataclass(frozen=True)
class Random(Op):
    """Fresh random numbers of ``shape`` in ``anchor``'s dtype, drawn on ``anchor``'s device
    from the default generator or ``generator``. ``dist`` is one of

    - ``'uniform'``: [0, 1);
    - ``'normal'``: standard normal, or ``mean + std * N(0, 1)`` with ``params = (mean, std)``;
    - ``'integers'``: [low, high) with ``params = (low, high)``;
    - ``'permutation'``: of ``range(shape[0])``.

    The anchor's values are never read. The public functions (``ember.rand``...) check the
    parameters."""

    dist: str
    shape: tuple
    params: tuple = ()
    generator: object = None
    differentiable = False
    has_side_effects = True

    def forward(self, xp, anchor):
        dtype = anchor.dtype
        device = None if type(anchor) is _NP else device_of(anchor)
        dist, gen = self.dist, self.generator
        if dist == "normal":
            if not self.params:
                return _random.normal(self.shape, dtype, device, gen)
            # mean + std * z, in float64 for float64 and float32 for every other dtype
            ct = np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)
            mean, std = self.params
            z = _random.normal(self.shape, ct, device, gen)
            return (ct.type(mean) + ct.type(std) * z).astype(dtype)
        if dist == "uniform":
            u = _random.uniform(self.shape, dtype, device, gen)
            return xp.where(u >= 1, dtype.type(0), u) if dtype in _ROUNDED else u
        if dist == "integers":
            low, high = self.params
            return _random.integers(low, high, self.shape, dtype, device, gen)
        if dist == "permutation":
            return _random.permutation(self.shape[0], dtype, device, gen)
        raise EmberError(f"Random: unknown distribution {dist!r} (expected one of {_KINDS})")

    def infer(self, anchor):
        if self.dist not in _KINDS:
            raise EmberError(
                f"Random: unknown distribution {self.dist!r} (expected one of {_KINDS})"
            )
        return Spec(tuple(self.shape), anchor.dtype)
