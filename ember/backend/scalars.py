"""Host scalar arithmetic done the way an optimizer rule does it eagerly.

An optimizer's rule (``ember.optim``) is ember ops: its bias corrections such as ``b2 ** t``
are a ``Pow`` of 0-d float64 arrays, which NumPy computes with its vectorized power. On CPUs
with AVX-512, NumPy's vectorized power can differ from Python's ``**`` (the C library's) in the
last bit: ``0.99 ** 3.0`` does here. An override that must equal the rule bit for bit (the
CPU's NumPy steps, the GPU's kernels, whose scalars are worked out on the host) computes such
powers with ``power`` below, not with ``**``.

>>> power(0.5, 2.0)
0.25
"""

from __future__ import annotations

import numpy as np


def power(base: float, exponent: float) -> float:
    """``base ** exponent`` as ``Pow`` gives it for two 0-d float64 NumPy arrays.

    >>> power(0.9, 1.0)
    0.9
    """
    return float(np.power(np.array(base, np.float64), np.array(exponent, np.float64)))


__all__ = ["power"]
