"""Keras activations by name: ``activation="relu"`` in a layer, or ``keras.activations.relu``.

>>> import ember.compat.tf as tf
>>> tf.keras.activations.get("relu")(tf.constant([-1.0, 2.0]))
tensor([0., 2.])
"""

from __future__ import annotations

import ember
import ember.nn.functional as F
from ember._errors import EmberError


def linear(x):
    """``x`` unchanged."""
    return x


def relu(x):
    """``max(x, 0)``."""
    return F.relu(x)


def sigmoid(x):
    """``1 / (1 + exp(-x))``."""
    return ember.sigmoid(x)


def tanh(x):
    """Hyperbolic tangent."""
    return ember.tanh(x)


def softmax(x, axis: int = -1):
    """``exp(x) / sum(exp(x))`` along ``axis``."""
    return F.softmax(x, dim=axis)


def log_softmax(x, axis: int = -1):
    """``x - logsumexp(x)`` along ``axis``."""
    return F.log_softmax(x, dim=axis)


def softplus(x):
    """``log(1 + exp(x))``."""
    return F.softplus(x)


def elu(x, alpha: float = 1.0):
    """``x`` if positive, else ``alpha * (exp(x) - 1)``."""
    return F.elu(x, alpha)


def selu(x):
    """Scaled ELU."""
    return F.selu(x)


def gelu(x, approximate: bool = False):
    """Gaussian error linear unit."""
    return F.gelu(x, approximate="tanh" if approximate else "none")


def leaky_relu(x, negative_slope: float = 0.2):
    """``x`` if positive, else ``negative_slope * x`` (Keras' default slope 0.2)."""
    return F.leaky_relu(x, negative_slope)


_BY_NAME = {
    "linear": None,
    "relu": relu,
    "sigmoid": sigmoid,
    "tanh": tanh,
    "softmax": softmax,
    "log_softmax": log_softmax,
    "softplus": softplus,
    "elu": elu,
    "selu": selu,
    "gelu": gelu,
    "leaky_relu": leaky_relu,
}


def get(identifier):
    """The activation function for a name or callable (None and ``"linear"``: None, meaning
    no activation).

    >>> import ember.compat.tf as tf
    >>> tf.keras.activations.get("softmax").__name__, tf.keras.activations.get(None)
    ('softmax', None)
    """
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]
    raise EmberError(
        f"unknown activation {identifier!r}; known: {', '.join(sorted(_BY_NAME))}, or a callable"
    )
