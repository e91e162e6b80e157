"""Activation primitives: sigmoid, ReLU and ReLU's gradient (other activations are composites
of ember ops in ``ember.nn``).

>>> import ember
>>> from ember.ops.base import apply
>>> apply(Relu(), ember.tensor([-1.0, 2.0]))
tensor([0., 2.])
"""

from __future__ import annotations

from dataclasses import dataclass

from ...backend.arrays import errstate
from ..base import Spec, apply
from .arithmetic import mul, sub
from .kinds import Elementwise, Unary, const_like


@dataclass(frozen=True)
class Sigmoid(Unary):
    """1 / (1 + exp(-x)); a primitive for its output-only gradient and to keep the
    overflow of exp(-x) for very negative x quiet."""

    scalar = "1 / (exp(-x) + 1)"
    saves_output = True

    def forward(self, xp, x, out=None):
        with errstate(xp, over="ignore"):  # exp(-x) overflows for x < -88 (float32): 0 is right
            e = xp.exp(xp.negative(x, out=out), out=out)
            return xp.reciprocal(xp.add(e, 1, out=out), out=out)

    def vjp(self, g, out, x):
        return (mul(g, mul(out, sub(const_like(out, 1), out))),)


@dataclass(frozen=True)
class Relu(Unary):
    scalar = "0 if x <= 0 else x"  # as NumPy's maximum(x, 0): NaN stays, -0.0 gives 0.0
    saves_output = True

    def forward(self, xp, x, out=None):
        return xp.maximum(x, 0, out=out)

    def vjp(self, g, out, x):
        return (apply(ReluGrad(), g, out),)


@dataclass(frozen=True)
class ReluGrad(Elementwise):
    """``g`` where ``out > 0``, else 0 (PyTorch's threshold_backward): a primitive because
    NumPy's ``where`` is ~8x slower here than a mask product, on every ReLU network's hot path."""

    scalar = "x * (1 if y > 0 else 0)"
    saves_inputs = True

    def forward(self, xp, g, y, out=None):
        return xp.multiply(g, y > 0, out=out)

    def infer(self, g, y):
        return Spec(tuple(g.shape), g.dtype)

    def vjp(self, h, _, g, y):
        return (apply(ReluGrad(), h, y) if g._requires_grad else None, None)
