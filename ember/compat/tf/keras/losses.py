"""Keras losses: classes (``MeanSquaredError()``, ``SparseCategoricalCrossentropy(from_logits=
...)``) that reduce to the mean over the batch, and per-example functions
(``mean_squared_error(y_true, y_pred)``) that reduce only the last axis.

Following Keras: arguments are ``(y_true, y_pred)``; ``from_logits`` defaults to False, so
``y_pred`` are probabilities (normalized, clipped to ``[1e-7, 1 - 1e-7]``, then logged);
integer labels of shape ``(N, 1)`` are squeezed; a ``y_true`` one axis short of ``y_pred``
(whose last size is 1) is expanded rather than broadcast against it.

>>> import ember.compat.tf as tf
>>> loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
>>> loss(tf.constant([0, 1]), tf.constant([[2.0, 0.0], [0.0, 2.0]]))
tensor(0.1269)
"""

from __future__ import annotations

import ember
import ember.nn.functional as F
from ember._errors import EmberError, ShapeError

from .layers import as_input

EPSILON = 1e-7


def _float_pair(y_true, y_pred):
    y_pred = as_input(y_pred)
    y_true = as_input(y_true)
    if y_true.dtype != y_pred.dtype:
        y_true = y_true.to(y_pred.dtype)
    if y_true.ndim == y_pred.ndim - 1 and y_pred.shape[-1] == 1:
        y_true = y_true.unsqueeze(-1)
    elif y_pred.ndim == y_true.ndim - 1 and y_true.shape[-1] == 1:
        y_pred = y_pred.unsqueeze(-1)
    return y_true, y_pred


def mean_squared_error(y_true, y_pred):
    """Per-example ``mean((y_pred - y_true) ** 2)`` over the last axis.

    >>> import ember.compat.tf as tf
    >>> tf.keras.losses.mean_squared_error([[0.0, 2.0]], [[1.0, 1.0]])
    tensor([1.])
    """
    y_true, y_pred = _float_pair(y_true, y_pred)
    d = y_pred - y_true
    return (d * d).mean(dim=-1)


