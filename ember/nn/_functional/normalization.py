"""Normalization: batch_norm, layer_norm, group_norm, instance_norm, normalize, rms_norm,
local_response_norm.

>>> import ember
>>> import ember.nn.functional as F
>>> F.layer_norm(ember.tensor([[1.0, 3.0]]), (2,))
tensor([[-1.0000,  1.0000]])
"""

from __future__ import annotations

from ... import dtypes as _dt
from ..._config import no_grad, state
from ..._errors import ShapeError
from ..._node import named
from ..._tensor import Tensor
from ...amp.autocast_mode import rule as _autocast_rule
from ...functions.inplace import apply_inplace
from ...functions.shape import stack
from ...ops.base import apply
from ...ops.norm import Affine, BatchMoments, BatchNormalize, LayerNormalize, RunningAverage


def _channel_shape(input: Tensor) -> tuple:
    return (1, input.shape[1]) + (1,) * (input.ndim - 2)


def _moments(x: Tensor, dims) -> tuple:
    """Mean over ``dims``, ``x`` centered by it, and the biased variance (both keepdim)."""
    mean = x.mean(dim=dims, keepdim=True)
    centered = x - mean
    return mean, centered, (centered * centered).mean(dim=dims, keepdim=True)


def _by_running_stats(input: Tensor, mean: Tensor, var: Tensor, shape: tuple, eps: float):
    return (input - mean.reshape(shape)) * (var.reshape(shape) + eps).rsqrt()


def _affine(out: Tensor, weight: Tensor | None, bias: Tensor | None, shape=None) -> Tensor:
    """``out * weight + bias`` (each optional), reshaped to ``shape`` unless it is None."""
    if weight is not None:
        out = out * (weight if shape is None else weight.reshape(shape))
    if bias is not None:
        out = out + (bias if shape is None else bias.reshape(shape))
    return out


def _fused_affine(out: Tensor, weight, bias, start: int, shape: tuple, view=None) -> Tensor:
    """``out * weight + bias`` as one ``Affine`` op where the parameters are exactly ``shape``
    (the dims of ``out`` from ``start``) and of ``out``'s dtype; else the composite (its
    broadcasting and dtype promotion, the parameters reshaped to ``view`` unless None)."""
    params = [t for t in (weight, bias) if t is not None]
    if any(tuple(t.shape) != shape or t.dtype != out.dtype for t in params):
        return _affine(out, weight, bias, view)
    if not params:
        return out
    return apply(Affine(start, weight is not None, bias is not None), out, *params)


