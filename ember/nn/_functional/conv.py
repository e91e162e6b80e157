"""Convolutions: conv1d, conv2d, conv_transpose2d (im2col + GEMM primitives in ember.ops.conv).

>>> import ember
>>> import ember.nn.functional as F
>>> F.conv2d(ember.ones(1, 3, 8, 8), ember.ones(4, 3, 3, 3), padding="same").shape
ember.Size([1, 4, 8, 8])
"""

from __future__ import annotations

from ..._errors import DTypeError, ShapeError
from ..._node import named
from ..._tensor import Tensor
from ...amp.autocast_mode import rule as _autocast_rule
from ...ops.base import apply
from ...ops.conv import Conv2d, Conv2dGradInput, conv_output_shape, out_size
from ._args import at_least, pair, single


def _same_padding(kernel: tuple, dilation: tuple, stride: tuple, op: str) -> tuple:
    if stride != (1, 1):
        raise ValueError(f"{op}: padding='same' is not supported for strided convolutions")
    total = [d * (k - 1) for k, d in zip(kernel, dilation)]
    if any(t % 2 for t in total):
        return None  # asymmetric: caller pads explicitly
    return tuple(t // 2 for t in total)


def _check_dtypes(op: str, input: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    """PyTorch refuses mixed dtypes here (no promotion): so do we, naming them."""
    if not input.dtype.is_floating_point:
        raise DTypeError(f"{op}: expected a floating-point input, got {input.dtype}")
    if weight.dtype is not input.dtype or (bias is not None and bias.dtype is not input.dtype):
        got = f"input {input.dtype}, weight {weight.dtype}"
        if bias is not None:
            got += f", bias {bias.dtype}"
        raise DTypeError(
            f"{op}: expected input, weight and bias of one dtype, got {got} (input shape "
            f"{tuple(input.shape)}, weight shape {tuple(weight.shape)})"
        )


def _finish(out: Tensor, bias: Tensor | None, channels: int, unbatched: bool, op: str) -> Tensor:
    """Adds the (checked) bias per channel and drops the batch dimension an unbatched input got."""
    if bias is not None:
        if bias.ndim != 1 or bias.shape[0] != channels:
            raise ShapeError(
                f"{op}: expected a bias of shape ({channels},), got {tuple(bias.shape)}"
            )
        out = out + bias.reshape(1, channels, 1, 1)
    return _convolution(out.reshape(*out.shape[1:]) if unbatched else out, unbatched)


def _convolution(out: Tensor, unbatched: bool) -> Tensor:
    """A convolution's result under PyTorch's name (an unbatched input's ends in a squeeze)."""
    return named(out, "SqueezeBackward1" if unbatched else "ConvolutionBackward0")


def _check_arguments(op: str, stride, dilation, padding, groups, input, weight) -> None:
    """Stride and dilation positive, padding non-negative, and (for a convolution whose weight
    is (C_out, C_in / groups, ...)) the input's channels the weight's, named in ``op``'s terms."""
    at_least(stride, "stride", op)
    at_least(dilation, "dilation", op)
    if not isinstance(padding, str):
        at_least(padding if isinstance(padding, int) else tuple(padding), "padding", op, low=0)
    if input.ndim >= 2 and weight.ndim >= 2 and groups >= 1 and not op.startswith("conv_t"):
        c = input.shape[-2] if op.endswith("1d") else input.shape[-3]
        if weight.shape[1] * groups != c:
            raise ShapeError(
                f"{op}: expected input with {weight.shape[1] * groups} channels, got {c} (input "
                f"shape {tuple(input.shape)}, weight shape {tuple(weight.shape)}, "
                f"groups={groups})"
            )


def _via_2d(op: str, weight_layout: str, input: Tensor, weight: Tensor, conv2d_fn) -> Tensor:
    """A 1-D convolution of (N, C, L) or (C, L) input as ``conv2d_fn(input, weight)`` on
    height-1 images (``conv2d_fn`` converts the 1-D arguments, after these shape checks)."""
    unbatched = input.ndim == 2
    if unbatched:
        input = input.unsqueeze(0)
    if input.ndim != 3 or weight.ndim != 3:
        raise ShapeError(
            f"{op}: expected a 3-D input (N, C, L) and a 3-D weight ({weight_layout}, k), got "
            f"input {tuple(input.shape)} and weight {tuple(weight.shape)}"
        )
    out = conv2d_fn(input.unsqueeze(2), weight.unsqueeze(2)).squeeze(2)
    return _convolution(out.squeeze(0) if unbatched else out, unbatched)


@_autocast_rule("conv2d")
def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """2-D convolution (cross-correlation) of (N, C, H, W) or (C, H, W) input.

    ``padding`` may be an int, a pair, ``'valid'`` or ``'same'``.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.conv2d(ember.ones(1, 1, 3, 3), ember.ones(1, 1, 2, 2))
    tensor([[[[4., 4.],
              [4., 4.]]]])
    """
    op = "conv2d"
    unbatched = input.ndim == 3
    if unbatched:
        input = input.reshape(1, *input.shape)
    stride, dilation = pair(stride, "stride", op), pair(dilation, "dilation", op)
    kernel = tuple(weight.shape[2:]) if weight.ndim == 4 else (1, 1)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            sym = _same_padding(kernel, dilation, stride, op)
            if sym is None:
                from .padding import pad

                total = [d * (k - 1) for k, d in zip(kernel, dilation)]
                input = pad(
                    input,
                    (
                        total[1] // 2,
                        total[1] - total[1] // 2,
                        total[0] // 2,
                        total[0] - total[0] // 2,
                    ),
                )
                sym = (0, 0)
            padding = sym
        else:
            raise ValueError(
                f"{op}: invalid padding string {padding!r}, expected 'valid' or 'same'"
            )
    padding = pair(padding, "padding", op)
    _check_dtypes(op, input, weight, bias)
    x, w = input, weight
    conv = Conv2d(stride, padding, dilation, int(groups))
    conv_output_shape(x.shape, w.shape, conv)  # named errors before NumPy sees the shapes
    return _finish(apply(conv, x, w), bias, w.shape[0], unbatched, op)


@_autocast_rule("conv1d")
def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """1-D convolution of (N, C, L) or (C, L) input (a conv2d with height 1).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.conv1d(ember.ones(1, 2, 5), ember.ones(3, 2, 3)).shape
    ember.Size([1, 3, 3])
    """
    op = "conv1d"
    stride_, dilation_ = single(stride, "stride", op), single(dilation, "dilation", op)
    _check_arguments(op, stride_, dilation_, padding, groups, input, weight)

    def run(x: Tensor, w: Tensor) -> Tensor:
        pad = padding if isinstance(padding, str) else (0, single(padding, "padding", op))
        return conv2d(x, w, bias, (1, stride_), pad, (1, dilation_), groups)

    return _via_2d(op, "O, C/groups", input, weight, run)


@_autocast_rule("conv_transpose2d")
def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    output_padding=0,
    groups: int = 1,
    dilation=1,
) -> Tensor:
    """Transposed 2-D convolution: the gradient of conv2d with respect to its input.

    ``weight`` has shape (C_in, C_out / groups, kh, kw), as in PyTorch.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.conv_transpose2d(ember.ones(1, 2, 3, 3), ember.ones(2, 4, 3, 3), stride=2).shape
    ember.Size([1, 4, 7, 7])
    """
    op = "conv_transpose2d"
    unbatched = input.ndim == 3
    if unbatched:
        input = input.reshape(1, *input.shape)
    stride, padding = pair(stride, "stride", op), pair(padding, "padding", op)
    dilation, output_padding = (
        pair(dilation, "dilation", op),
        pair(output_padding, "output_padding", op),
    )
    _check_arguments(op, stride, dilation, padding, groups, input, weight)
    at_least(output_padding, "output_padding", op, low=0)
    if input.ndim != 4 or weight.ndim != 4:
        raise ShapeError(
            f"{op}: expected a 4-D input and a 4-D weight, got {tuple(input.shape)} and "
            f"{tuple(weight.shape)}"
        )
    n, c, h, w = input.shape
    if weight.shape[0] != c:
        raise ShapeError(
            f"{op}: expected input with {weight.shape[0]} channels, got {c} (input shape "
            f"{tuple(input.shape)}, weight shape {tuple(weight.shape)})"
        )
    if any(op_ >= max(s, d) for op_, s, d in zip(output_padding, stride, dilation)):
        raise ValueError(f"{op}: output padding must be smaller than either stride or dilation")
    kh, kw = weight.shape[2:]
    hs = [
        (size - 1) * s - 2 * p + d * (k - 1) + o + 1
        for size, s, p, d, k, o in zip((h, w), stride, padding, dilation, (kh, kw), output_padding)
    ]
    for size, got, k, s, p, d in zip(hs, (h, w), (kh, kw), stride, padding, dilation):
        if out_size(size, k, s, p, d) != got:
            raise ShapeError(
                f"{op}: inconsistent output size {tuple(hs)} for input {tuple(input.shape)}"
            )
    _check_dtypes(op, input, weight, bias)
    x, wt = input, weight
    out_channels = weight.shape[1] * groups
    out = apply(
        Conv2dGradInput((n, out_channels, hs[0], hs[1]), stride, padding, dilation, int(groups)),
        x,
        wt,
    )
    return _finish(out, bias, out_channels, unbatched, op)


@_autocast_rule("conv_transpose1d")
def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    output_padding=0,
    groups: int = 1,
    dilation=1,
) -> Tensor:
    """Transposed 1-D convolution of (N, C, L) or (C, L) input (height-1 conv_transpose2d).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.conv_transpose1d(ember.ones(1, 2, 4), ember.ones(2, 3, 3), stride=2).shape
    ember.Size([1, 3, 9])
    """
    op = "conv_transpose1d"
    at_least(single(stride, "stride", op), "stride", op)
    at_least(single(dilation, "dilation", op), "dilation", op)
    return _via_2d(
        op,
        "C, O/groups",
        input,
        weight,
        lambda x, w: conv_transpose2d(
            x,
            w,
            bias,
            (1, single(stride, "stride", op)),
            (0, single(padding, "padding", op)),
            (0, single(output_padding, "output_padding", op)),
            groups,
            (1, single(dilation, "dilation", op)),
        ),
    )


