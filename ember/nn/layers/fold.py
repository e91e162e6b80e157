"""Unfold and Fold: sliding local blocks to columns and back (im2col / col2im)."""

from __future__ import annotations

from ..._errors import EmberError
from ..._tensor import Tensor
from .._functional import conv as _conv
from ..module import Module
from .linear import _module_error


class Unfold(Module):
    """``unfold`` (im2col) as a module.

    >>> import ember
    >>> ember.nn.Unfold(kernel_size=2)(ember.ones(1, 3, 4, 4)).shape
    ember.Size([1, 12, 9])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = (
            kernel_size, dilation, padding, stride,
        )  # fmt: skip

    def forward(self, input: Tensor) -> Tensor:
        try:
            return _conv.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)
        except EmberError as e:
            raise _module_error(self, e) from None

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )


class Fold(Unfold):
    """``fold`` (col2im) as a module.

    >>> import ember
    >>> ember.nn.Fold(output_size=(4, 4), kernel_size=2)(ember.ones(1, 12, 9)).shape
    ember.Size([1, 3, 4, 4])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        try:
            return _conv.fold(
                input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
            )
        except EmberError as e:
            raise _module_error(self, e) from None

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, " + super().extra_repr()


__all__ = ["Unfold", "Fold"]
