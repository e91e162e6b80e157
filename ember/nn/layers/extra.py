"""More modules: RMSNorm, LocalResponseNorm, AdaptiveMaxPool1d/2d, Dropout1d/3d, Unfold, Fold,
EmbeddingBag.

>>> import ember
>>> ember.nn.RMSNorm(4)(ember.ones(2, 4)).shape
ember.Size([2, 4])
"""

from __future__ import annotations

from ..._errors import EmberError, ShapeError
from ..._tensor import Tensor
from .. import init
from .._functional import conv as _conv
from .._functional import extra as X
from ..module import Module
from ..parameter import Parameter
from .linear import _module_error
from .misc import Dropout


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
            return X.rms_norm(input, self.normalized_shape, self.weight, self.eps)
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
            return X.local_response_norm(input, self.size, self.alpha, self.beta, self.k)
        except EmberError as e:
            raise _module_error(self, e) from None

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


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
            return X.adaptive_max_pool2d(input, self.output_size, self.return_indices)
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
            return X.adaptive_max_pool1d(input, self.output_size, self.return_indices)
        except EmberError as e:
            raise _module_error(self, e) from None


class Dropout1d(Dropout):
    """Zero whole channels of (N, C, L) input with probability ``p`` in training.

    >>> import ember
    >>> ember.nn.Dropout1d(0.2)
    Dropout1d(p=0.2, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return X.dropout1d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """Zero whole channels of (N, C, D, H, W) input with probability ``p`` in training.

    >>> import ember
    >>> ember.nn.Dropout3d(0.2)
    Dropout3d(p=0.2, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return X.dropout3d(input, self.p, self.training, self.inplace)


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


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings: bags are the rows of a 2-D input, or the
    slices of a 1-D input that ``offsets`` start.

    >>> import ember
    >>> bag = ember.nn.EmbeddingBag(10, 3, mode="sum")
    >>> bag(ember.tensor([1, 2, 4, 5, 4]), ember.tensor([0, 2])).shape
    ember.Size([2, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm=None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight=None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device=None, dtype=None) -> None:  # fmt: skip
        super().__init__()
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode has to be one of sum, mean or max, got {mode!r}")
        self.num_embeddings, self.embedding_dim, self.mode = num_embeddings, embedding_dim, mode
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        from ...functions.creation import empty

        w = (
            _weight
            if _weight is not None
            else empty(num_embeddings, embedding_dim, device=device, dtype=dtype)
        )
        self.weight = Parameter(w)
        if _weight is None:
            self.reset_parameters()

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            from ..._config import no_grad

            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:  # fmt: skip
        from ...functions.creation import zeros
        from ...functions.shape import stack

        if input.ndim == 2:
            if offsets is not None:
                raise ShapeError("EmbeddingBag: if input is 2D, then offsets has to be None")
            n, length = input.shape
            flat = input.reshape(-1)
            starts = list(range(0, n * length, length))
        elif input.ndim == 1:
            if offsets is None or offsets.ndim != 1:
                raise ShapeError("EmbeddingBag: offsets has to be a 1D tensor for a 1D input")
            flat = input
            starts = [int(v) for v in offsets.tolist()]
            if self.include_last_offset:
                starts = starts[:-1]
        else:
            raise ShapeError(
                f"EmbeddingBag: input has to be 1D or 2D, got shape {tuple(input.shape)}"
            )
        ends = starts[1:] + [flat.shape[0]]
        rows = self.weight.index_select(0, flat.long())
        if per_sample_weights is not None:
            if self.mode != "sum":
                raise ShapeError(
                    "EmbeddingBag: per_sample_weights is only supported for mode='sum'"
                )
            rows = rows * per_sample_weights.reshape(-1, 1)
        keep = None
        if self.padding_idx is not None:
            keep = (flat != self.padding_idx).to(rows.dtype).unsqueeze(1)
            rows = rows * keep
        bags = []
        for s, e in zip(starts, ends):
            if e <= s:
                bags.append(zeros(self.embedding_dim, dtype=rows.dtype, device=rows.device))
                continue
            chunk = rows[s:e]
            if self.mode == "sum":
                bags.append(chunk.sum(0))
            elif self.mode == "mean":
                count = keep[s:e].sum() if keep is not None else e - s
                bags.append(chunk.sum(0) / count)
            elif keep is None:
                bags.append(chunk.amax(0))
            else:  # padding rows take no part in the maximum (a bag of padding only gives 0)
                from ...functions.elementwise import where

                inside = keep[s:e] > 0
                best = where(inside, chunk, chunk * 0 + float("-inf")).amax(0)
                bags.append(where(inside.any(0), best, best * 0))
        return stack(bags, 0) if bags else zeros(0, self.embedding_dim, device=rows.device)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, mode='{self.mode}'"


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


__all__ = [
    "LazyLinear",
    "RMSNorm", "LocalResponseNorm", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Dropout1d",
    "Dropout3d", "Unfold", "Fold", "EmbeddingBag",
]  # fmt: skip
