"""BatchNorm1d/2d/3d, InstanceNorm1d/2d, LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm (PyTorch's
parameters and buffers).

>>> import ember
>>> bn = ember.nn.BatchNorm2d(3)
>>> [name for name, _ in bn.named_buffers()]
['running_mean', 'running_var', 'num_batches_tracked']
"""

from __future__ import annotations

import warnings

from ..._config import no_grad
from ..._errors import EmberError, ShapeError
from ..._tensor import Tensor
from .. import init
from .._functional import normalization as N
from ..module import Module
from ..parameter import Parameter
from .linear import _module_error


def _filled(value, *shape, dtype=None, device=None) -> Tensor:
    from ...functions.creation import full

    return full(shape, value, dtype=dtype, device=device)


def _affine_parameters(module: Module, affine: bool, bias: bool, shape: tuple, dtype, device):
    """``weight`` (ones) and ``bias`` (zeros) of ``shape`` when ``affine``, else both None."""
    if affine:
        module.weight = Parameter(_filled(1.0, *shape, dtype=dtype, device=device))
        if bias:
            module.bias = Parameter(_filled(0.0, *shape, dtype=dtype, device=device))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module: Module, affine: bool) -> None:
    if affine:
        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)


class _NormBase(Module):
    """Parameters (``weight``, ``bias``) and running statistics of batch and instance norm."""

    _expected_dims: tuple = (2, 3)

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _affine_parameters(self, affine, bias, (num_features,), dtype, device)
        if track_running_stats:
            from ... import dtypes

            self.register_buffer(
                "running_mean", _filled(0.0, num_features, dtype=dtype, device=device)
            )
            self.register_buffer(
                "running_var", _filled(1.0, num_features, dtype=dtype, device=device)
            )
            self.register_buffer(
                "num_batches_tracked", _filled(0, dtype=dtypes.int64, device=device)
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    _version = 2  # version 2 added num_batches_tracked

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, *args) -> None:
        # A state dict without version metadata (a plain dict, or one saved before version 2)
        # may lack num_batches_tracked: keep the module's count instead of calling it missing.
        version = local_metadata.get("version", None)
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats:
            if key not in state_dict:
                state_dict[key] = self.num_batches_tracked
        super()._load_from_state_dict(state_dict, prefix, local_metadata, *args)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        _reset_affine(self, self.affine)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in self._expected_dims:
            dims = " or ".join(f"{d}D" for d in self._expected_dims)
            raise ShapeError(
                f"{type(self).__name__}: expected {dims} input (got {input.ndim}D input of shape "
                f"{tuple(input.shape)})"
            )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        if input.shape[1] != self.num_features:
            raise ShapeError(
                f"{type(self).__name__}: expected input with {self.num_features} channels, got "
                f"{input.shape[1]} (input shape {tuple(input.shape)})"
            )
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return N.batch_norm(
            input,
            self.running_mean if track else None,
            self.running_var if track else None,
            self.weight,
            self.bias,
            use_batch_stats,
            momentum,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) input.

    Training normalizes by the batch's statistics and updates ``running_mean`` /
    ``running_var`` (unbiased) with ``momentum`` (``None``: cumulative average); eval mode
    normalizes by the running statistics.

    >>> import ember
    >>> ember.nn.BatchNorm1d(4)
    BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) input.

    >>> import ember
    >>> ember.nn.BatchNorm2d(4)(ember.randn(8, 4, 3, 3)).shape
    ember.Size([8, 4, 3, 3])
    """

    _expected_dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalization of (N, C, D, H, W) input.

    >>> import ember
    >>> ember.nn.BatchNorm3d(2)(ember.randn(2, 2, 3, 3, 3)).shape
    ember.Size([2, 2, 3, 3, 3])
    """

    _expected_dims = (5,)


class _InstanceNorm(_NormBase):
    _spatial = 1

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        unbatched = input.ndim == self._spatial + 1
        c = input.shape[0 if unbatched else 1]
        if c != self.num_features:
            message = (
                f"{type(self).__name__}: expected input with {self.num_features} "
                f"channels, got {c} (input shape {tuple(input.shape)})"
            )
            if self.affine:
                raise ShapeError(message)
            warnings.warn(message + "; num_features is unused because affine=False", stacklevel=2)
        x = input.unsqueeze(0) if unbatched else input
        out = N.instance_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            0.0 if self.momentum is None else self.momentum,
            self.eps,
        )
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Per-sample, per-channel normalization of (N, C, L) or (C, L) input.

    >>> import ember
    >>> ember.nn.InstanceNorm1d(3)(ember.randn(2, 3, 5)).shape
    ember.Size([2, 3, 5])
    """

    _expected_dims = (2, 3)
    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Per-sample, per-channel normalization of (N, C, H, W) or (C, H, W) input.

    >>> import ember
    >>> ember.nn.InstanceNorm2d(3)
    InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
    """

    _expected_dims = (3, 4)
    _spatial = 2


class LayerNorm(Module):
    """Normalize over the trailing ``normalized_shape`` with per-element affine parameters.

    >>> import ember
    >>> ember.nn.LayerNorm(4)(ember.randn(2, 4)).shape
    ember.Size([2, 4])
    """

    def __init__(
        self,
        normalized_shape,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        _affine_parameters(self, elementwise_affine, bias, self.normalized_shape, dtype, device)

    def reset_parameters(self) -> None:
        _reset_affine(self, self.elementwise_affine)

    def forward(self, input: Tensor) -> Tensor:
        try:
            return N.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)
        except EmberError as e:
            raise _module_error(self, e) from None

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class GroupNorm(Module):
    """Normalize over groups of channels (and all positions) of each sample.

    >>> import ember
    >>> ember.nn.GroupNorm(2, 4)(ember.randn(3, 4, 5)).shape
    ember.Size([3, 4, 5])
    """

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(
                f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups "
                f"({num_groups})"
            )
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        _affine_parameters(self, affine, bias, (num_channels,), dtype, device)

    def reset_parameters(self) -> None:
        _reset_affine(self, self.affine)

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim < 2 or input.shape[1] != self.num_channels:
            raise ShapeError(
                f"GroupNorm: expected input with {self.num_channels} channels (dimension 1), "
                f"got input shape {tuple(input.shape)}"
            )
        return N.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class RMSNorm(Module):
    """Root-mean-square normalization over the last dims, with a learned scale.

    >>> import ember
    >>> ember.nn.RMSNorm([2, 3])
    RMSNorm((2, 3), eps=None, elementwise_affine=True)
    """

    def __init__(self, normalized_shape, eps: float | None = None,
                 elementwise_affine: bool = True, device=None, dtype=None) -> None:  # fmt: skip
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            from ...functions.creation import ones

            self.weight = Parameter(ones(*self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input: Tensor) -> Tensor:
        try:
            return N.rms_norm(input, self.normalized_shape, self.weight, self.eps)
        except EmberError as e:
            raise _module_error(self, e) from None

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class LocalResponseNorm(Module):
    """``local_response_norm`` as a module.

    >>> import ember
    >>> ember.nn.LocalResponseNorm(2)
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        try:
            return N.local_response_norm(input, self.size, self.alpha, self.beta, self.k)
        except EmberError as e:
            raise _module_error(self, e) from None

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


__all__ = [
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "LayerNorm",
    "GroupNorm",
    "RMSNorm",
    "LocalResponseNorm",
]
