"""Margin-based losses with PyTorch's formulas: margin ranking, hinge embedding, soft margin,
multi-label (soft) margin, multi-class margin, cosine embedding and triplet margin losses.

>>> import ember
>>> import ember.nn.functional as F
>>> F.margin_ranking_loss(ember.tensor([1.0]), ember.tensor([2.0]), ember.tensor([1.0]))
tensor(1.)
"""

from __future__ import annotations

from ... import dtypes as _dt
from ..._config import no_grad
from ..._errors import DTypeError, ShapeError
from ..._tensor import Tensor
from ...amp.autocast_mode import rule as _autocast_rule
from .loss_reduction import _reduce, _reduction


def _same_shape(op: str, **tensors: Tensor) -> None:
    shapes = {name: tuple(t.shape) for name, t in tensors.items()}
    if len(set(shapes.values())) > 1:
        listed = ", ".join(f"{name} {shape}" for name, shape in shapes.items())
        raise ShapeError(f"{op}: {listed} must have the same shape")


def _relu(x: Tensor) -> Tensor:
    return x.clamp(min=0)


def _where(cond, a, b):
    from ...functions.elementwise import where

    return where(cond, a, b)


@_autocast_rule("margin_ranking_loss")
def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``.

    >>> import ember
    >>> ember.nn.functional.margin_ranking_loss(ember.ones(1), ember.zeros(1), -ember.ones(1))
    tensor(1.)
    """
    reduction = _reduction(size_average, reduce, reduction, "margin_ranking_loss")
    if not (input1.ndim == input2.ndim == target.ndim):
        raise ShapeError(
            f"margin_ranking_loss: All input tensors should have same dimension but got sizes: "
            f"input1: {tuple(input1.shape)}, input2: {tuple(input2.shape)}, target: "
            f"{tuple(target.shape)}"
        )
    return _reduce(_relu(-target * (input1 - input2) + margin), reduction)


@_autocast_rule("hinge_embedding_loss")
def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1.

    >>> import ember
    >>> ember.nn.functional.hinge_embedding_loss(ember.tensor([0.3, 2.0]), ember.tensor([1, -1]))
    tensor(0.1500)
    """
    reduction = _reduction(size_average, reduce, reduction, "hinge_embedding_loss")
    zeros = input * 0
    margin_part = _where(target != 1, _relu(margin - input), zeros)
    self_part = _where(target != -1, input, zeros)
    return _reduce(margin_part + self_part, reduction)


