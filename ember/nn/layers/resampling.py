"""Resampling and padding modules: Upsample (+ the UpsamplingNearest2d / Bilinear2d names),
PixelShuffle, PixelUnshuffle, ChannelShuffle, and the Zero / Constant / Reflection /
Replication / Circular padding layers.

>>> import ember
>>> ember.nn.Upsample(scale_factor=2)(ember.ones(1, 1, 2, 2)).shape
ember.Size([1, 1, 4, 4])
"""

from __future__ import annotations

from ..._errors import EmberError
from ..._tensor import Tensor
from .._functional import resampling as R
from .._functional.padding import pad
from ..module import Module
from .linear import _module_error


class _Named(Module):
    """``forward`` calls ``_apply_to(input)`` and names the module in its errors."""

    def _apply_to(self, input: Tensor) -> Tensor:
        raise NotImplementedError

    def forward(self, input: Tensor) -> Tensor:
        try:
            return self._apply_to(input)
        except EmberError as e:
            raise _module_error(self, e) from None


class Upsample(_Named):
    """``interpolate`` as a module.

    >>> import ember
    >>> ember.nn.Upsample(size=3, mode="linear")(ember.ones(1, 1, 2)).shape
    ember.Size([1, 1, 3])
    """

    def __init__(
        self,
        size=None,
        scale_factor=None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.size = size
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, int) else scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def _apply_to(self, input: Tensor) -> Tensor:
        return R.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self) -> str:
        what = (
            f"scale_factor={self.scale_factor}"
            if self.scale_factor is not None
            else (f"size={self.size}")
        )
        return f"{what}, mode='{self.mode}'"


class UpsamplingNearest2d(Upsample):
    """``Upsample(mode='nearest')`` on 4-D input.

    >>> import ember
    >>> ember.nn.UpsamplingNearest2d(scale_factor=2)(ember.ones(1, 1, 1, 1)).shape
    ember.Size([1, 1, 2, 2])
    """

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(mode='bilinear', align_corners=True)`` on 4-D input.

    >>> import ember
    >>> ember.nn.UpsamplingBilinear2d(size=3)(ember.ones(1, 1, 2, 2)).shape
    ember.Size([1, 1, 3, 3])
    """

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(_Named):
    """``pixel_shuffle`` as a module.

    >>> import ember
    >>> ember.nn.PixelShuffle(2)(ember.ones(1, 8, 3, 3)).shape
    ember.Size([1, 2, 6, 6])
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def _apply_to(self, input: Tensor) -> Tensor:
        return R.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(_Named):
    """``pixel_unshuffle`` as a module.

    >>> import ember
    >>> ember.nn.PixelUnshuffle(2)(ember.ones(1, 2, 6, 6)).shape
    ember.Size([1, 8, 3, 3])
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def _apply_to(self, input: Tensor) -> Tensor:
        return R.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(_Named):
    """``channel_shuffle`` as a module.

    >>> import ember
    >>> ember.nn.ChannelShuffle(2)(ember.ones(1, 4, 2, 2)).shape
    ember.Size([1, 4, 2, 2])
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def _apply_to(self, input: Tensor) -> Tensor:
        return R.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class _Pad(_Named):
    dims = 1
    mode = "constant"

    def __init__(self, padding, value: float = 0.0) -> None:
        super().__init__()
        self.padding = (padding,) * (2 * self.dims) if isinstance(padding, int) else tuple(padding)
        if len(self.padding) != 2 * self.dims:
            raise EmberError(
                f"{type(self).__name__}: padding must be an int or a {2 * self.dims}-tuple, got "
                f"{padding}"
            )
        self.value = value

    def _apply_to(self, input: Tensor) -> Tensor:
        if input.ndim not in (self.dims + 1, self.dims + 2):
            raise EmberError(
                f"expected a {self.dims + 1}-D or {self.dims + 2}-D input, got shape "
                f"{tuple(input.shape)}"
            )
        if self.mode == "constant":
            return pad(input, self.padding, "constant", self.value)
        return pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        if type(self).__name__.startswith("Constant"):
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


def _pad_class(name: str, dims: int, mode: str, doc_example: str):
    if mode == "constant" and name.startswith("Constant"):

        def init(self, padding, value: float) -> None:
            _Pad.__init__(self, padding, value)
    else:

        def init(self, padding) -> None:
            _Pad.__init__(self, padding)

    kind = {"constant": "a constant", "reflect": "the reflection", "replicate": "the edge"}
    doc = (
        f"Pad the last {dims} dim(s) with {kind.get(mode, 'the wrap-around')} "
        f"(``pad(..., mode='{mode}')``).\n\n    >>> import ember\n    >>> {doc_example}\n"
    )
    return type(name, (_Pad,), {"dims": dims, "mode": mode, "__init__": init, "__doc__": doc})


ZeroPad1d = _pad_class("ZeroPad1d", 1, "constant", "_ = ember.nn.ZeroPad1d(1)")
ZeroPad2d = _pad_class("ZeroPad2d", 2, "constant", "_ = ember.nn.ZeroPad2d(1)")
ZeroPad3d = _pad_class("ZeroPad3d", 3, "constant", "_ = ember.nn.ZeroPad3d(1)")
ConstantPad1d = _pad_class("ConstantPad1d", 1, "constant", "_ = ember.nn.ConstantPad1d(1, 2.0)")
ConstantPad2d = _pad_class("ConstantPad2d", 2, "constant", "_ = ember.nn.ConstantPad2d(1, 2.0)")
ConstantPad3d = _pad_class("ConstantPad3d", 3, "constant", "_ = ember.nn.ConstantPad3d(1, 2.0)")
ReflectionPad1d = _pad_class("ReflectionPad1d", 1, "reflect", "_ = ember.nn.ReflectionPad1d(1)")
ReflectionPad2d = _pad_class("ReflectionPad2d", 2, "reflect", "_ = ember.nn.ReflectionPad2d(1)")
ReflectionPad3d = _pad_class("ReflectionPad3d", 3, "reflect", "_ = ember.nn.ReflectionPad3d(1)")
ReplicationPad1d = _pad_class(
    "ReplicationPad1d", 1, "replicate", "_ = ember.nn.ReplicationPad1d(1)"
)
ReplicationPad2d = _pad_class(
    "ReplicationPad2d", 2, "replicate", "_ = ember.nn.ReplicationPad2d(1)"
)
ReplicationPad3d = _pad_class(
    "ReplicationPad3d", 3, "replicate", "_ = ember.nn.ReplicationPad3d(1)"
)
CircularPad1d = _pad_class("CircularPad1d", 1, "circular", "_ = ember.nn.CircularPad1d(1)")
CircularPad2d = _pad_class("CircularPad2d", 2, "circular", "_ = ember.nn.CircularPad2d(1)")
CircularPad3d = _pad_class("CircularPad3d", 3, "circular", "_ = ember.nn.CircularPad3d(1)")

for _cls in (
    ZeroPad1d, ZeroPad2d, ZeroPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d,
    ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
    ReplicationPad3d, CircularPad1d, CircularPad2d, CircularPad3d,
):  # fmt: skip
    _cls.__module__ = __name__

__all__ = [
    "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle",
    "ChannelShuffle", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
]  # fmt: skip
