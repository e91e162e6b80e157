"""Losses: mse, l1, smooth_l1, huber, cross_entropy, nll, binary cross-entropy, kl_div.

Every loss takes ``reduction='none'|'mean'|'sum'`` (kl_div also ``'batchmean'``) and, where
PyTorch still accepts them, the legacy ``size_average`` / ``reduce`` arguments. Values,
gradients and result dtypes follow PyTorch; all are composites of ember ops (so they
differentiate twice) except binary cross-entropy, whose PyTorch gradient needs a primitive
(``ember.ops.loss``). On a GPU, cross-entropy's log-softmax is one fused kernel per row
(``ember.ops.softmax``) and its target check one device-to-host copy.

>>> import ember
>>> import ember.nn.functional as F
>>> F.mse_loss(ember.tensor([1.0, 3.0]), ember.tensor([0.0, 0.0]))
tensor(5.)
"""

from __future__ import annotations

import warnings

import numpy as np

from ... import dtypes as _dt
from ..._config import graph_tracer
from ..._errors import DTypeError, EmberError, EmberIndexError, ShapeError
from ..._shape import broadcast_shapes
from ..._tensor import Tensor
from ...functions.elementwise import where
from ...functions.math import exp, log, log1p
from ...ops.base import apply
from ...ops.loss import BinaryCrossEntropy
from ...ops.softmax import LogSoftmax

_REDUCTIONS = ("none", "mean", "sum")


# -- reductions -------------------------------------------------------------------------------


def legacy_reduction(size_average, reduce, reduction: str = "mean") -> str:
    """The ``reduction`` string for PyTorch's deprecated ``size_average`` / ``reduce`` flags
    (``reduction`` itself when both are None), warning as PyTorch does.

    >>> legacy_reduction(None, None, "sum")
    'sum'
    """
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
        UserWarning,
        stacklevel=3,
    )
    return ret


def _reduction(size_average, reduce, reduction: str, op: str, batchmean: bool = False) -> str:
    if size_average is not None or reduce is not None:
        return legacy_reduction(size_average, reduce, reduction)
    if reduction in _REDUCTIONS or (batchmean and reduction == "batchmean"):
        return reduction
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
            UserWarning,
            stacklevel=3,
        )
        return "mean"
    raise ValueError(f"{op}: {reduction} is not a valid value for reduction")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _weighted_reduce(loss: Tensor, w: Tensor | None, reduction: str) -> Tensor:
    """'mean' divides by the total weight (PyTorch's nll_loss), not by the element count."""
    if reduction == "mean" and w is not None:
        return loss.sum() / w.sum()
    return _reduce(loss, reduction)


# -- regression losses ------------------------------------------------------------------------


def _broadcastable(input: Tensor, target: Tensor, op: str) -> bool:
    try:
        broadcast_shapes(op, tuple(input.shape), tuple(target.shape))
    except EmberError:
        return False
    return True