@_autocast_rule("soft_margin_loss")
def soft_margin_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """``log(1 + exp(-target * input))``.

    >>> import ember
    >>> ember.nn.functional.soft_margin_loss(ember.zeros(1), ember.ones(1))
    tensor(0.6931)
    """
    reduction = _reduction(size_average, reduce, reduction, "soft_margin_loss")
    _same_shape("soft_margin_loss", input=input, target=target)
    z = -target * input
    return _reduce(_relu(z) + (-z.abs()).exp().log1p(), reduction)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Binary cross-entropy on logits per class, averaged over the classes (dim 1).

    >>> import ember
    >>> ember.nn.functional.multilabel_soft_margin_loss(ember.zeros(1, 2), ember.ones(1, 2))
    tensor(0.6931)
    """
    from .activation import logsigmoid

    reduction = _reduction(size_average, reduce, reduction, "multilabel_soft_margin_loss")
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(-1) / input.shape[-1]
    return _reduce(loss, reduction)


def _class_index(input: Tensor, target: Tensor, op: str) -> Tensor:
    if target.dtype.is_floating_point or target.dtype is _dt.bool_:
        raise DTypeError(f"{op}: expected an integer target of class indices, got {target.dtype}")
    return target.long()


@_autocast_rule("multilabel_margin_loss")
def multilabel_margin_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """For each sample, hinge losses between every target class (the indices in ``target``
    before the first -1) and every other class, summed and divided by the class count.

    >>> import ember
    >>> x = ember.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> ember.nn.functional.multilabel_margin_loss(x, ember.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    from ...functions import creation as C

    reduction = _reduction(size_average, reduce, reduction, "multilabel_margin_loss")
    target = _class_index(input, target, "multilabel_margin_loss")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    t = target.reshape(x.shape[0], -1) if target.ndim else target.reshape(1, 1)
    if tuple(t.shape) != tuple(x.shape):
        raise ShapeError(
            f"multilabel_margin_loss: target shape {tuple(target.shape)} must match input "
            f"shape {tuple(input.shape)}"
        )
    n, c = x.shape
    with no_grad():
        valid = (t >= 0).long().cumprod(1).bool()  # entries before the first -1
        if bool(((t >= c) & valid).any().item()):
            raise ShapeError(f"multilabel_margin_loss: target index out of range for {c} classes")
        idx = _where(valid, t, t * 0)
        counts = C.zeros(n, c, dtype=x.dtype, device=x.device)
        counts = counts.scatter_add(1, idx, valid.to(x.dtype))
        others = (counts == 0).to(x.dtype)
    pair = _relu(1 - x.unsqueeze(2) + x.unsqueeze(1))  # [j, i]: target j against class i
    loss = (pair * counts.unsqueeze(2) * others.unsqueeze(1)).sum((1, 2)) / c
    if input.ndim < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


@_autocast_rule("multi_margin_loss")
def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-class hinge loss: ``sum_{i != y} max(0, margin - x[y] + x[i])**p / C`` per
    sample (times ``weight[y]``).

    >>> import ember
    >>> x = ember.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> ember.nn.functional.multi_margin_loss(x, ember.tensor([3]))
    tensor(0.3250)
    """
    reduction = _reduction(size_average, reduce, reduction, "multi_margin_loss")
    if p not in (1, 2):
        raise ShapeError(f"multi_margin_loss: only p == 1 and p == 2 supported, got {p}")
    target = _class_index(input, target, "multi_margin_loss")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    t = target.reshape(-1)
    if t.shape[0] != x.shape[0]:
        raise ShapeError(
            f"multi_margin_loss: inconsistent target size {tuple(target.shape)} for input of "
            f"shape {tuple(input.shape)}"
        )
    c = x.shape[1]
    picked = x.gather(1, t.unsqueeze(1))
    terms = _relu(margin - picked + x)
    if p == 2:
        terms = terms * terms
    if weight is not None:
        terms = terms * weight.gather(0, t).unsqueeze(1)
    from ...functions import creation as C

    own = C.arange(c, device=x.device).unsqueeze(0) == t.unsqueeze(1)
    loss = _where(own, terms * 0, terms).sum(1) / c
    if input.ndim < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


@_autocast_rule("cosine_embedding_loss")
def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``1 - cos(x1, x2)`` where ``target`` is 1, ``max(0, cos(x1, x2) - margin)`` where -1.

    >>> import ember
    >>> x = ember.tensor([[1.0, 0.0]])
    >>> ember.nn.functional.cosine_embedding_loss(x, x, ember.tensor([1]))
    tensor(0.)
    """
    reduction = _reduction(size_average, reduce, reduction, "cosine_embedding_loss")
    if input1.shape != input2.shape:
        raise ShapeError(
            f"cosine_embedding_loss: input1 {tuple(input1.shape)} and input2 "
            f"{tuple(input2.shape)} must have the same shape"
        )
    d = input1.ndim - 1
    eps = 1e-12
    prod = (input1 * input2).sum(d)
    mag = ((input1 * input1).sum(d) + eps) * ((input2 * input2).sum(d) + eps)
    cos = prod / mag.sqrt()
    zeros = cos * 0
    pos = _where(target == 1, 1 - cos, zeros)
    neg = _where(target == -1, _relu(cos - margin), zeros)
    return _reduce(pos + neg, reduction)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function=None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` for any distance
    (pairwise Euclidean by default); ``swap`` uses the closer of the two negatives.

    >>> import ember
    >>> a = ember.zeros(1, 2)
    >>> ember.nn.functional.triplet_margin_with_distance_loss(a, a, a + 3)
    tensor(0.)
    """
    from .distance import pairwise_distance

    reduction = _reduction(None, None, reduction, "triplet_margin_with_distance_loss")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(dist(positive, negative))
    return _reduce(_relu(margin + d_pos - d_neg), reduction)


@_autocast_rule("triplet_margin_loss")
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``triplet_margin_with_distance_loss`` with the ``p``-norm pairwise distance.

    >>> import ember
    >>> a = ember.zeros(1, 2)
    >>> ember.nn.functional.triplet_margin_loss(a, a, a + 0.5)
    tensor(0.2929)
    """
    from .distance import pairwise_distance

    reduction = _reduction(size_average, reduce, reduction, "triplet_margin_loss")
    dims = {anchor.ndim, positive.ndim, negative.ndim}
    if len(dims) != 1 or dims.pop() not in (1, 2):
        raise ShapeError(
            f"triplet_margin_loss: anchor, positive and negative must all be 1-D or 2-D, got "
            f"shapes {tuple(anchor.shape)}, {tuple(positive.shape)} and {tuple(negative.shape)}"
        )

    def dist(a, b):
        return pairwise_distance(a, b, p, eps)

    return triplet_margin_with_distance_loss(
        anchor, positive, negative, distance_function=dist, margin=margin, swap=swap,
        reduction=reduction,
    )  # fmt: skip


__all__ = [
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "soft_margin_loss",
    "multilabel_soft_margin_loss",
    "multilabel_margin_loss",
    "multi_margin_loss",
    "cosine_embedding_loss",
    "triplet_margin_with_distance_loss",
    "triplet_margin_loss",
]
