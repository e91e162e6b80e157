"""Linear, Bilinear, LazyLinear, Identity, Flatten, Unflatten.

>>> import ember
>>> ember.nn.Linear(3, 2)(ember.ones(4, 3)).shape
ember.Size([4, 2])
"""

from __future__ import annotations

import math

from ..._errors import EmberError, ShapeError
from ..._tensor import Tensor
from .. import init
from .._functional.linear import bilinear, linear
from ..module import Module
from ..parameter import Parameter


def _module_error(module, e: EmberError) -> EmberError:
    """``e`` with the module's name in front instead of the function's: errors raised inside a
    layer's forward read ``Conv2d: ...``, not ``conv2d: ...``."""
    name, msg = type(module).__name__, str(e)
    if msg.startswith(name + ":"):
        return e
    head, sep, rest = msg.partition(": ")
    if sep and head.isidentifier() and head.islower():
        msg = rest
    return type(e)(f"{name}: {msg}")


def _empty(*shape, device=None, dtype=None) -> Tensor:
    from ...functions.creation import empty

    return empty(*shape, device=device, dtype=dtype)


class Identity(Module):
    """Returns its input.

    >>> import ember
    >>> ember.nn.Identity()(ember.ones(1))
    tensor([1.])
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x W^T + b``, with PyTorch's default initialization (Kaiming-uniform, a = sqrt(5)).

    >>> import ember
    >>> layer = ember.nn.Linear(4, 3)
    >>> layer.weight.shape, layer.bias.shape
    (ember.Size([3, 4]), ember.Size([3]))
    """

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(_empty(out_features, in_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        try:
            return linear(input, self.weight, self.bias)
        except ShapeError:
            raise ShapeError(
                f"Linear: expected input with {self.in_features} features (last dimension), got "
                f"input shape {tuple(input.shape)}"
            ) from None
        except EmberError as e:
            raise _module_error(self, e) from None

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Bilinear(Module):
    """``y = x1^T A x2 + b`` for each output feature.

    >>> import ember
    >>> ember.nn.Bilinear(3, 4, 2)(ember.ones(5, 3), ember.ones(5, 4)).shape
    ember.Size([5, 2])
    """

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(
            _empty(out_features, in1_features, in2_features, device=device, dtype=dtype)
        )
        if bias:
            self.bias = Parameter(_empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        bound = 1 / math.sqrt(in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        if (
            input1.ndim == 0
            or input2.ndim == 0
            or input1.shape[-1] != self.in1_features
            or input2.shape[-1] != self.in2_features
            or input1.shape[:-1] != input2.shape[:-1]
        ):
            raise ShapeError(
                f"Bilinear: expected inputs (*, {self.in1_features}) and (*, {self.in2_features}) "
                f"with the same leading dimensions, got {tuple(input1.shape)} and "
                f"{tuple(input2.shape)}"
            )
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class Flatten(Module):
    """Flatten dimensions ``start_dim`` to ``end_dim``.

    >>> import ember
    >>> ember.nn.Flatten()(ember.ones(2, 3, 4)).shape
    ember.Size([2, 12])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size``.

    >>> import ember
    >>> ember.nn.Unflatten(1, (3, 4))(ember.ones(2, 12)).shape
    ember.Size([2, 3, 4])
    """

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class LazyLinear(Module):
    """A ``Linear`` whose ``in_features`` comes from the first input: its parameters are
    created then (keeping their identity, so an optimizer made earlier still holds them) and
    the module becomes a ``Linear``.

    >>> import ember
    >>> layer = ember.nn.LazyLinear(3)
    >>> layer(ember.ones(2, 5)).shape, type(layer).__name__, layer.in_features
    (ember.Size([2, 3]), 'Linear', 5)
    """

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        from ...functions.creation import empty

        self.in_features, self.out_features = 0, out_features
        self._factory = dict(device=device, dtype=dtype)
        self.weight = Parameter(empty(0, **self._factory))
        if bias:
            self.bias = Parameter(empty(0, **self._factory))
        else:
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:
        from ..._config import no_grad
        from ...functions.creation import empty
        from .linear import Linear

        if input.ndim == 0:
            raise ShapeError(
                "LazyLinear: expected an input with at least 1 dimension, got a 0-d tensor"
            )
        self.in_features = input.shape[-1]
        where = dict(device=self.weight.device, dtype=self.weight.dtype)  # after any .to()
        with no_grad():
            self.weight.data = empty(self.out_features, self.in_features, **where)
            if self.bias is not None:
                self.bias.data = empty(self.out_features, **where)
        del self._factory
        self.__class__ = Linear
        self.reset_parameters()
        return self(input)

    def extra_repr(self) -> str:
        return f"in_features=0, out_features={self.out_features}, bias={self.bias is not None}"


__all__ = ["Identity", "Linear", "Bilinear", "Flatten", "Unflatten", "LazyLinear"]
