"""Activations: relu, leaky_relu, elu, gelu, silu, sigmoid, tanh, softmax, log_softmax, softplus...

>>> import ember
>>> import ember.nn.functional as F
>>> F.leaky_relu(ember.tensor([-1.0, 2.0]), 0.1)
tensor([-0.1000,  2.0000])
"""

from __future__ import annotations

import math

from ..._errors import EmberError
from ..._node import named
from ..._tensor import Tensor
from ...amp.autocast_mode import rule as _autocast_rule
from ...functions._promote import to_float
from ...functions.creation import ones_like, tensor
from ...functions.elementwise import where
from ...functions.math import erf, exp, expm1, log1p
from ...functions.math import relu as _relu
from ...functions.math import sigmoid as _sigmoid
from ...functions.math import tanh as _tanh
from ...ops.base import apply
from ...ops.softmax import LogSoftmax, Softmax
from .inplace import inplace_form


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.relu(ember.tensor([-1.0, 1.0]))
    tensor([0., 1.])
    """
    return input.relu_() if inplace else _relu(input)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.relu6(ember.tensor([-1.0, 7.0]))
    tensor([0., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """Clamp to [min_val, max_val].

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.hardtanh(ember.tensor([-2.0, 0.5]))
    tensor([-1.0000,  0.5000])
    """
    if inplace:
        return inplace_form(input, _hardtanh, min_val, max_val, name="hardtanh_")
    return _hardtanh(input, min_val, max_val)


def _hardtanh(input: Tensor, min_val: float, max_val: float) -> Tensor:
    return named(input.clamp(min_val, max_val), "HardtanhBackward0")


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.leaky_relu(ember.tensor([-2.0]), 0.5)
    tensor([-1.])
    """
    if inplace:
        return inplace_form(
            input, _leaky_relu, negative_slope, name="leaky_relu_", negative_slope=negative_slope
        )
    return _leaky_relu(input, negative_slope)


def _leaky_relu(input: Tensor, negative_slope: float) -> Tensor:
    return named(_sloped(input, negative_slope, input > 0), "LeakyReluBackward0")


def _sloped(input: Tensor, slope: Tensor | float, keep: Tensor) -> Tensor:
    """``x`` where ``keep``, else ``x * slope``, as PyTorch computes it: ``x`` times a factor
    (1 or the slope), so the gradient is ``g`` times it, with its zero signs (a select would
    add a +0.0 to every ``g * slope``)."""
    return input * where(keep, ones_like(input), slope)


@_autocast_rule("elu")
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha * (exp(x) - 1).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.elu(ember.tensor([0.0, 1.0]))
    tensor([0., 1.])
    """
    if inplace:
        return inplace_form(input, _elu, alpha, name="elu_", negative_slope=alpha)
    return _elu(input, alpha)


def _elu(input: Tensor, alpha: float) -> Tensor:
    return named(where(input > 0, input, expm1(input.clamp(max=0)) * alpha), "EluBackward0")


@_autocast_rule("selu")
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """Scaled ELU with the self-normalizing constants.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.selu(ember.tensor([1.0]))
    tensor([1.0507])
    """
    return inplace_form(input, _selu, name="selu_") if inplace else _selu(input)


def _selu(input: Tensor) -> Tensor:
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return named(_elu(input, alpha) * scale, "EluBackward0")


@_autocast_rule("celu")
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.celu(ember.tensor([-1.0, 1.0]), 2.0)
    tensor([-0.7869,  1.0000])
    """
    if inplace:
        return inplace_form(input, _celu, alpha, name="celu_", negative_slope=alpha)
    return _celu(input, alpha)


def _celu(input: Tensor, alpha: float) -> Tensor:
    out = where(input > 0, input, expm1(input.clamp(max=0) / alpha) * alpha)
    return named(out, "CeluBackward0")


