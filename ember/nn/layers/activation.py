"""Activation modules: ReLU, LeakyReLU, ELU, GELU, SiLU, Sigmoid, Tanh, Softmax, LogSoftmax,
Softplus, PReLU and friends (each a thin wrapper over ``ember.nn.functional``).

>>> import ember
>>> ember.nn.ReLU()(ember.tensor([-1.0, 1.0]))
tensor([0., 1.])
"""

from __future__ import annotations

from ..._tensor import Tensor
from .._functional import activation as A
from ..module import Module
from ..parameter import Parameter


class _Inplace(Module):
    """An activation whose only option is ``inplace``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    """max(x, 0).

    >>> import ember
    >>> ember.nn.ReLU(inplace=True)
    ReLU(inplace=True)
    """

    def forward(self, input: Tensor) -> Tensor:
        return A.relu(input, self.inplace)


class ReLU6(_Inplace):
    """min(max(x, 0), 6).

    >>> import ember
    >>> ember.nn.ReLU6()(ember.tensor([-1.0, 7.0]))
    tensor([0., 6.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return A.relu6(input, self.inplace)


class SELU(_Inplace):
    """Scaled ELU (self-normalizing constants).

    >>> import ember
    >>> ember.nn.SELU()(ember.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return A.selu(input, self.inplace)


class SiLU(_Inplace):
    """x sigmoid(x).

    >>> import ember
    >>> ember.nn.SiLU()(ember.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return A.silu(input, self.inplace)


class Mish(_Inplace):
    """x tanh(softplus(x)).

    >>> import ember
    >>> ember.nn.Mish()(ember.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return A.mish(input, self.inplace)


class Hardsigmoid(_Inplace):
    """relu6(x + 3) / 6.

    >>> import ember
    >>> ember.nn.Hardsigmoid()(ember.tensor([0.0]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return A.hardsigmoid(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class Hardswish(_Inplace):
    """x relu6(x + 3) / 6.

    >>> import ember
    >>> ember.nn.Hardswish()(ember.tensor([3.0]))
    tensor([3.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return A.hardswish(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class LeakyReLU(Module):
    """x if x > 0 else negative_slope * x.

    >>> import ember
    >>> ember.nn.LeakyReLU(0.1)(ember.tensor([-1.0]))
    tensor([-0.1000])
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        return A.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """x if x > 0 else alpha (exp(x) - 1).

    >>> import ember
    >>> ember.nn.ELU()
    ELU(alpha=1.0)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return A.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1)).

    >>> import ember
    >>> ember.nn.CELU(2.0)
    CELU(alpha=2.0)
    """

    def forward(self, input: Tensor) -> Tensor:
        return A.celu(input, self.alpha, self.inplace)


class GELU(Module):
    """x Phi(x) (``approximate='tanh'`` for the tanh form).

    >>> import ember
    >>> ember.nn.GELU(approximate="tanh")
    GELU(approximate='tanh')
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return A.gelu(input, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Sigmoid(Module):
    """1 / (1 + exp(-x)).

    >>> import ember
    >>> ember.nn.Sigmoid()(ember.tensor([0.0]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return A.sigmoid(input)


class Tanh(Module):
    """Hyperbolic tangent.

    >>> import ember
    >>> ember.nn.Tanh()(ember.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return A.tanh(input)


class LogSigmoid(Module):
    """log(sigmoid(x)).

    >>> import ember
    >>> ember.nn.LogSigmoid()(ember.tensor([0.0]))
    tensor([-0.6931])
    """

    def forward(self, input: Tensor) -> Tensor:
        return A.logsigmoid(input)


class Softsign(Module):
    """x / (1 + |x|).

    >>> import ember
    >>> ember.nn.Softsign()(ember.tensor([1.0]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return A.softsign(input)


class Tanhshrink(Module):
    """x - tanh(x).

    >>> import ember
    >>> ember.nn.Tanhshrink()(ember.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return A.tanhshrink(input)


class Hardtanh(Module):
    """Clamp to [min_val, max_val].

    >>> import ember
    >>> ember.nn.Hardtanh(-2.0, 2.0)
    Hardtanh(min_val=-2.0, max_val=2.0)
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if max_val <= min_val:
            raise ValueError(
                f"Hardtanh: max_val ({max_val}) must be greater than min_val ({min_val})"
            )
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input: Tensor) -> Tensor:
        return A.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else ""
        )


class Hardshrink(Module):
    """x where |x| > lambd, else 0.

    >>> import ember
    >>> ember.nn.Hardshrink()
    Hardshrink(0.5)
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return A.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """Shrink towards 0 by lambd (0 inside [-lambd, lambd]).

    >>> import ember
    >>> ember.nn.Softshrink(1.0)(ember.tensor([3.0]))
    tensor([2.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return A.softshrink(input, self.lambd)


class Threshold(Module):
    """x where x > threshold, else ``value``.

    >>> import ember
    >>> ember.nn.Threshold(0.1, 20.0)
    Threshold(threshold=0.1, value=20.0)
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:
        return A.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (
            ", inplace=True" if self.inplace else ""
        )


class RReLU(Module):
    """Leaky ReLU with random slopes U(lower, upper) in training and their mean in eval.

    >>> import ember
    >>> ember.nn.RReLU()
    RReLU(lower=0.125, upper=0.3333333333333333)
    """

    def __init__(
        self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False
    ) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return A.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (
            ", inplace=True" if self.inplace else ""
        )


class PReLU(Module):
    """Leaky ReLU with a learnt slope: one shared, or one per channel (``num_parameters``).

    >>> import ember
    >>> ember.nn.PReLU(3)
    PReLU(num_parameters=3)
    """

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None
    ) -> None:
        from ...functions.creation import full

        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(full((num_parameters,), init, device=device, dtype=dtype))

    def reset_parameters(self) -> None:
        from .. import init as _init

        _init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return A.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softplus(Module):
    """log(1 + exp(beta x)) / beta, linear above threshold.

    >>> import ember
    >>> ember.nn.Softplus()
    Softplus(beta=1.0, threshold=20.0)
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return A.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmax(Module):
    """softmax along ``dim``.

    >>> import ember
    >>> ember.nn.Softmax(dim=1)(ember.zeros(1, 2))
    tensor([[0.5000, 0.5000]])
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return A.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """log_softmax along ``dim``.

    >>> import ember
    >>> ember.nn.LogSoftmax(dim=1)(ember.zeros(1, 2))
    tensor([[-0.6931, -0.6931]])
    """

    def forward(self, input: Tensor) -> Tensor:
        return A.log_softmax(input, self.dim)


class Softmin(Softmax):
    """softmax(-x) along ``dim``.

    >>> import ember
    >>> ember.nn.Softmin(dim=0)(ember.zeros(2))
    tensor([0.5000, 0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return A.softmin(input, self.dim)


class Softmax2d(Module):
    """softmax over the channels (dimension -3) of (N, C, H, W) or (C, H, W) input.

    >>> import ember
    >>> ember.nn.Softmax2d()(ember.zeros(1, 2, 1, 1)).flatten()
    tensor([0.5000, 0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            from ..._errors import ShapeError

            raise ShapeError(
                f"Softmax2d: expected a 3-D or 4-D input, got shape {tuple(input.shape)}"
            )
        return A.softmax(input, -3)


class GLU(Module):
    """a sigmoid(b) over the two halves of ``dim``.

    >>> import ember
    >>> ember.nn.GLU()(ember.zeros(1, 4)).shape
    ember.Size([1, 2])
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return A.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


__all__ = [
    "ReLU",
    "ReLU6",
    "LeakyReLU",
    "ELU",
    "CELU",
    "SELU",
    "GELU",
    "SiLU",
    "Mish",
    "Sigmoid",
    "Tanh",
    "LogSigmoid",
    "Softsign",
    "Tanhshrink",
    "Hardtanh",
    "Hardsigmoid",
    "Hardswish",
    "Hardshrink",
    "Softshrink",
    "Threshold",
    "RReLU",
    "PReLU",
    "Softplus",
    "Softmax",
    "LogSoftmax",
    "Softmin",
    "Softmax2d",
    "GLU",
]
