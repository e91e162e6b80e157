"""Activation modules: ReLU, LeakyReLU, ELU, GELU, SiLU, Sigmoid, Tanh, Softmax, LogSoftmax,
Softplus and friends (each a thin wrapper over ``ember.nn.functional``).

>>> import ember
>>> ember.nn.ReLU()(ember.tensor([-1.0, 1.0]))
tensor([0., 1.])
"""

from __future__ import annotations

from ..._tensor import Tensor
from .._functional import activation as A
from ..module import Module


class ReLU(Module):
    """max(x, 0)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return A.relu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU6(ReLU):
    """min(max(x, 0), 6)."""

    def forward(self, input: Tensor) -> Tensor:
        return A.relu6(input, self.inplace)


class LeakyReLU(Module):
    """x if x > 0 else negative_slope * x."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        return A.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """x if x > 0 else alpha (exp(x) - 1)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return A.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class SELU(ReLU):
    """Scaled ELU."""

    def forward(self, input: Tensor) -> Tensor:
        return A.selu(input, self.inplace)


class GELU(Module):
    """x Phi(x) (``approximate='tanh'`` for the tanh form)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return A.gelu(input, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(ReLU):
    """x sigmoid(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return A.silu(input, self.inplace)


class Mish(ReLU):
    """x tanh(softplus(x))."""

    def forward(self, input: Tensor) -> Tensor:
        return A.mish(input, self.inplace)


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def forward(self, input: Tensor) -> Tensor:
        return A.sigmoid(input)


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, input: Tensor) -> Tensor:
        return A.tanh(input)


class LogSigmoid(Module):
    """log(sigmoid(x))."""

    def forward(self, input: Tensor) -> Tensor:
        return A.logsigmoid(input)


class Hardtanh(Module):
    """Clamp to [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input: Tensor) -> Tensor:
        return A.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class Hardsigmoid(ReLU):
    """relu6(x + 3) / 6."""

    def forward(self, input: Tensor) -> Tensor:
        return A.hardsigmoid(input, self.inplace)


class Hardswish(ReLU):
    """x relu6(x + 3) / 6."""

    def forward(self, input: Tensor) -> Tensor:
        return A.hardswish(input, self.inplace)


class Softplus(Module):
    """log(1 + exp(beta x)) / beta, linear above threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return A.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmax(Module):
    """softmax along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return A.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """log_softmax along ``dim``."""

    def forward(self, input: Tensor) -> Tensor:
        return A.log_softmax(input, self.dim)


class Softmin(Softmax):
    """softmax(-x) along ``dim``."""

    def forward(self, input: Tensor) -> Tensor:
        return A.softmin(input, self.dim)


class GLU(Module):
    """a sigmoid(b) over the two halves of ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return A.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


__all__ = ["ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh", "LogSigmoid", "Hardtanh", "Hardsigmoid", "Hardswish", "Softplus", "Softmax", "LogSoftmax", "Softmin", "GLU"]
