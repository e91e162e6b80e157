"""A small Keras over ember: ``Sequential`` and subclassed ``Model``, the common layers,
SGD / Adam / RMSprop, the usual losses and metrics, ``compile`` / ``fit`` / ``evaluate`` /
``predict`` / ``summary``. See docs/tf.md.

>>> import ember.compat.tf as tf
>>> model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
>>> model.compile(optimizer="sgd", loss="mse")
>>> round(model.evaluate(tf.zeros((4, 3)), tf.zeros((4, 2)), verbose=0), 6)
0.0
"""

from . import activations, callbacks, initializers, layers, losses, metrics, models, optimizers
from .layers import Input, Layer
from .models import Model, Sequential


class backend:  # noqa: N801  (keras.backend)
    """``keras.backend.clear_session()``: restart the automatic layer names."""

    @staticmethod
    def clear_session() -> None:
        layers._name_counts.clear()

    @staticmethod
    def floatx() -> str:
        return "float32"

    @staticmethod
    def epsilon() -> float:
        return losses.EPSILON


__all__ = [
    "Input",
    "Layer",
    "Model",
    "Sequential",
    "activations",
    "backend",
    "callbacks",
    "initializers",
    "layers",
    "losses",
    "metrics",
    "models",
    "optimizers",
]
