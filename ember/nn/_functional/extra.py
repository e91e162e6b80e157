"""More functionals: rms_norm, local_response_norm, adaptive_max_pool1d/2d, dropout1d/3d,
gumbel_softmax, pdist.

>>> import ember
>>> import ember.nn.functional as F
>>> F.rms_norm(ember.tensor([[3.0, 4.0]]), (2,)).shape
ember.Size([1, 2])
"""

from __future__ import annotations

import math

from ... import dtypes as _dt
from ..._errors import ShapeError
from ..._tensor import Tensor
from .misc import dropout2d


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


def _adaptive_bounds(n_in: int, n_out: int) -> list:
    return [(math.floor(i * n_in / n_out), math.ceil((i + 1) * n_in / n_out)) for i in range(n_out)]


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Max over adaptive windows giving ``output_size`` (int or (h, w); None keeps a size).

    >>> import ember
    >>> ember.nn.functional.adaptive_max_pool2d(ember.arange(16.0).reshape(1, 1, 4, 4), 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    from ...functions.shape import stack

    if input.ndim not in (3, 4):
        raise ShapeError(
            f"adaptive_max_pool2d: expected 3D or 4D input, got shape {tuple(input.shape)}"
        )
    h, w = input.shape[-2], input.shape[-1]
    oh, ow = (output_size, output_size) if isinstance(output_size, int) else output_size
    oh, ow = oh or h, ow or w
    values, indices = [], []
    for r0, r1 in _adaptive_bounds(h, oh):
        row_v, row_i = [], []
        for c0, c1 in _adaptive_bounds(w, ow):
            window = input[..., r0:r1, c0:c1].flatten(-2)
            best = window.argmax(-1, keepdim=True)
            row_v.append(window.gather(-1, best).squeeze(-1))
            if return_indices:
                width = c1 - c0
                flat = (best // width + r0) * w + best % width + c0
                row_i.append(flat.squeeze(-1))
        values.append(stack(row_v, -1))
        if return_indices:
            indices.append(stack(row_i, -1))
    out = stack(values, -2)
    if not return_indices:
        return out
    return out, stack(indices, -2)


def adaptive_max_pool1d(input: Tensor, output_size: int, return_indices: bool = False):
    """Max over adaptive windows along the last dim giving ``output_size`` values.

    >>> import ember
    >>> ember.nn.functional.adaptive_max_pool1d(ember.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
    tensor([[[3., 2.]]])
    """
    if input.ndim not in (2, 3):
        raise ShapeError(
            f"adaptive_max_pool1d: expected 2D or 3D input, got shape {tuple(input.shape)}"
        )
    out = adaptive_max_pool2d(input.unsqueeze(-2), (1, output_size), return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def _channel_dropout(input: Tensor, p: float, training: bool, batched_ndim: int, name: str):
    """``dropout2d``'s channel masks for inputs of ``batched_ndim`` dims (or one fewer)."""
    if input.ndim not in (batched_ndim - 1, batched_ndim):
        raise ShapeError(
            f"{name}: expected {batched_ndim - 1}D or {batched_ndim}D input, got shape "
            f"{tuple(input.shape)}"
        )
    batched = input.ndim == batched_ndim
    out = dropout2d(input if batched else input.unsqueeze(0), p, training)
    return out if batched else out.squeeze(0)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of (N, C, L) or (C, L) input with probability ``p``.

    >>> import ember
    >>> ember.nn.functional.dropout1d(ember.ones(2, 3, 4), training=False).sum()
    tensor(24.)
    """
    return _channel_dropout(input, p, training, 3, "dropout1d")


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability ``p``.

    >>> import ember
    >>> ember.nn.functional.dropout3d(ember.ones(1, 2, 2, 2, 2), training=False).sum()
    tensor(16.)
    """
    return _channel_dropout(input, p, training, 5, "dropout3d")


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:  # fmt: skip
    """A sample from the Gumbel-softmax distribution; ``hard`` gives one-hot samples whose
    gradient is the soft sample's (straight-through).

    >>> import ember
    >>> y = ember.nn.functional.gumbel_softmax(ember.zeros(2, 3), hard=True)
    >>> y.sum(-1).tolist()
    [1.0, 1.0]
    """
    from ...functions.creation import empty_like, zeros_like
    from .activation import softmax

    gumbels = -empty_like(logits).exponential_().log()
    soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    index = soft.argmax(dim, keepdim=True)
    one_hot = zeros_like(logits).scatter(dim, index, 1.0)
    return one_hot - soft.detach() + soft


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The ``p``-norm distances between every pair of rows (i < j) of an (N, M) input.

    >>> import ember
    >>> ember.nn.functional.pdist(ember.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
    tensor([5.0000, 1.0000, 4.2426])
    """
    from ...functions.structure import _pnorm, triu_indices

    if input.ndim != 2:
        raise ShapeError(f"pdist: only supports 2D tensors, got shape {tuple(input.shape)}")
    i, j = triu_indices(input.shape[0], input.shape[0], 1, device=input.device)
    return _pnorm(input.index_select(0, i) - input.index_select(0, j), p, 1)


__all__ = [
    "rms_norm", "local_response_norm", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "dropout1d", "dropout3d", "gumbel_softmax", "pdist",
]  # fmt: skip
