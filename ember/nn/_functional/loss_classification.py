"""Classification losses: nll_loss and cross_entropy over class indices (or, for cross_entropy,
class probabilities), and binary cross-entropy on probabilities or logits.

Class-index targets are range-checked in eager mode; on a GPU that check is one
device-to-host copy, and cross-entropy's log-softmax one fused kernel per row
(``ember.ops.softmax``). Binary cross-entropy's PyTorch gradient is a primitive
(``ember.ops.loss``); the rest are composites of ember ops.

>>> import ember
>>> import ember.nn.functional as F
>>> F.nll_loss(ember.tensor([[-1.0, -3.0]]), ember.tensor([0]))
tensor(1.)
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..._config import graph_tracer
from ..._errors import DTypeError, EmberError, EmberIndexError, ShapeError
from ..._node import named
from ..._tensor import Tensor
from ...amp.autocast_mode import rule as _autocast_rule
from ...functions.elementwise import where
from ...functions.math import exp, log1p
from ...ops.base import apply
from ...ops.checks import CheckRange
from ...ops.loss import BinaryCrossEntropy, NllLoss
from ...ops.softmax import LogSoftmax
from .loss_reduction import _reduce, _reduction, _weighted_reduce

# -- classification: class indices ------------------------------------------------------------


def _check_float_input(input: Tensor, op: str) -> None:
    if not input.dtype.is_floating_point:
        raise DTypeError(
            f"{op}: expected a floating point input, got {input.dtype} "
            f"(input of shape {list(input.shape)})"
        )


def _check_class_weight(weight: Tensor, c: int, op: str) -> None:
    if weight.ndim != 1 or weight.shape[0] != c:
        raise ShapeError(
            f"{op}: weight tensor should be defined either for all {c} classes or no classes "
            f"but got weight tensor of shape: {list(weight.shape)}"
        )


def _class_target(input: Tensor, target: Tensor, op: str) -> Tensor:
    """Checks a class-index target against batched ``input`` (N, C, d1, ...); returns it int64."""
    if target.dtype is not _dt.int64:
        if target.dtype is not _dt.uint8:
            raise DTypeError(
                f"{op}: expected a target of class indices of dtype int64 (or uint8), got "
                f"{target.dtype} (input of shape {list(input.shape)}, target of shape "
                f"{list(target.shape)})"
            )
        target = target.long()
    expected = (input.shape[0],) + tuple(input.shape[2:])
    if tuple(target.shape) != expected:
        if target.ndim == 0 or target.shape[0] != input.shape[0]:
            got = "a 0-d target" if target.ndim == 0 else f"target batch size ({target.shape[0]})"
            raise ShapeError(
                f"{op}: expected input batch size ({input.shape[0]}) to match {got} (input of "
                f"shape {list(input.shape)}, target of shape {list(target.shape)})"
            )
        raise ShapeError(
            f"{op}: expected target of shape {list(expected)} for input of shape "
            f"{list(input.shape)}, got {list(target.shape)}"
        )
    return target


def _scan_targets(target: Tensor, c: int, ignore_index: int, op: str) -> bool:
    """Raises for class indices outside [0, c) (other than ``ignore_index``); returns whether
    any target may equal ``ignore_index`` (the caller then masks). Eager on the CPU it reads
    the data (two reductions in the common case); on a GPU and in graphs the check is a
    ``CheckRange`` op, decided without waiting for the device (``ember.backend.checks``), and
    the general, masked path is taken."""
    t = target._data
    if t.size == 0:
        return False
    if type(t) is not np.ndarray or graph_tracer(target) is not None:
        message = (
            f"{op}: Target {{value}} is out of bounds: expected class indices in [0, {c}) or "
            f"ignore_index={ignore_index} (target of shape {{shape}})"
        )
        apply(CheckRange(message, 0, c, ignore_index), target)
        return True
    if int(t.min()) >= 0 and int(t.max()) < c:  # the common case: two reductions, no masks
        return 0 <= ignore_index < c and bool((t == ignore_index).any())
    ignored = t == ignore_index
    bad = ((t < 0) | (t >= c)) & ~ignored
    if bool(bad.any()):
        raise EmberIndexError(
            f"{op}: Target {int(t[bad].ravel()[0])} is out of bounds: expected class indices in "
            f"[0, {c}) or ignore_index={ignore_index} (target of shape {list(t.shape)})"
        )
    return bool(ignored.any())


def _nll(logp: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, op: str):
    """Per-element ``-w[t] logp[t]`` for batched ``logp`` (N, C, ...), with the per-element
    weights (None when all are 1) and the valid mask (None when nothing is ignored)."""
    c = logp.shape[1]
    if _scan_targets(target, c, ignore_index, op):
        valid = target != ignore_index
        # in range even where a deferred check (a GPU, a graph) will report a bad target
        safe = where(valid, target, 0).clamp(0, c - 1)
        picked = logp.gather(1, safe.unsqueeze(1)).squeeze(1)
        if weight is None:
            w = valid.to(logp.dtype)
            loss = where(valid, -picked, 0.0)
        else:
            w = where(valid, weight[safe], 0.0)
            loss = where(valid, -picked * w, 0.0)
        return loss, w, valid
    loss = -logp.gather(1, target.unsqueeze(1)).squeeze(1)
    if weight is None:
        return loss, None, None
    w = weight[target]
    return loss * w, w, None


def _nll_op(logp: Tensor, target: Tensor, ignore_index: int, reduction: str, op: str) -> Tensor:
    """The unweighted negative log-likelihood, reduced, as one op (``NllLoss``)."""
    ignored = _scan_targets(target, logp.shape[1], ignore_index, op)
    return apply(NllLoss(reduction, ignore_index if ignored else None), logp, target)


def _classes(input: Tensor, target: Tensor, weight: Tensor | None, op: str):
    """Input batched (an unbatched (C,) input becomes (1, C)), target checked, weight checked."""
    _check_float_input(input, op)
    if input.ndim == 0:
        raise ShapeError(f"{op}: expected input with 1 or more dimensions (C) or (N, C), got 0-d")
    unbatched = input.ndim == 1
    if unbatched:
        if target.ndim > 1 or target.numel() != 1:
            raise ShapeError(
                f"{op}: for 1-D input of shape {list(input.shape)}, the target must be 0-d (or "
                f"of size 1), got a target of shape {list(target.shape)}"
            )
        input, target = input.unsqueeze(0), target.reshape(1)
    target = _class_target(input, target, op)
    if weight is not None:
        _check_class_weight(weight, input.shape[1], op)
        if weight.dtype is not input.dtype:
            raise DTypeError(
                f"{op}: expected weight of the input's dtype {input.dtype}, got {weight.dtype}"
            )
    return input, target, unbatched


@_autocast_rule("nll_loss")
def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood of class indices ``target`` (N, d1, ...) under log-probabilities
    ``input`` (N, C, d1, ...) or (C,); ``weight`` rescales classes, targets equal to
    ``ignore_index`` count for nothing, and 'mean' divides by the total weight.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.nll_loss(ember.tensor([[-1.0, -2.0]]), ember.tensor([1]))
    tensor(2.)
    """
    reduction = _reduction(size_average, reduce, reduction, "nll_loss")
    input, target, unbatched = _classes(input, target, weight, "nll_loss")
    if weight is None:
        out = _nll_op(input, target, ignore_index, reduction, "nll_loss")
    else:
        loss, w, _ = _nll(input, target, weight, ignore_index, "nll_loss")
        out = _weighted_reduce(loss, w, reduction)
    return _nll_named(out.squeeze(0) if unbatched and reduction == "none" else out, input)


