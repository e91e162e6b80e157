"""Keras metrics: stateful averages over an epoch (``update_state``, ``result``,
``reset_state``), and the names ``compile(metrics=[...])`` accepts (``"accuracy"``, ``"mae"``,
``"mse"``...). ``"accuracy"`` becomes sparse-categorical, categorical or binary accuracy by
the loss and the shapes, as in Keras.

>>> import ember.compat.tf as tf
>>> m = tf.keras.metrics.SparseCategoricalAccuracy()
>>> m.update_state([0, 1], [[0.9, 0.1], [0.8, 0.2]])
>>> float(m.result())
0.5
"""

from __future__ import annotations

import ember
from ember._errors import EmberError

from .. import ops as _ops
from . import losses as _losses
from .layers import as_input


class Metric:
    """Base class: ``update_state(y_true, y_pred, sample_weight=None)`` accumulates,
    ``result()`` gives the value so far, ``reset_state()`` starts over. The running totals are
    float32 tensors updated in place, so metrics work inside ``tf.function`` too."""

    def __init__(self, name: str | None = None, dtype=None) -> None:
        self.name = name or _losses._snake(type(self).__name__)
        with _ops.init_scope():
            self.total = ember.zeros((), dtype=ember.float32)
            self.count = ember.zeros((), dtype=ember.float32)

    def reset_state(self) -> None:
        self.total.zero_()
        self.count.zero_()

    reset_states = reset_state

    def result(self):
        return self.total / self.count.clamp(min=1e-30)  # 0 before any update

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()


class Mean(Metric):
    """The (weighted) mean of the values given.

    >>> import ember.compat.tf as tf
    >>> m = tf.keras.metrics.Mean()
    >>> m.update_state([1.0, 3.0]); float(m.result())
    2.0
    """

    def update_state(self, values, sample_weight=None) -> None:
        with ember.no_grad():
            v = as_input(values).detach().to(ember.float32)
            if sample_weight is None:
                self.total.add_(v.sum())
                self.count.add_(float(v.numel()))
            else:
                w = as_input(sample_weight).detach().to(ember.float32)
                if v.ndim:
                    w = w.expand_as(v)
                self.total.add_((v * w).sum())
                self.count.add_(w.sum())


class MeanMetricWrapper(Mean):
    """The mean over examples of ``fn(y_true, y_pred)`` (a per-example value)."""

    def __init__(self, fn, name: str | None = None, dtype=None, **kwargs) -> None:
        self._fn = fn
        self._kwargs = kwargs
        super().__init__(name=name or fn.__name__)

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        with ember.no_grad():
            values = self._fn(y_true, as_input(y_pred).detach(), **self._kwargs)
        super().update_state(values, sample_weight)


def sparse_categorical_accuracy(y_true, y_pred):
    """Per-example 1.0 where ``argmax(y_pred)`` equals the integer label."""
    y_pred = as_input(y_pred)
    labels = _losses._labels(y_true, y_pred, "sparse_categorical_accuracy")
    return (y_pred.argmax(dim=-1) == labels).to(ember.float32)


def categorical_accuracy(y_true, y_pred):
    """Per-example 1.0 where ``argmax(y_pred)`` equals ``argmax(y_true)``."""
    y_pred, y_true = as_input(y_pred), as_input(y_true)
    return (y_pred.argmax(dim=-1) == y_true.argmax(dim=-1)).to(ember.float32)


def binary_accuracy(y_true, y_pred, threshold: float = 0.5):
    """Per-example mean of ``(y_pred > threshold) == y_true`` over the last axis."""
    y_true, y_pred = _losses._float_pair(y_true, y_pred)
    return ((y_pred > threshold).to(y_true.dtype) == y_true).to(ember.float32).mean(dim=-1)


def accuracy(y_true, y_pred):
    """Per-example 1.0 where ``y_pred == y_true`` exactly."""
    y_true, y_pred = _losses._float_pair(y_true, y_pred)
    return (y_true == y_pred).to(ember.float32).mean(dim=-1)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often the arg-max of the predictions matches the integer labels."""

    def __init__(self, name: str = "sparse_categorical_accuracy", dtype=None) -> None:
        super().__init__(sparse_categorical_accuracy, name)


class CategoricalAccuracy(MeanMetricWrapper):
    """How often the arg-max of the predictions matches that of the one-hot labels."""

    def __init__(self, name: str = "categorical_accuracy", dtype=None) -> None:
        super().__init__(categorical_accuracy, name)


class BinaryAccuracy(MeanMetricWrapper):
    """How often ``y_pred > threshold`` matches the 0/1 labels."""

    def __init__(self, name: str = "binary_accuracy", dtype=None, threshold: float = 0.5):
        super().__init__(binary_accuracy, name, threshold=threshold)


class Accuracy(MeanMetricWrapper):
    """How often predictions equal labels exactly."""

    def __init__(self, name: str = "accuracy", dtype=None) -> None:
        super().__init__(accuracy, name)


class MeanSquaredError(MeanMetricWrapper):
    """Mean of ``(y_pred - y_true) ** 2``."""

    def __init__(self, name: str = "mean_squared_error", dtype=None) -> None:
        super().__init__(_losses.mean_squared_error, name)


class MeanAbsoluteError(MeanMetricWrapper):
    """Mean of ``|y_pred - y_true|``."""

    def __init__(self, name: str = "mean_absolute_error", dtype=None) -> None:
        super().__init__(_losses.mean_absolute_error, name)


_BY_NAME = {
    "sparse_categorical_accuracy": sparse_categorical_accuracy,
    "categorical_accuracy": categorical_accuracy,
    "binary_accuracy": binary_accuracy,
    "mse": _losses.mean_squared_error,
    "mean_squared_error": _losses.mean_squared_error,
    "mae": _losses.mean_absolute_error,
    "mean_absolute_error": _losses.mean_absolute_error,
}


def get(identifier, loss=None) -> Metric:
    """A ``Metric`` for a name, a Metric, or a function ``(y_true, y_pred)``; ``"accuracy"`` /
    ``"acc"`` pick the accuracy that fits ``loss`` (sparse labels for
    ``SparseCategoricalCrossentropy``, binary for ``BinaryCrossentropy``, else categorical).

    >>> import ember.compat.tf as tf
    >>> loss = tf.keras.losses.SparseCategoricalCrossentropy()
    >>> m = tf.keras.metrics.get("accuracy", loss)
    >>> m.name, m._fn.__name__
    ('accuracy', 'sparse_categorical_accuracy')
    """
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, str):
        key = identifier.lower()
        if key in ("accuracy", "acc"):
            if isinstance(loss, _losses.SparseCategoricalCrossentropy):
                fn = sparse_categorical_accuracy
            elif isinstance(loss, _losses.BinaryCrossentropy):
                fn = binary_accuracy
            else:
                fn = _auto_accuracy
            return MeanMetricWrapper(fn, name=identifier)
        if key in _BY_NAME:
            return MeanMetricWrapper(_BY_NAME[key], name=identifier)
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if callable(identifier):
        return MeanMetricWrapper(identifier)
    raise EmberError(
        f"unknown metric {identifier!r}; known: accuracy, {', '.join(sorted(_BY_NAME))}, a "
        "Metric, or a function (y_true, y_pred)"
    )


def _auto_accuracy(y_true, y_pred):
    y_pred = as_input(y_pred)
    if y_pred.shape[-1] == 1:
        return binary_accuracy(y_true, y_pred)
    y_true = as_input(y_true)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == y_pred.shape[-1]:
        return categorical_accuracy(y_true, y_pred)
    return sparse_categorical_accuracy(y_true, y_pred)
