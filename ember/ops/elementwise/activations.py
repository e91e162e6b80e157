"""Activation primitives: sigmoid, ReLU and ReLU's gradient (other activations are composites
of ember ops in ``ember.nn``), and the refused gradient of unsupported in-place forms.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(Relu(), ember.tensor([-1.0, 2.0]))
tensor([0., 2.])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._errors import AutogradError
from ...backend import overrides
from ...backend.arrays import errstate
from ...backend.kernels import relu as _relu_kernels
from .. import _relu_numba
from ..base import Op, Spec, apply
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
    """``0 if out <= 0 else g``, PyTorch's threshold_backward bit for bit (+0.0 where masked,
    ``g`` where ``out`` is NaN). A primitive because NumPy's ``where`` is ~8x slower here than
    a mask, on every ReLU network's hot path; the mask clears ``g``'s bits, as a mask product
    would give -0.0 for negative ``g``."""

    scalar = "0 if y <= 0 else x"
    numpy_passes = 3
    saves_inputs = True

    def forward(self, xp, g, y, out=None):
        bits = xp.dtype(f"int{8 * g.dtype.itemsize}")
        keep = xp.subtract(xp.less_equal(y, 0).view(xp.uint8), 1, dtype=bits)  # 0 or all ones
        r = xp.bitwise_and(g.view(bits), keep, out=None if out is None else out.view(bits))
        return r.view(g.dtype)

    def infer(self, g, y):
        return Spec(tuple(g.shape), g.dtype)

    def vjp(self, h, _, g, y):
        return (apply(ReluGrad(), h, y) if g._requires_grad else None, None)


@overrides.register(Relu, "cpu")
def _relu_cpu(op, xp, x, out=None):
    """One numba pass (``ember/ops/_relu_numba.py``), into ``out`` too (an in-place ``relu_``);
    NotImplemented where it does not serve."""
    r = _relu_numba.relu(x, out) if type(x) is np.ndarray else None
    return NotImplemented if r is None else r


_relu_cpu.writes_out = True


@overrides.register(ReluGrad, "cpu")
def _relu_grad_cpu(op, xp, g, y):
    """One numba pass (``ember/ops/_relu_numba.py``); NotImplemented where it does not serve."""
    r = _relu_numba.relu_grad(g, y) if type(g) is type(y) is np.ndarray else None
    return NotImplemented if r is None else r


@overrides.register(Relu, "cuda")
def _relu_cuda(op, xp, x, out=None):
    return _relu_kernels.relu(xp, x, out)


_relu_cuda.writes_out = True  # an in-place relu_ (ResNet's): one launch, no copy after it


@overrides.register(ReluGrad, "cuda")
def _relu_grad_cuda(op, xp, g, y):
    return _relu_kernels.relu_grad(xp, g, y)


@dataclass(frozen=True)
class RefusedGrad(Op):
    """A copy of ``x`` whose gradient is refused with ``message``: the node of an in-place
    form whose backward PyTorch does not support (``leaky_relu_`` with a negative slope), so
    the forward runs and only a backward through it fails, as in PyTorch.

    >>> import ember
    >>> x = ember.ones(2, requires_grad=True) * 1
    >>> y = apply(RefusedGrad("no gradient here"), x)
    >>> y.sum().backward()
    Traceback (most recent call last):
    ember._errors.AutogradError: no gradient here
    """

    message: str

    def forward(self, xp, x):
        return x.copy()

    def infer(self, x):
        return Spec(tuple(x.shape), x.dtype)

    def vjp(self, g, out, x):
        raise AutogradError(self.message)