def _nll_named(out: Tensor, input: Tensor, logp: Tensor | None = None) -> Tensor:
    """A negative log-likelihood under PyTorch's name (spatial inputs use its 2-D kernel),
    fed by ``logp`` (cross_entropy's log-softmax) or else ``input``."""
    name = "NllLoss2DBackward0" if input.ndim > 2 else "NllLossBackward0"
    return named(out, name, (input if logp is None else logp,))


@_autocast_rule("cross_entropy")
def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross-entropy of logits ``input`` (N, C, d1, ...) or (C,) against class indices
    (N, d1, ...) or class probabilities (the input's shape, floating): ``log_softmax`` over the
    class dimension, then the negative log-likelihood, with class ``weight``, ``ignore_index``
    (class indices only) and ``label_smoothing`` (mixing the target with the uniform
    distribution) as in PyTorch.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.cross_entropy(ember.zeros(2, 4), ember.tensor([0, 3]))
    tensor(1.3863)
    >>> F.cross_entropy(ember.zeros(2, 4), ember.full((2, 4), 0.25), reduction="none")
    tensor([1.3863, 1.3863])
    """
    reduction = _reduction(size_average, reduce, reduction, "cross_entropy")
    if label_smoothing > 1.0:
        raise EmberError(
            f"cross_entropy: label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
        )
    if input.shape == target.shape and input.ndim > 0:
        return _cross_entropy_probs(input, target, weight, ignore_index, reduction, label_smoothing)
    if target.dtype.is_floating_point:
        raise DTypeError(
            f"cross_entropy: expected class indices of dtype int64 (shape "
            f"{[input.shape[0]] + list(input.shape[2:]) if input.ndim > 1 else []}) or class "
            f"probabilities of the input's shape {list(input.shape)}, got a {target.dtype} "
            f"target of shape {list(target.shape)}"
        )
    input, target, unbatched = _classes(input, target, weight, "cross_entropy")
    logp = apply(LogSoftmax(1), input)
    if weight is None and label_smoothing == 0:
        out = _nll_op(logp, target, ignore_index, reduction, "cross_entropy")
        return _nll_named(out.squeeze(0) if unbatched and reduction == "none" else out, input, logp)
    loss, w, valid = _nll(logp, target, weight, ignore_index, "cross_entropy")
    out = _weighted_reduce(loss, w, reduction)
    if label_smoothing > 0:
        c = input.shape[1]
        if weight is None:
            smooth = -logp.sum(1)
        else:
            smooth = -(logp * weight.reshape((c,) + (1,) * (input.ndim - 2))).sum(1)
        if valid is not None:
            smooth = where(valid, smooth, 0.0)
        if reduction == "mean":
            smooth = smooth.sum() / w.sum() if w is not None else smooth.mean()
        else:
            smooth = _reduce(smooth, reduction)
        out = out * (1 - label_smoothing) + smooth * (label_smoothing / c)
        return out.squeeze(0) if unbatched and reduction == "none" else out
    return _nll_named(out.squeeze(0) if unbatched and reduction == "none" else out, input, logp)


def _cross_entropy_probs(input, target, weight, ignore_index, reduction, label_smoothing):
    """Cross-entropy against class probabilities (``target`` has the input's shape)."""
    op = "cross_entropy"
    _check_float_input(input, op)
    if not target.dtype.is_floating_point:
        raise DTypeError(
            f"{op}: expected a floating point target for class probabilities (target of the "
            f"input's shape {list(input.shape)}), got {target.dtype}"
        )
    if ignore_index != -100:
        raise EmberError(f"{op}: ignore_index is not supported for floating point target")
    class_dim = 0 if input.ndim == 1 else 1
    c = input.shape[class_dim]
    logp = apply(LogSoftmax(class_dim), input)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / c
    terms = logp * target
    if weight is not None:
        _check_class_weight(weight, c, op)
        terms = terms * weight.reshape((c,) + (1,) * (input.ndim - class_dim - 1))
    if reduction == "none":
        return -terms.sum(class_dim)
    total = -terms.sum()
    if reduction == "sum":
        return total
    n = terms.numel() // c if c else 0
    return total / n if n else total * float("nan")


# -- classification: binary -------------------------------------------------------------------


@_autocast_rule("binary_cross_entropy")
def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``-w (t log p + (1 - t) log(1 - p))`` of probabilities ``input``, each log clamped at
    -100 as in PyTorch (so certain mistakes cost 100, not infinity).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.binary_cross_entropy(ember.tensor([0.5]), ember.tensor([1.0]))
    tensor(0.6931)
    """
    op = "binary_cross_entropy"
    reduction = _reduction(size_average, reduce, reduction, op)
    if input.shape != target.shape:
        raise ShapeError(
            f"{op}: Using a target size ({target.shape!r}) that is different to the input size "
            f"({input.shape!r}) is deprecated. Please ensure they have the same size."
        )
    _check_float_input(input, op)
    if target.dtype is not input.dtype:
        raise DTypeError(
            f"{op}: expected input and target of the same dtype, got {input.dtype} and "
            f"{target.dtype}"
        )
    loss = apply(BinaryCrossEntropy(), input, target)
    if weight is not None:
        loss = loss * weight.to(input.dtype)
    return named(_reduce(loss, reduction), "BinaryCrossEntropyBackward0", (input, target))


def _log_sigmoid(x: Tensor) -> Tensor:
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for any |x|. Written with
    ``where`` rather than ``abs`` / ``minimum`` so the gradient at 0 is PyTorch's 1/2."""
    pos = x >= 0
    return where(pos, 0.0, x) - log1p(exp(where(pos, -x, x)))


@_autocast_rule("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Sigmoid and binary cross-entropy in one stable expression,
    ``(1 - t) x - (1 + (pos_weight - 1) t) log(sigmoid(x))``, times ``weight``.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.binary_cross_entropy_with_logits(ember.tensor([0.0, 1000.0]), ember.tensor([1.0, 0.0]))
    tensor(500.3466)
    """
    op = "binary_cross_entropy_with_logits"
    reduction = _reduction(size_average, reduce, reduction, op)
    if input.shape != target.shape:
        raise ShapeError(
            f"{op}: Target size ({target.shape!r}) must be the same as input size ({input.shape!r})"
        )
    if not target.dtype.is_floating_point:
        raise DTypeError(
            f"{op}: expected a floating point target (probabilities), got {target.dtype}"
        )
    _check_float_input(input, op)
    dtype = _dt.result_type(input, target)
    log_sig = _log_sigmoid(input)
    if pos_weight is not None:
        log_sig = log_sig * ((pos_weight.to(dtype) - 1) * target + 1)
    loss = (1 - target) * input - log_sig
    if weight is not None:
        loss = loss * weight.to(dtype)
    return named(_reduce(loss, reduction), "BinaryCrossEntropyWithLogitsBackward0", (input, target))


__all__ = [
    "nll_loss",
    "cross_entropy",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
]