@_autocast_rule("gelu")
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x) (exact with erf, or the tanh approximation).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.gelu(ember.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8413])
    """
    if approximate == "tanh":
        inner = (input + input.pow(3) * 0.044715) * math.sqrt(2.0 / math.pi)
        return named(input * 0.5 * (_tanh(inner) + 1.0), "GeluBackward0")
    if approximate != "none":
        raise EmberError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return named(input * 0.5 * (erf(input * (1.0 / math.sqrt(2.0))) + 1.0), "GeluBackward0")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.silu(ember.tensor([0.0]))
    tensor([0.])
    """
    return inplace_form(input, _silu, name="silu_") if inplace else _silu(input)


def _silu(input: Tensor) -> Tensor:
    return named(input * _sigmoid(input), "SiluBackward0")


@_autocast_rule("mish")
def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x)).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.mish(ember.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8651])
    """
    return inplace_form(input, _mish, name="mish_") if inplace else _mish(input)


def _mish(input: Tensor) -> Tensor:
    return named(input * _tanh(softplus(input)), "MishBackward0")


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-x)).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.sigmoid(ember.tensor([0.0]))
    tensor([0.5000])
    """
    return _sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.tanh(ember.tensor([0.0]))
    tensor([0.])
    """
    return _tanh(input)


@_autocast_rule("log_sigmoid")
def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for large |x|.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.logsigmoid(ember.tensor([0.0]))
    tensor([-0.6931])
    """
    return named(input.clamp(max=0) - log1p(exp(-input.abs())), "LogSigmoidBackward0")


@_autocast_rule("softplus")
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, linear above ``threshold`` (as in PyTorch).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.softplus(ember.tensor([0.0, 30.0]))
    tensor([ 0.6931, 30.0000])
    """
    bx = input * beta
    soft = log1p(exp(bx.clamp(max=threshold))) / beta
    return named(where(bx > threshold, input, soft), "SoftplusBackward0")


def _dim(dim, input: Tensor, op: str) -> int:
    if dim is None:  # PyTorch's legacy implicit choice
        return 0 if input.ndim in (0, 1, 3) else 1
    from ..._shape import wrap_dim

    return wrap_dim(dim, input.ndim, op)


@_autocast_rule("softmax")
def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim``, computed stably.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.softmax(ember.tensor([[1.0, 1.0]]), dim=1)
    tensor([[0.5000, 0.5000]])
    """
    if dtype is not None:
        input = input.to(dtype)
    return apply(Softmax(_dim(dim, input, "softmax")), to_float(input))


