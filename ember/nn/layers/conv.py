"""Conv1d, Conv2d, ConvTranspose2d with PyTorch's defaults and initialization.

>>> import ember
>>> ember.nn.Conv2d(3, 8, 3, padding=1)(ember.ones(2, 3, 16, 16)).shape
ember.Size([2, 8, 16, 16])
"""

from __future__ import annotations

import math

from ..._errors import EmberError, ShapeError
from ..._tensor import Tensor
from .. import init
from .._functional._args import pair, single
from .._functional.conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d
from .._functional.conv3d import _triple as _conv3d_triple
from .._functional.conv3d import conv3d
from .._functional.padding import pad
from ..module import Module
from ..parameter import Parameter
from .linear import _empty, _module_error


class _ConvNd(Module):
    _dims = 2

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride,
        padding,
        dilation,
        groups: int,
        bias: bool,
        padding_mode: str,
        transposed: bool,
        output_padding,
        device,
        dtype,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        if groups <= 0:
            raise ValueError(f"{name}: groups must be a positive integer")
        if in_channels % groups:
            raise ValueError(f"{name}: in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError(f"{name}: out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(
                f"{name}: padding_mode must be one of 'zeros', 'reflect', 'replicate' or "
                f"'circular', got {padding_mode!r}"
            )
        norm = {2: pair, 1: lambda v, n, o: (single(v, n, o),), 3: _triple}[self._dims]
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = norm(kernel_size, "kernel_size", name)
        self.stride = norm(stride, "stride", name)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{name}: invalid padding string {padding!r}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(
                    f"{name}: padding='same' is not supported for strided convolutions"
                )
            self.padding = padding
        else:
            self.padding = norm(padding, "padding", name)
        self.dilation = norm(dilation, "dilation", name)
        self.output_padding = norm(output_padding, "output_padding", name)
        self.groups, self.padding_mode, self.transposed = groups, padding_mode, transposed
        shape = (
            (in_channels, out_channels // groups)
            if transposed
            else (out_channels, in_channels // groups)
        ) + self.kernel_size
        self.weight = Parameter(_empty(*shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        zeros = (0,) * self._dims
        if self.padding != zeros:
            s += ", padding={padding}"
        if self.dilation != (1,) * self._dims:
            s += ", dilation={dilation}"
        if self.output_padding != zeros:
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def _check_input(self, input: Tensor) -> None:
        want = self._dims + 2
        if input.ndim not in (want - 1, want):
            raise ShapeError(
                f"{type(self).__name__}: expected a {want - 1}-D (unbatched) or {want}-D (batched) "
                f"input, got shape {tuple(input.shape)}"
            )
        c = input.shape[-self._dims - 1]
        expected = self.in_channels
        if c != expected:
            raise ShapeError(
                f"{type(self).__name__}: expected input with {expected} channels, got {c} "
                f"(input shape {tuple(input.shape)})"
            )

    def _mode_padded(self, input: Tensor):
        """Input padded by padding_mode (non-zero modes), and the padding left for the conv."""
        if self.padding_mode == "zeros":
            return input, self.padding
        pads = []  # PyTorch's _reversed_padding_repeated_twice: last dimension first
        for i in reversed(range(self._dims)):
            if self.padding == "same":
                total = self.dilation[i] * (self.kernel_size[i] - 1)
                pads += [total // 2, total - total // 2]
            elif self.padding == "valid":
                pads += [0, 0]
            else:
                pads += [self.padding[i], self.padding[i]]
        return pad(input, tuple(pads), mode=self.padding_mode), 0


def _triple(value, name: str, op: str) -> tuple:
    return _conv3d_triple(value, name)


class _Conv(_ConvNd):
    """Conv1d and Conv2d: PyTorch's shared signature and forward (``_conv`` is the function)."""

    _conv = staticmethod(conv2d)

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            False,
            0,
            device,
            dtype,
        )

    def forward(self, input: Tensor) -> Tensor:
        self._check_input(input)
        x, padding = self._mode_padded(input)
        try:
            return self._conv(
                x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups
            )
        except EmberError as e:
            raise _module_error(self, e) from None


class Conv2d(_Conv):
    """2-D convolution over (N, C, H, W) input.

    >>> import ember
    >>> ember.nn.Conv2d(1, 2, 3)
    Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1))
    """


class Conv3d(_Conv):
    """3-D convolution over (N, C, D, H, W) input (as depth-tap sums of 2-D convolutions).

    >>> import ember
    >>> ember.nn.Conv3d(2, 4, 3, padding=1)(ember.ones(1, 2, 4, 4, 4)).shape
    ember.Size([1, 4, 4, 4, 4])
    """

    _dims = 3
    _conv = staticmethod(conv3d)


class Conv1d(_Conv):
    """1-D convolution over (N, C, L) input.

    >>> import ember
    >>> ember.nn.Conv1d(2, 4, 3)(ember.ones(1, 2, 10)).shape
    ember.Size([1, 4, 8])
    """

    _dims = 1
    _conv = staticmethod(conv1d)


class ConvTranspose2d(_ConvNd):
    """Transposed 2-D convolution (the gradient of Conv2d with respect to its input).

    >>> import ember
    >>> ember.nn.ConvTranspose2d(4, 2, 3, stride=2)(ember.ones(1, 4, 5, 5)).shape
    ember.Size([1, 2, 11, 11])
    """

    _conv = staticmethod(conv_transpose2d)

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'{type(self).__name__}: only "zeros" padding mode is supported')
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            True,
            output_padding,
            device,
            dtype,
        )

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        self._check_input(input)
        output_padding = self.output_padding
        if output_size is not None:
            output_padding = self._output_padding_for(input, output_size)
        try:
            return self._conv(
                input,
                self.weight,
                self.bias,
                self.stride,
                self.padding,
                output_padding,
                self.groups,
                self.dilation,
            )
        except EmberError as e:
            raise _module_error(self, e) from None

    def _output_padding_for(self, input: Tensor, output_size) -> tuple:
        d = self._dims
        size = tuple(int(s) for s in output_size)[-d:]
        result = []
        for i, want in enumerate(size):
            base = (
                (input.shape[-d + i] - 1) * self.stride[i]
                - 2 * self.padding[i]
                + self.dilation[i] * (self.kernel_size[i] - 1)
                + 1
            )
            extra = want - base
            if not 0 <= extra < max(self.stride[i], self.dilation[i]):
                top = base + max(self.stride[i], self.dilation[i]) - 1
                raise ShapeError(
                    f"{type(self).__name__}: requested output size {size} is not reachable from "
                    f"input {tuple(input.shape)} (valid sizes along dimension {i} are "
                    f"{base} to {top})"
                )
            result.append(extra)
        return tuple(result)


class ConvTranspose1d(ConvTranspose2d):
    """Transposed 1-D convolution over (N, C, L) input.

    >>> import ember
    >>> ember.nn.ConvTranspose1d(4, 2, 3, stride=2)(ember.ones(1, 4, 5)).shape
    ember.Size([1, 2, 11])
    """

    _dims = 1
    _conv = staticmethod(conv_transpose1d)


__all__ = ["Conv2d", "Conv1d", "Conv3d", "ConvTranspose2d", "ConvTranspose1d"]
