"""The in-place activation functions PyTorch's ``nn.functional`` has: ``relu_``, ``elu_``,
``leaky_relu_``, ``hardtanh_``, ``threshold_``, ``celu_``, ``selu_``, ``rrelu_``; each is its
activation with ``inplace=True``.

>>> import ember
>>> import ember.nn.functional as F
>>> x = ember.tensor([-1.0, 2.0])
>>> F.relu_(x), x
(tensor([0., 2.]), tensor([0., 2.]))
"""

from __future__ import annotations

from ..._tensor import Tensor
from .activation import celu, elu, hardtanh, leaky_relu, relu, rrelu, selu
from .activation import threshold as _threshold  # threshold_'s argument has its name


def relu_(input: Tensor) -> Tensor:
    """In-place ``relu``.

    >>> import ember
    >>> ember.nn.functional.relu_(ember.tensor([-1.0, 1.0]))
    tensor([0., 1.])
    """
    return relu(input, inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``elu``.

    >>> import ember
    >>> ember.nn.functional.elu_(ember.tensor([0.0, 1.0]))
    tensor([0., 1.])
    """
    return elu(input, alpha, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place ``leaky_relu``.

    >>> import ember
    >>> ember.nn.functional.leaky_relu_(ember.tensor([-2.0, 1.0]), 0.5)
    tensor([-1.,  1.])
    """
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place ``hardtanh``.

    >>> import ember
    >>> ember.nn.functional.hardtanh_(ember.tensor([-2.0, 0.5]))
    tensor([-1.0000,  0.5000])
    """
    return hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place ``threshold``.

    >>> import ember
    >>> ember.nn.functional.threshold_(ember.tensor([0.5, 2.0]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    return _threshold(input, threshold, value, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``celu``.

    >>> import ember
    >>> ember.nn.functional.celu_(ember.tensor([0.0, 1.0]))
    tensor([0., 1.])
    """
    return celu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """In-place ``selu``.

    >>> import ember
    >>> ember.nn.functional.selu_(ember.tensor([1.0]))
    tensor([1.0507])
    """
    return selu(input, inplace=True)


def rrelu_(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False
) -> Tensor:
    """In-place ``rrelu``.

    >>> import ember
    >>> ember.nn.functional.rrelu_(ember.tensor([-3.0, 1.0]), 0.1, 0.3)
    tensor([-0.6000,  1.0000])
    """
    return rrelu(input, lower, upper, training, inplace=True)


__all__ = ["relu_", "elu_", "leaky_relu_", "hardtanh_", "threshold_", "celu_", "selu_", "rrelu_"]