def mean_absolute_error(y_true, y_pred):
    """Per-example ``mean(|y_pred - y_true|)`` over the last axis."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    return (y_pred - y_true).abs().mean(dim=-1)


def _labels(y_true, y_pred, what: str):
    y_true = as_input(y_true)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = y_true.squeeze(-1)
    if y_true.dtype.is_floating_point:
        y_true = y_true.to(ember.int64)
    elif y_true.dtype != ember.int64:
        y_true = y_true.to(ember.int64)
    if tuple(y_true.shape) != tuple(y_pred.shape[:-1]):
        raise ShapeError(
            f"{what}: labels of shape {tuple(y_true.shape)} don't match predictions of shape "
            f"{tuple(y_pred.shape)} (expected labels of shape {tuple(y_pred.shape[:-1])})"
        )
    return y_true


def _log_probs(y_pred, from_logits: bool, axis: int = -1):
    if from_logits:
        return F.log_softmax(y_pred, dim=axis)
    p = y_pred / y_pred.sum(dim=axis, keepdim=True)
    return p.clamp(EPSILON, 1 - EPSILON).log()


def sparse_categorical_crossentropy(y_true, y_pred, from_logits: bool = False, axis: int = -1):
    """Per-example ``-log p[label]`` for integer labels.

    >>> import ember.compat.tf as tf
    >>> tf.keras.losses.sparse_categorical_crossentropy([1], [[0.5, 0.5]])
    tensor([0.6931])
    """
    y_pred = as_input(y_pred)
    labels = _labels(y_true, y_pred, "sparse_categorical_crossentropy")
    logp = _log_probs(y_pred, from_logits, axis)
    return -logp.gather(-1, labels.unsqueeze(-1)).squeeze(-1)


def categorical_crossentropy(
    y_true, y_pred, from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1
):
    """Per-example ``-sum(y_true * log p)`` for one-hot (or soft) labels.

    >>> import ember.compat.tf as tf
    >>> tf.keras.losses.categorical_crossentropy([[0.0, 1.0]], [[0.5, 0.5]])
    tensor([0.6931])
    """
    y_true, y_pred = _float_pair(y_true, y_pred)
    if label_smoothing:
        n = y_pred.shape[axis]
        y_true = y_true * (1 - label_smoothing) + label_smoothing / n
    return -(y_true * _log_probs(y_pred, from_logits, axis)).sum(dim=axis)


def binary_crossentropy(y_true, y_pred, from_logits: bool = False):
    """Per-example mean over the last axis of ``-(y log p + (1 - y) log(1 - p))``.

    >>> import ember.compat.tf as tf
    >>> tf.keras.losses.binary_crossentropy([[1.0]], [[0.5]])
    tensor([0.6931])
    """
    y_true, y_pred = _float_pair(y_true, y_pred)
    if from_logits:
        bce = F.binary_cross_entropy_with_logits(y_pred, y_true, reduction="none")
    else:
        p = y_pred.clamp(EPSILON, 1 - EPSILON)
        bce = -(y_true * p.log() + (1 - y_true) * (1 - p).log())
    return bce.mean(dim=-1)


class Loss:
    """A loss with a reduction: ``"sum_over_batch_size"`` (the default: the mean of the
    per-example losses), ``"sum"``, or ``"none"``."""

    def __init__(self, reduction: str = "sum_over_batch_size", name: str | None = None) -> None:
        if reduction in ("auto", None):
            reduction = "sum_over_batch_size"
        if reduction not in ("sum_over_batch_size", "sum", "none"):
            raise EmberError(f"{type(self).__name__}: unknown reduction {reduction!r}")
        self.reduction = reduction
        self.name = name or _snake(type(self).__name__)

    def call(self, y_true, y_pred):
        raise NotImplementedError

    def __call__(self, y_true, y_pred, sample_weight=None):
        losses = self.call(y_true, y_pred)
        if sample_weight is not None:
            w = as_input(sample_weight).to(losses.dtype)
            while w.ndim > losses.ndim and w.shape[-1] == 1:
                w = w.squeeze(-1)
            losses = losses * w
        if self.reduction == "none":
            return losses
        total = losses.sum()
        if self.reduction == "sum":
            return total
        return total / max(losses.numel(), 1)


def _snake(name: str) -> str:
    out = ""
    for i, c in enumerate(name):
        if c.isupper() and i and not name[i - 1].isupper():
            out += "_"
        out += c.lower()
    return out


class MeanSquaredError(Loss):
    """Mean of ``(y_pred - y_true) ** 2``.

    >>> import ember.compat.tf as tf
    >>> tf.keras.losses.MeanSquaredError()([1.0, 2.0], [[1.0], [4.0]])
    tensor(2.)
    """

    def call(self, y_true, y_pred):
        return mean_squared_error(y_true, y_pred)


class MeanAbsoluteError(Loss):
    """Mean of ``|y_pred - y_true|``."""

    def call(self, y_true, y_pred):
        return mean_absolute_error(y_true, y_pred)


class SparseCategoricalCrossentropy(Loss):
    """Cross-entropy for integer labels; ``from_logits=False`` (the default) expects
    probabilities."""

    def __init__(
        self,
        from_logits: bool = False,
        ignore_class=None,
        reduction: str = "sum_over_batch_size",
        name: str | None = None,
    ) -> None:
        super().__init__(reduction, name)
        if ignore_class is not None:
            raise EmberError("SparseCategoricalCrossentropy: ignore_class is not supported")
        self.from_logits = bool(from_logits)

    def call(self, y_true, y_pred):
        return sparse_categorical_crossentropy(y_true, y_pred, self.from_logits)


class CategoricalCrossentropy(Loss):
    """Cross-entropy for one-hot labels; ``from_logits=False`` expects probabilities."""

    def __init__(
        self,
        from_logits: bool = False,
        label_smoothing: float = 0.0,
        reduction: str = "sum_over_batch_size",
        name: str | None = None,
    ) -> None:
        super().__init__(reduction, name)
        self.from_logits = bool(from_logits)
        self.label_smoothing = float(label_smoothing)

    def call(self, y_true, y_pred):
        return categorical_crossentropy(y_true, y_pred, self.from_logits, self.label_smoothing)


class BinaryCrossentropy(Loss):
    """Binary cross-entropy; ``from_logits=False`` expects probabilities."""

    def __init__(
        self,
        from_logits: bool = False,
        reduction: str = "sum_over_batch_size",
        name: str | None = None,
    ) -> None:
        super().__init__(reduction, name)
        self.from_logits = bool(from_logits)

    def call(self, y_true, y_pred):
        return binary_crossentropy(y_true, y_pred, self.from_logits)


class _FunctionLoss(Loss):
    def __init__(self, fn) -> None:
        super().__init__(name=getattr(fn, "__name__", "loss"))
        self.fn = fn

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred)


MSE = mse = mean_squared_error
MAE = mae = mean_absolute_error

_BY_NAME = {
    "mse": MeanSquaredError,
    "mean_squared_error": MeanSquaredError,
    "mae": MeanAbsoluteError,
    "mean_absolute_error": MeanAbsoluteError,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
    "binary_crossentropy": BinaryCrossentropy,
}


def get(identifier) -> Loss:
    """A ``Loss`` for a name (``"mse"``, ``"sparse_categorical_crossentropy"``...), a Loss, or a
    function ``(y_true, y_pred) -> per-example losses``.

    >>> import ember.compat.tf as tf
    >>> tf.keras.losses.get("mse").name
    'mean_squared_error'
    """
    if isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    if callable(identifier):
        return _FunctionLoss(identifier)
    raise EmberError(
        f"unknown loss {identifier!r}; known: {', '.join(sorted(_BY_NAME))}, a Loss, or a "
        "function (y_true, y_pred)"
    )
