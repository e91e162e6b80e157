"""``tf.losses``: Keras' losses (TF2), with TF1's ``mean_squared_error`` while building a
graph.

In TF2, ``tf.losses.mean_squared_error(y_true, y_pred)`` gives one value per example; TF1's
``tf.losses.mean_squared_error(labels, predictions)`` gives the scalar mean. While a TF1 graph
is being built (placeholders), the TF1 meaning is used.

>>> import ember.compat.tf as tf
>>> tf.losses.mean_squared_error([[0.0, 2.0]], [[1.0, 1.0]])
tensor([1.])
"""

from . import graph as _graph
from . import ops as _ops
from .keras.losses import (  # noqa: F401
    MAE,
    MSE,
    BinaryCrossentropy,
    CategoricalCrossentropy,
    Loss,
    MeanAbsoluteError,
    MeanSquaredError,
    SparseCategoricalCrossentropy,
    binary_crossentropy,
    categorical_crossentropy,
    mae,
    mean_absolute_error,
    mse,
    sparse_categorical_crossentropy,
)
from .keras.losses import mean_squared_error as _mse_per_example


def mean_squared_error(y_true, y_pred, weights=1.0, **kwargs):
    """Per-example mean squared error (TF2), or the scalar mean over everything while a TF1
    graph is being built."""
    if _ops._defining():
        return _graph.mean_squared_error(y_true, y_pred, weights)
    return _mse_per_example(y_true, y_pred)