@_autocast_rule("log_softmax")
def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """log(softmax(x)) along ``dim``, computed stably.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.log_softmax(ember.tensor([[0.0, 0.0]]), dim=1)
    tensor([[-0.6931, -0.6931]])
    """
    if dtype is not None:
        input = input.to(dtype)
    return apply(LogSoftmax(_dim(dim, input, "log_softmax")), to_float(input))


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-x) along ``dim``.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.softmin(ember.tensor([0.0, 0.0]), 0)
    tensor([0.5000, 0.5000])
    """
    return softmax(-input, dim, dtype=dtype)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b) for the two halves a, b of ``dim``.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.glu(ember.tensor([2.0, 0.0]))
    tensor([1.])
    """
    a, b = input.chunk(2, dim)
    return a * _sigmoid(b)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.hardsigmoid(ember.tensor([-4.0, 0.0, 4.0]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    return (
        inplace_form(input, _hardsigmoid, name="hardsigmoid_") if inplace else _hardsigmoid(input)
    )


def _hardsigmoid(input: Tensor) -> Tensor:
    return named(_relu6_shifted(input) / 6, "HardsigmoidBackward0")


def _relu6_shifted(input: Tensor) -> Tensor:
    """relu6(x + 3), constant for the gradient outside the open interval (-3, 3), as in
    PyTorch's hardsigmoid and hardswish backward (clamp's gradient would pass at -3 and 3)."""
    shifted = input + 3
    return where((input > -3) & (input < 3), shifted, shifted.detach().clamp(0, 6))


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.hardswish(ember.tensor([-4.0, 4.0]))
    tensor([-0., 4.])
    """
    return inplace_form(input, _hardswish, name="hardswish_") if inplace else _hardswish(input)


def _hardswish(input: Tensor) -> Tensor:
    return named(input * _relu6_shifted(input) / 6, "HardswishBackward0")


@_autocast_rule("prelu")
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x where x > 0, else weight * x; ``weight`` has 1 or C (dimension 1) entries.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.prelu(ember.tensor([-2.0, 2.0]), ember.tensor([0.25]))
    tensor([-0.5000,  2.0000])
    """
    if weight.numel() != 1:
        c = input.shape[1] if input.ndim >= 2 else (input.shape[0] if input.ndim else 1)
        if weight.numel() != c:
            raise EmberError(
                f"prelu: mismatch of parameter numbers and input channel size: weight has "
                f"{weight.numel()} entries, input shape {tuple(input.shape)} has {c} channels"
            )
        if input.ndim >= 2:
            weight = weight.reshape((1, c) + (1,) * (input.ndim - 2))
    elif input.ndim:
        weight = weight.reshape(())
    return named(where(input > 0, input, input * weight), "PreluKernelBackward0")


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Randomized leaky ReLU: slopes drawn from U(lower, upper) in training, their mean in eval.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.rrelu(ember.tensor([-3.0, 1.0]), 0.1, 0.3)
    tensor([-0.6000,  1.0000])
    """
    if training:
        from ... import random as _random

        draws = _random.rng().uniform(lower, upper, tuple(input.shape))
        slope = tensor(draws.astype(input._data.dtype), device=input.device)
        refused = None
    else:
        slope = refused = (lower + upper) / 2
    if inplace:
        return inplace_form(input, _rrelu, slope, training, name="rrelu_", negative_slope=refused)
    return _rrelu(input, slope, training)


def _rrelu(input: Tensor, slope: Tensor | float, training: bool) -> Tensor:
    keep = input >= 0 if training else input > 0  # PyTorch's eval mode is leaky_relu
    return named(_sloped(input, slope, keep), "RreluWithNoiseBackward0")


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.softsign(ember.tensor([1.0, -3.0]))
    tensor([ 0.5000, -0.7500])
    """
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.tanhshrink(ember.tensor([0.0]))
    tensor([0.])
    """
    return input - _tanh(input)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.hardshrink(ember.tensor([0.3, -0.7]))
    tensor([ 0.0000, -0.7000])
    """
    return named(where((input > lambd) | (input < -lambd), input, 0.0), "HardshrinkBackward0")


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, else 0.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.softshrink(ember.tensor([0.3, -0.7]))
    tensor([ 0.0000, -0.2000])
    """
    out = where(input > lambd, input - lambd, where(input < -lambd, input + lambd, 0.0))
    return named(out, "SoftshrinkBackward0")


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else ``value``.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.threshold(ember.tensor([0.5, 2.0]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    if inplace:
        return inplace_form(input, _threshold, threshold, value, name="threshold_")
    return _threshold(input, threshold, value)


def _threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    return named(where(input > threshold, input, value), "ThresholdBackward0")


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:  # fmt: skip
    """A sample from the Gumbel-softmax distribution; ``hard`` gives one-hot samples whose
    gradient is the soft sample's (straight-through).

    >>> import ember
    >>> y = ember.nn.functional.gumbel_softmax(ember.zeros(2, 3), hard=True)
    >>> y.sum(-1).tolist()
    [1.0, 1.0]
    """
    from ...functions.creation import empty_like, zeros_like
    from .activation import softmax

    gumbels = -empty_like(logits).exponential_().log()
    soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    index = soft.argmax(dim, keepdim=True)
    one_hot = zeros_like(logits).scatter(dim, index, 1.0)
    return one_hot - soft.detach() + soft
