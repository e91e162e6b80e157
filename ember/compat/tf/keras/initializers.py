"""Keras weight initializers: ``glorot_uniform`` (the default for kernels), ``zeros`` (for
biases), and the other common ones. An initializer is called as ``init(shape, dtype)``; the
numbers come from ember's generator (``tf.random.set_seed``), or from a generator of their
own when given a ``seed``.

>>> import ember.compat.tf as tf
>>> w = tf.keras.initializers.GlorotUniform()((3, 4))
>>> w.shape, bool(abs(w).max() <= (6 / 7) ** 0.5)
(ember.Size([3, 4]), True)
"""

from __future__ import annotations

import math

import ember
from ember._errors import EmberError

from .. import ops as _ops


def _fans(shape: tuple) -> tuple[int, int]:
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = math.prod(shape[:-2])
    return shape[-2] * receptive, shape[-1] * receptive


class Initializer:
    """Base class: ``__call__(shape, dtype=None)`` returns a new tensor."""

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self._gen = None if seed is None else ember.Generator().manual_seed(int(seed))

    def __call__(self, shape, dtype=None):
        raise NotImplementedError

    def _dtype(self, dtype):
        return _ops.float32 if dtype is None else _ops.as_dtype(dtype)

    def _uniform(self, shape, dtype, limit: float):
        t = ember.rand(tuple(shape), generator=self._gen, dtype=self._dtype(dtype))
        return t.mul_(2 * limit).sub_(limit)

    def _truncated(self, shape, dtype, stddev: float):
        t = ember.empty(tuple(shape), dtype=self._dtype(dtype))
        return ember.nn.init.trunc_normal_(
            t, 0.0, stddev, -2 * stddev, 2 * stddev, generator=self._gen
        )


class Zeros(Initializer):
    """All zeros."""

    def __call__(self, shape, dtype=None):
        return ember.zeros(tuple(shape), dtype=self._dtype(dtype))


class Ones(Initializer):
    """All ones."""

    def __call__(self, shape, dtype=None):
        return ember.ones(tuple(shape), dtype=self._dtype(dtype))


class Constant(Initializer):
    """All ``value``."""

    def __init__(self, value=0.0) -> None:
        super().__init__()
        self.value = value

    def __call__(self, shape, dtype=None):
        return ember.full(tuple(shape), self.value, dtype=self._dtype(dtype))


class RandomUniform(Initializer):
    """Uniform in ``[minval, maxval)`` (default ``[-0.05, 0.05)``)."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None) -> None:
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape, dtype=None):
        t = ember.rand(tuple(shape), generator=self._gen, dtype=self._dtype(dtype))
        return t.mul_(self.maxval - self.minval).add_(self.minval)


class RandomNormal(Initializer):
    """Normal with ``mean`` and ``stddev`` (default 0.05)."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None) -> None:
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None):
        t = ember.randn(tuple(shape), generator=self._gen, dtype=self._dtype(dtype))
        return t.mul_(self.stddev).add_(self.mean)


class TruncatedNormal(Initializer):
    """Normal with ``stddev`` (default 0.05), redrawn beyond two standard deviations."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None) -> None:
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None):
        return self._truncated(shape, dtype, self.stddev).add_(self.mean)


class GlorotUniform(Initializer):
    """Uniform in ``±sqrt(6 / (fan_in + fan_out))``: Keras' default kernel initializer."""

    def __call__(self, shape, dtype=None):
        fan_in, fan_out = _fans(tuple(shape))
        return self._uniform(shape, dtype, math.sqrt(6.0 / max(1, fan_in + fan_out)))


class GlorotNormal(Initializer):
    """Truncated normal with ``stddev = sqrt(2 / (fan_in + fan_out)) / 0.8796...``."""

    def __call__(self, shape, dtype=None):
        fan_in, fan_out = _fans(tuple(shape))
        std = math.sqrt(2.0 / max(1, fan_in + fan_out)) / 0.87962566103423978
        return self._truncated(shape, dtype, std)


class HeUniform(Initializer):
    """Uniform in ``±sqrt(6 / fan_in)``."""

    def __call__(self, shape, dtype=None):
        fan_in, _ = _fans(tuple(shape))
        return self._uniform(shape, dtype, math.sqrt(6.0 / max(1, fan_in)))


class HeNormal(Initializer):
    """Truncated normal with ``stddev = sqrt(2 / fan_in) / 0.8796...``."""

    def __call__(self, shape, dtype=None):
        fan_in, _ = _fans(tuple(shape))
        return self._truncated(shape, dtype, math.sqrt(2.0 / max(1, fan_in)) / 0.87962566103423978)


_BY_NAME = {
    "zeros": Zeros,
    "ones": Ones,
    "random_uniform": RandomUniform,
    "random_normal": RandomNormal,
    "truncated_normal": TruncatedNormal,
    "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal,
    "he_uniform": HeUniform,
    "he_normal": HeNormal,
}


def get(identifier):
    """An initializer for a name, an instance, or a callable ``(shape, dtype) -> tensor``.

    >>> import ember.compat.tf as tf
    >>> tf.keras.initializers.get("zeros")((2,))
    tensor([0., 0.])
    """
    if callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    raise EmberError(
        f"unknown initializer {identifier!r}; known: {', '.join(sorted(_BY_NAME))}, or a "
        "callable (shape, dtype) -> tensor"
    )
