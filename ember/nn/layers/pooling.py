"""Pooling modules: MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d, AdaptiveMaxPool1d/2d.

>>> import ember
>>> ember.nn.MaxPool2d(2)(ember.ones(1, 3, 8, 8)).shape
ember.Size([1, 3, 4, 4])
"""

from __future__ import annotations

from ..._errors import EmberError
from ..._tensor import Tensor
from .._functional import pooling as P
from ..module import Module
from .linear import _module_error


class _Pool(Module):
    """Calls ``_pool(input, *attributes named by _args)``, naming the module in its errors."""

    _pool = None
    _args: tuple = ()

    def forward(self, input: Tensor):
        try:
            return self._pool(input, *(getattr(self, name) for name in self._args))
        except EmberError as e:
            raise _module_error(self, e) from None

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool2d(_Pool):
    """Max over (kh, kw) windows; ``stride`` defaults to the kernel size.

    >>> import ember
    >>> ember.nn.MaxPool2d(2)
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    """

    _pool = staticmethod(P.max_pool2d)
    _args = ("kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices")

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(MaxPool2d):
    """Max over windows of (N, C, L) input.

    >>> import ember
    >>> ember.nn.MaxPool1d(2)(ember.tensor([[[1.0, 3.0, 2.0, 0.0]]]))
    tensor([[[3., 2.]]])
    """

    _pool = staticmethod(P.max_pool1d)


class AvgPool2d(_Pool):
    """Mean over (kh, kw) windows.

    >>> import ember
    >>> ember.nn.AvgPool2d(2)(ember.ones(1, 1, 4, 4))
    tensor([[[[1., 1.],
              [1., 1.]]]])
    """

    _pool = staticmethod(P.avg_pool2d)
    _args = (
        "kernel_size",
        "stride",
        "padding",
        "ceil_mode",
        "count_include_pad",
        "divisor_override",
    )

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override=None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override


class AvgPool1d(_Pool):
    """Mean over windows of (N, C, L) input.

    >>> import ember
    >>> ember.nn.AvgPool1d(2)(ember.tensor([[[1.0, 3.0, 2.0, 0.0]]]))
    tensor([[[2., 1.]]])
    """

    _pool = staticmethod(P.avg_pool1d)
    _args = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad")

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = (kernel_size,) if isinstance(kernel_size, int) else tuple(kernel_size)
        stride = kernel_size if stride is None else stride
        self.stride = (stride,) if isinstance(stride, int) else tuple(stride)
        self.padding = (padding,) if isinstance(padding, int) else tuple(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad


class AdaptiveAvgPool2d(_Pool):
    """Average-pool to a fixed output size.

    >>> import ember
    >>> ember.nn.AdaptiveAvgPool2d((1, 1))(ember.ones(2, 3, 5, 5)).shape
    ember.Size([2, 3, 1, 1])
    """

    _pool = staticmethod(P.adaptive_avg_pool2d)
    _args = ("output_size",)

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """Average-pool (N, C, L) input to a fixed length.

    >>> import ember
    >>> ember.nn.AdaptiveAvgPool1d(2)(ember.ones(1, 3, 7)).shape
    ember.Size([1, 3, 2])
    """

    _pool = staticmethod(P.adaptive_avg_pool1d)


class AdaptiveMaxPool2d(Module):
    """``adaptive_max_pool2d`` as a module.

    >>> import ember
    >>> ember.nn.AdaptiveMaxPool2d((1, 1))(ember.ones(2, 3, 5, 5)).shape
    ember.Size([2, 3, 1, 1])
    """

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor):
        try:
            return P.adaptive_max_pool2d(input, self.output_size, self.return_indices)
        except EmberError as e:
            raise _module_error(self, e) from None

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    """``adaptive_max_pool1d`` as a module.

    >>> import ember
    >>> ember.nn.AdaptiveMaxPool1d(2)(ember.ones(2, 3, 5)).shape
    ember.Size([2, 3, 2])
    """

    def forward(self, input: Tensor):
        try:
            return P.adaptive_max_pool1d(input, self.output_size, self.return_indices)
        except EmberError as e:
            raise _module_error(self, e) from None


__all__ = [
    "MaxPool2d",
    "MaxPool1d",
    "AvgPool2d",
    "AvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool1d",
]