def _block_arguments(op: str, kernel_size, dilation, padding, stride) -> tuple:
    """unfold's and fold's ``(kernel, dilation, padding, stride)`` as pairs, checked."""
    kernel, dilation = pair(kernel_size, "kernel_size", op), pair(dilation, "dilation", op)
    padding, stride = pair(padding, "padding", op), pair(stride, "stride", op)
    at_least(kernel, "kernel_size", op)
    at_least(dilation, "dilation", op)
    at_least(padding, "padding", op, low=0)
    at_least(stride, "stride", op)
    return kernel, dilation, padding, stride


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Extract sliding blocks (im2col): (N, C, H, W) -> (N, C * kh * kw, L).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.unfold(ember.ones(1, 2, 4, 4), 2).shape
    ember.Size([1, 8, 9])
    """
    from ...ops.pool import Unfold

    op = "unfold"
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    u = Unfold(*_block_arguments(op, kernel_size, dilation, padding, stride))
    u.infer(x)
    out = apply(u, x)
    return out.squeeze(0) if unbatched else out


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum sliding blocks back into an image (col2im): (N, C * kh * kw, L) -> (N, C, H, W).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.fold(F.unfold(ember.ones(1, 1, 3, 3), 2), (3, 3), 2)
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """
    from ...ops.pool import Fold

    op = "fold"
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    if x.ndim != 3:
        raise ShapeError(f"{op}: expected a 2-D or 3-D input, got shape {tuple(input.shape)}")
    size = pair(output_size, "output_size", op)
    f = Fold(size, *_block_arguments(op, kernel_size, dilation, padding, stride))
    f.infer(x)
    out = apply(f, x)
    return out.squeeze(0) if unbatched else out
