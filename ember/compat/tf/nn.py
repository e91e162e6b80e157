"""``tf.nn``: activations and the cross-entropy ops on logits.

>>> import ember.compat.tf as tf
>>> tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0], logits=[[0.0, 0.0]])
tensor([0.6931])
"""

from __future__ import annotations

import ember
import ember.nn.functional as F

from . import ops as _ops
from .keras.activations import elu, gelu, selu, softplus  # noqa: F401
from .ops import sigmoid, tanh  # noqa: F401


def relu(features, name=None):
    """``max(features, 0)``.

    >>> import ember.compat.tf as tf
    >>> tf.nn.relu([-1.0, 1.0])
    tensor([0., 1.])
    """
    return F.relu(_ops.convert_to_tensor(features))


def relu6(features, name=None):
    """``min(max(features, 0), 6)``."""
    return F.relu6(_ops.convert_to_tensor(features))


def leaky_relu(features, alpha: float = 0.2, name=None):
    """``features`` if positive, else ``alpha * features``."""
    return F.leaky_relu(_ops.convert_to_tensor(features), alpha)


def softmax(logits, axis=None, name=None):
    """Softmax along ``axis`` (default the last).

    >>> import ember.compat.tf as tf
    >>> tf.nn.softmax([0.0, 0.0])
    tensor([0.5000, 0.5000])
    """
    return F.softmax(_ops.convert_to_tensor(logits), dim=-1 if axis is None else axis)


def log_softmax(logits, axis=None, name=None):
    """Log-softmax along ``axis`` (default the last)."""
    return F.log_softmax(_ops.convert_to_tensor(logits), dim=-1 if axis is None else axis)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Per-example ``-log softmax(logits)[label]`` for integer labels."""
    logits = _ops.convert_to_tensor(logits)
    labels = _ops.convert_to_tensor(labels).to(ember.int64)
    return F.cross_entropy(logits, labels, reduction="none")


def softmax_cross_entropy_with_logits(labels=None, logits=None, axis=-1, name=None):
    """Per-example ``-sum(labels * log softmax(logits))`` for one-hot or soft labels."""
    logits = _ops.convert_to_tensor(logits)
    labels = _ops.convert_to_tensor(labels, logits.dtype)
    return -(labels * F.log_softmax(logits, dim=axis)).sum(dim=axis)


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Elementwise binary cross-entropy of ``sigmoid(logits)`` against ``labels``."""
    logits = _ops.convert_to_tensor(logits)
    labels = _ops.convert_to_tensor(labels, logits.dtype)
    return F.binary_cross_entropy_with_logits(logits, labels, reduction="none")


def dropout(x, rate: float, noise_shape=None, seed=None, name=None):
    """Zero elements with probability ``rate``, scale the rest by ``1 / (1 - rate)``."""
    return F.dropout(_ops.convert_to_tensor(x), rate, True)


def l2_loss(t, name=None):
    """``sum(t ** 2) / 2``."""
    t = _ops.convert_to_tensor(t)
    return (t * t).sum() / 2
