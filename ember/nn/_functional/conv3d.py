"""``conv3d``: a 3-D convolution as ``kd`` batched 2-D convolutions, one per depth tap.

Each depth tap takes the depth slices it sees at every output depth (a strided slice), folds
output depth into the batch and runs ``conv2d`` with that tap's 2-D kernel; the taps are
summed. The 2-D path does the im2col + GEMM work, and gradients come through it.

>>> import ember
>>> import ember.nn.functional as F
>>> F.conv3d(ember.ones(1, 1, 3, 3, 3), ember.ones(1, 1, 2, 2, 2)).shape
ember.Size([1, 1, 2, 2, 2])
"""

from __future__ import annotations

from ..._errors import ShapeError
from ..._tensor import Tensor
from ...amp.autocast_mode import rule as _autocast_rule
from .conv import conv2d


def _triple(value, name: str) -> tuple:
    if isinstance(value, int):
        return (value,) * 3
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * 3
    if len(value) != 3:
        raise ShapeError(f"conv3d: {name} must be an int or 3 ints, got {value}")
    return value


@_autocast_rule("conv3d")
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:  # fmt: skip
    """3-D convolution (cross-correlation) of (N, C, D, H, W) or (C, D, H, W) input;
    ``padding`` may be an int, 3 ints, ``'valid'`` or ``'same'``.

    >>> import ember
    >>> ember.nn.functional.conv3d(ember.ones(2, 1, 4, 4, 4), ember.ones(3, 1, 3, 3, 3),
    ...                            padding=1).shape
    ember.Size([2, 3, 4, 4, 4])
    """
    from .padding import pad

    unbatched = input.ndim == 4
    if unbatched:
        input = input.unsqueeze(0)
    if input.ndim != 5 or weight.ndim != 5:
        raise ShapeError(
            f"conv3d: expected a 5-D input (N, C, D, H, W) and a 5-D weight, got shapes "
            f"{tuple(input.shape)} and {tuple(weight.shape)}"
        )
    if input.shape[1] != weight.shape[1] * groups:
        raise ShapeError(
            f"conv3d: expected input with {weight.shape[1] * groups} channels, got "
            f"{input.shape[1]} (input shape {tuple(input.shape)}, weight shape "
            f"{tuple(weight.shape)}, groups={groups})"
        )
    stride, dilation = _triple(stride, "stride"), _triple(dilation, "dilation")
    kernel = tuple(weight.shape[2:])
    if padding == "valid":
        padding = (0, 0, 0)
    elif padding == "same":
        if stride != (1, 1, 1):
            raise ShapeError("conv3d: padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        pads = []
        for total in reversed(totals):
            pads += [total // 2, total - total // 2]
        input = pad(input, tuple(pads))
        padding = (0, 0, 0)
    padding = _triple(padding, "padding")
    if padding[0]:
        input = pad(input, (0, 0, 0, 0, padding[0], padding[0]))
    n, _, depth = input.shape[:3]
    sd, dd = stride[0], dilation[0]
    out_depth = (depth - dd * (kernel[0] - 1) - 1) // sd + 1
    if out_depth <= 0:
        raise ShapeError(
            f"conv3d: kernel depth {kernel[0]} (dilation {dd}) is larger than the padded input "
            f"depth {depth}"
        )
    out = None
    for k in range(kernel[0]):
        start = k * dd
        taps = input[:, :, start : start + (out_depth - 1) * sd + 1 : sd]  # (N, C, Do, H, W)
        flat = taps.transpose(1, 2).reshape(n * out_depth, *taps.shape[1:2], *taps.shape[3:])
        part = conv2d(flat, weight[:, :, k], None, stride[1:], padding[1:], dilation[1:], groups)
        out = part if out is None else out + part
    out = out.reshape(n, out_depth, *out.shape[1:]).transpose(1, 2)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return out.squeeze(0) if unbatched else out


__all__ = ["conv3d"]