def _running_average(running: Tensor, stats: Tensor, op: RunningAverage) -> None:
    """``running`` updated in place by ``op`` (one op; a graph records the write; eagerly the op
    writes the buffer's array itself)."""
    into = running._data if state.tracer is None else None
    apply_inplace(running, lambda r, s: apply(op, r, s, into=into), stats, name="batch_norm")


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each channel (dim 1) by batch statistics (training) or running ones (eval).

    In training the running statistics are updated in place with ``momentum`` (the variance
    with Bessel's correction), as in PyTorch. The normalization and its affine part are one
    primitive, ``ember.ops.norm.BatchNormalize``, with a closed-form backward (see
    ``ember/ops/norm.py``); float16 / bfloat16 inputs compute in float32.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.batch_norm(ember.tensor([[1.0], [3.0]]), None, None, training=True)
    tensor([[-1.0000],
            [ 1.0000]])
    """
    if input.ndim < 2:
        raise ShapeError(
            f"batch_norm: expected at least a 2-D input (N, C), got {tuple(input.shape)}"
        )
    c = input.shape[1]
    if training:
        count = input.numel() // c if c else 0
        if count <= 1:
            raise ShapeError(
                f"batch_norm: expected more than 1 value per channel when training, got input "
                f"size {tuple(input.shape)}"
            )
        stats = apply(BatchMoments(), input)
        if running_mean is not None and running_var is not None:
            with no_grad():
                _running_average(running_mean, stats, RunningAverage(0, momentum))
                _running_average(
                    running_var, stats, RunningAverage(1, momentum, count / (count - 1))
                )
    else:
        if running_mean is None or running_var is None:
            raise ShapeError("batch_norm: running_mean and running_var are needed in eval mode")
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t.shape != (c,):
                raise ShapeError(f"batch_norm: {name} should contain {c} elements not {t.numel()}")
        stats = stack([running_mean.detach(), running_var.detach()])
    op = BatchNormalize(float(eps), bool(training), weight is not None, bias is not None)
    return apply(op, input, stats, *(t for t in (weight, bias) if t is not None))


@_autocast_rule("layer_norm")
def layer_norm(
    input: Tensor,
    normalized_shape,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over the last ``len(normalized_shape)`` dimensions.

    The normalization is one primitive, ``ember.ops.norm.LayerNormalize`` (biased variance, as
    PyTorch), on every device: a numba loop per row on the CPU (NumPy without numba), one fused
    kernel per row on a GPU; its backward is one op too, ``LayerNormGradInput``. The affine
    part is one ``Affine`` op (``AffineSums`` backward) where the parameters have the input's
    dtype and exactly ``normalized_shape``, else ordinary ember ops (their promotion rules).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.layer_norm(ember.ones(2, 3), [3]).abs().sum()
    tensor(0.)
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[input.ndim - k :]) != normalized_shape:
        raise ShapeError(
            f"layer_norm: expected input with shape [*, {', '.join(map(str, normalized_shape))}], "
            f"but got input of size {tuple(input.shape)}"
        )
    out = apply(LayerNormalize(k, float(eps)), input)
    out = _fused_affine(out, weight, bias, input.ndim - k, normalized_shape)
    return named(out, "NativeLayerNormBackward0")


@_autocast_rule("group_norm")
def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over groups of channels (and all spatial positions) per sample.

    The normalization is layer normalization of ``input`` viewed as (N, groups, C / groups *
    spatial): one ``LayerNormalize`` forward and one ``LayerNormGradInput`` backward (see
    ``ember/ops/norm.py``); the per-channel affine part is one ``Affine`` op (or ordinary
    ember ops where the parameters' dtype or shape differ), whose gradient (``g * weight``)
    reaches ``LayerNormGradInput`` first, so a weight varying within a group is handled by the
    chain rule.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.group_norm(ember.randn(2, 4, 3), 2).shape
    ember.Size([2, 4, 3])
    """
    if input.ndim < 2:
        raise ShapeError(f"group_norm: expected at least a 2-D input, got {tuple(input.shape)}")
    n, c = input.shape[:2]
    if c % num_groups:
        raise ShapeError(
            f"group_norm: expected number of channels in input ({c}) to be divisible by "
            f"num_groups ({num_groups})"
        )
    out = apply(LayerNormalize(1, float(eps)), input.reshape(n, num_groups, -1))
    out = out.reshape(input.shape)
    out = _fused_affine(out, weight, bias, 1, (c,), _channel_shape(input))
    return named(out, "NativeGroupNormBackward0")


@_autocast_rule("instance_norm")
def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each channel of each sample over its spatial positions.

    With ``use_input_stats`` and running statistics given, those are updated in place with the
    batch average of the per-instance statistics (as PyTorch does); without
    ``use_input_stats`` the running statistics normalize instead.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.instance_norm(ember.tensor([[[1.0, 3.0]]]))
    tensor([[[-1.0000,  1.0000]]])
    """
    if input.ndim < 3:
        raise ShapeError(
            f"instance_norm: expected an input (N, C, *spatial) with at least 3 dimensions, got "
            f"{tuple(input.shape)}"
        )
    n, c = input.shape[:2]
    shape = _channel_shape(input)
    if use_input_stats:
        count = input.numel() // max(n * c, 1)
        if count <= 1:
            raise ShapeError(
                f"instance_norm: expected more than 1 spatial element when training, got input "
                f"size {tuple(input.shape)}"
            )
        mean, centered, var = _moments(input, tuple(range(2, input.ndim)))
        if running_mean is not None:
            with no_grad():
                running_mean.mul_(1 - momentum).add_(mean.detach().reshape(n, c).mean(0) * momentum)
        if running_var is not None:
            with no_grad():
                unbiased = var.detach().reshape(n, c).mean(0) * (count / (count - 1))
                running_var.mul_(1 - momentum).add_(unbiased * momentum)
        out = centered * (var + eps).rsqrt()
    else:
        if running_mean is None or running_var is None:
            raise ShapeError(
                "instance_norm: running_mean and running_var are needed when use_input_stats=False"
            )
        out = _by_running_stats(input, running_mean, running_var, shape, eps)
    return named(_affine(out, weight, bias, shape), "ViewBackward0")  # PyTorch: batch norm, viewed


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Tensor:
    """x / max(||x||_p along dim, eps).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.normalize(ember.tensor([[3.0, 4.0]]))
    tensor([[0.6000, 0.8000]])
    """
    return input / input.norm(p, dim, keepdim=True).clamp(min=eps)


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:  # fmt: skip
    """``input / sqrt(mean(input**2 over the last dims) + eps) * weight`` (``eps`` defaults
    to the dtype's machine epsilon).

    >>> import ember
    >>> ember.nn.functional.rms_norm(ember.tensor([[1.0, 1.0]]), (2,))
    tensor([[1., 1.]])
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape) :]) != shape:
        raise ShapeError(
            f"rms_norm: normalized_shape {shape} does not match the last dims of input of "
            f"shape {tuple(input.shape)}"
        )
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    e = _dt.finfo(input.dtype).eps if eps is None else eps
    out = input * ((input * input).mean(dims, keepdim=True) + e).rsqrt()
    return out * weight if weight is not None else out


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:  # fmt: skip
    """Divide each element by ``(k + alpha * mean of squares over `size` neighbouring
    channels) ** beta`` (AlexNet's normalization).

    >>> import ember
    >>> ember.nn.functional.local_response_norm(ember.ones(1, 3, 2), 2).shape
    ember.Size([1, 3, 2])
    """
    from ...functions.shape import cat

    if input.ndim < 3:
        raise ShapeError(
            f"local_response_norm: expected 3D or higher input, got shape {tuple(input.shape)}"
        )
    if input.shape[1] == 0:
        return input
    sq = input * input
    c = input.shape[1]
    before, after = size // 2, (size - 1) // 2
    zeros = sq.narrow(1, 0, 1) * 0
    padded = cat([zeros] * before + [sq] + [zeros] * after, 1)
    total = padded.narrow(1, 0, c)
    for offset in range(1, size):
        total = total + padded.narrow(1, offset, c)
    div = (total * (alpha / size) + k) ** beta
    return input / div
