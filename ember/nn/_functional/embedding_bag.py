"""``embedding_bag``: sums, means or maxima of bags of embedding rows (PyTorch's
``F.embedding_bag``; ``nn.EmbeddingBag`` calls it).

>>> import ember
>>> w = ember.arange(6.0).reshape(3, 2)
>>> ember.nn.functional.embedding_bag(ember.tensor([0, 2, 1]), w, ember.tensor([0, 2]))
tensor([[2., 3.],
        [2., 3.]])
"""

from __future__ import annotations

from ..._errors import ShapeError
from ..._node import named
from ..._tensor import Tensor


def _bag_bounds(input: Tensor, offsets, include_last_offset: bool):
    """The flat index tensor and each bag's (start, end) in it."""
    if input.ndim == 2:
        if offsets is not None:
            raise ShapeError("embedding_bag: if input is 2D, then offsets has to be None")
        n, length = input.shape
        flat, starts = input.reshape(-1), list(range(0, n * length, length))
    elif input.ndim == 1:
        if offsets is None or offsets.ndim != 1:
            raise ShapeError("embedding_bag: offsets has to be a 1D tensor for a 1D input")
        flat, starts = input, [int(v) for v in offsets.tolist()]
        if include_last_offset:
            starts = starts[:-1]
    else:
        raise ShapeError(f"embedding_bag: input has to be 1D or 2D, got shape {tuple(input.shape)}")
    return flat, list(zip(starts, starts[1:] + [flat.shape[0]]))


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm=None, norm_type: float = 2, scale_grad_by_freq: bool = False,
                  mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:  # fmt: skip
    """Reduce (``mode`` ``"sum"``, ``"mean"`` or ``"max"``) the rows of ``weight`` that each
    bag of ``input`` picks: bags are the rows of a 2-D input, or the slices of a 1-D input
    that ``offsets`` start. An empty bag gives zeros; ``padding_idx`` rows take no part.

    >>> import ember
    >>> w = ember.tensor([[1.0, 0.0], [0.0, 1.0], [3.0, 3.0]])
    >>> ember.nn.functional.embedding_bag(ember.tensor([[0, 1], [1, 2]]), w, mode="max")
    tensor([[1., 1.],
            [3., 3.]])
    """
    from ...functions.creation import zeros
    from ...functions.elementwise import where
    from ...functions.shape import stack

    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max, got {mode!r}")
    flat, bounds = _bag_bounds(input, offsets, include_last_offset)
    dim = weight.shape[1]
    rows = weight.index_select(0, flat.long())
    if per_sample_weights is not None:
        if mode != "sum":
            raise ShapeError("embedding_bag: per_sample_weights is only supported for mode='sum'")
        rows = rows * per_sample_weights.reshape(-1, 1)
    keep = None
    if padding_idx is not None:
        keep = (flat != padding_idx).to(rows.dtype).unsqueeze(1)
        rows = rows * keep
    bags = []
    for s, e in bounds:
        if e <= s:
            bags.append(zeros(dim, dtype=rows.dtype, device=rows.device))
            continue
        chunk = rows[s:e]
        if mode == "sum":
            bags.append(chunk.sum(0))
        elif mode == "mean":
            bags.append(chunk.sum(0) / (keep[s:e].sum() if keep is not None else e - s))
        elif keep is None:
            bags.append(chunk.amax(0))
        else:  # padding rows take no part in the maximum (a bag of padding only gives 0)
            inside = keep[s:e] > 0
            best = where(inside, chunk, chunk * 0 + float("-inf")).amax(0)
            bags.append(where(inside.any(0), best, best * 0))
    if not bags:
        return zeros(0, dim, dtype=weight.dtype, device=rows.device)
    return named(stack(bags, 0), "EmbeddingBagBackward0", inputs=(weight, per_sample_weights))


__all__ = ["embedding_bag"]