def _regression(input: Tensor, target: Tensor, op: str) -> None:
    """PyTorch's checks: floating result, broadcastable shapes (with a warning when they differ)."""
    if not (input.dtype.is_floating_point or target.dtype.is_floating_point):
        raise DTypeError(
            f"{op}: expected floating point input or target, got {input.dtype} and {target.dtype}"
        )
    if input.shape != target.shape:
        if not _broadcastable(input, target, op):
            raise ShapeError(
                f"{op}: the target size {list(target.shape)} cannot be broadcast to the input "
                f"size {list(input.shape)}"
            )
        warnings.warn(
            f"{op}: Using a target size ({target.shape!r}) that is different to the input size "
            f"({input.shape!r}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


def _check_elementwise_weight(weight: Tensor, input: Tensor, op: str) -> None:
    if weight.shape != input.shape:
        raise ShapeError(
            f"{op}: Weights and input must have the same size (weight of shape "
            f"{list(weight.shape)}, input of shape {list(input.shape)})"
        )


def _elementwise_reduce(
    loss: Tensor, input: Tensor, weight: Tensor | None, reduction: str, op: str
):
    """Reduces a per-element loss, weighted per element if ``weight`` is given ('mean' of a
    weighted loss divides by ``weight.sum()``)."""
    if weight is None:
        return _reduce(loss, reduction)
    _check_elementwise_weight(weight, input, op)
    return _weighted_reduce(loss * weight, weight, reduction)


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean squared error ``(input - target)^2``, optionally weighted per element ('mean' of a
    weighted loss divides by ``weight.sum()``).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.mse_loss(ember.tensor([2.0]), ember.tensor([0.0]), reduction="sum")
    tensor(4.)
    """
    reduction = _reduction(size_average, reduce, reduction, "mse_loss")
    _regression(input, target, "mse_loss")
    d = input - target
    return _elementwise_reduce(d * d, input, weight, reduction, "mse_loss")


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean absolute error ``|input - target|``, optionally weighted per element.

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.l1_loss(ember.tensor([2.0, -1.0]), ember.tensor([0.0, 0.0]))
    tensor(1.5000)
    """
    reduction = _reduction(size_average, reduce, reduction, "l1_loss")
    _regression(input, target, "l1_loss")
    return _elementwise_reduce((input - target).abs(), input, weight, reduction, "l1_loss")


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """``0.5 z^2 / beta`` where ``z = |input - target| < beta``, else ``z - 0.5 beta``
    (``beta == 0`` is the L1 loss).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.smooth_l1_loss(ember.tensor([0.5, 3.0]), ember.tensor([0.0, 0.0]), reduction="none")
    tensor([0.1250, 2.5000])
    """
    reduction = _reduction(size_average, reduce, reduction, "smooth_l1_loss")
    _regression(input, target, "smooth_l1_loss")
    if beta < 0:
        raise EmberError(
            f"smooth_l1_loss does not support negative values for beta (got beta={beta})"
        )
    z = (input - target).abs()
    if beta == 0:
        return _reduce(z, reduction)
    return _reduce(where(z < beta, z * z * (0.5 / beta), z - 0.5 * beta), reduction)


def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """``0.5 z^2`` where ``z = |input - target| < delta``, else ``delta (z - 0.5 delta)``;
    optionally weighted per element ('mean' stays the plain mean, as in PyTorch).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.huber_loss(ember.tensor([0.5, 3.0]), ember.tensor([0.0, 0.0]), reduction="none")
    tensor([0.1250, 2.5000])
    """
    reduction = _reduction(None, None, reduction, "huber_loss")
    _regression(input, target, "huber_loss")
    if delta <= 0:
        raise EmberError(
            f"huber_loss does not support non-positive values for delta (got delta={delta})"
        )
    z = (input - target).abs()
    loss = where(z < delta, z * z * 0.5, (z - 0.5 * delta) * delta)
    if weight is not None:
        _check_elementwise_weight(weight, input, "huber_loss")
        loss = loss * weight
    return _reduce(loss, reduction)


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
    any target equals ``ignore_index``. Reads the data, so only in eager mode: a graph being
    traced takes the general (masked) path and cannot check."""
    if graph_tracer(target) is not None:  # a top-level define-and-run graph leaves eager alone
        return True
    t = target._data
    if t.size == 0:
        return False
    if type(t) is not np.ndarray:  # a GPU: one device-to-host copy for the common case
        in_range = _scan_targets_gpu(t, c, ignore_index)
        if in_range is not None:
            return in_range
    elif int(t.min()) >= 0 and int(t.max()) < c:  # the common case: two reductions, no masks
        return 0 <= ignore_index < c and bool((t == ignore_index).any())
    ignored = t == ignore_index
    bad = ((t < 0) | (t >= c)) & ~ignored
    if bool(bad.any()):
        raise EmberIndexError(
            f"{op}: Target {int(t[bad].ravel()[0])} is out of bounds: expected class indices in "
            f"[0, {c}) or ignore_index={ignore_index} (target of shape {list(t.shape)})"
        )
    return bool(ignored.any())


def _scan_targets_gpu(t, c: int, ignore_index: int):
    """``_scan_targets``'s common case on a GPU array with a single transfer to the host (each
    ``int()`` of a device scalar waits for the GPU): whether ``ignore_index`` occurs, or None
    when some target is out of [0, c) and the caller must look closer."""
    from ...backend import cuda, xp_of

    xp = xp_of(t)
    check = 0 <= ignore_index < c
    parts = [t.min(), t.max()]
    if check:
        parts.append((t == ignore_index).any().astype(t.dtype))
    lo, hi, *ignored = (int(v) for v in cuda.to_host(xp.stack(parts)))
    if lo >= 0 and hi < c:
        return bool(check and ignored[0])
    return None


def _nll(logp: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, op: str):
    """Per-element ``-w[t] logp[t]`` for batched ``logp`` (N, C, ...), with the per-element
    weights (None when all are 1) and the valid mask (None when nothing is ignored)."""
    c = logp.shape[1]
    if _scan_targets(target, c, ignore_index, op):
        valid = target != ignore_index
        safe = where(valid, target, 0)
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
    loss, w, _ = _nll(input, target, weight, ignore_index, "nll_loss")
    out = _weighted_reduce(loss, w, reduction)
    return out.squeeze(0) if unbatched and reduction == "none" else out


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
    return _reduce(loss, reduction)


def _log_sigmoid(x: Tensor) -> Tensor:
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for any |x|. Written with
    ``where`` rather than ``abs`` / ``minimum`` so the gradient at 0 is PyTorch's 1/2."""
    pos = x >= 0
    return where(pos, 0.0, x) - log1p(exp(where(pos, -x, x)))


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
    return _reduce(loss, reduction)


# -- distributions ----------------------------------------------------------------------------


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """Pointwise KL divergence ``t (log t - input)`` of log-probabilities ``input`` from
    ``target`` (given as log-probabilities when ``log_target``); terms with ``t == 0`` are 0.
    'batchmean' divides the sum by the batch size (the mathematical KL divergence); 'mean'
    divides by the element count (with PyTorch's warning).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.kl_div(ember.tensor([-0.5, -1.0]), ember.tensor([0.0, 1.0]), reduction="sum")
    tensor(1.)
    """
    op = "kl_div"
    legacy = size_average is not None or reduce is not None
    reduction = _reduction(size_average, reduce, reduction, op, batchmean=True)
    if not (input.dtype.is_floating_point and target.dtype.is_floating_point):
        raise DTypeError(f"{op}: Integral inputs not supported ({input.dtype} and {target.dtype})")
    if input.shape != target.shape and not _broadcastable(input, target, op):
        raise ShapeError(
            f"{op}: the input size {list(input.shape)} and the target size "
            f"{list(target.shape)} cannot be broadcast together"
        )
    if log_target:
        loss = exp(target) * (target - input)
    else:  # xlogy(t, t) - t * input, with 0 log 0 = 0 (and NaN from negative targets, as PyTorch)
        nz = target != 0
        loss = where(nz, target * log(where(nz, target, 1.0)), 0.0)
        loss = loss - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.ndim else total
    if reduction == "mean" and not legacy:
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            UserWarning,
            stacklevel=2,
        )
    return _reduce(loss, reduction)


__all__ = [
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "nll_loss",
    "cross_entropy",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
]
