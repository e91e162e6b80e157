"""dropout's one definition, below ``nn``: ``ember.dropout`` and ``nn.functional.dropout``.

The mask is a random op (``ops.random.DropoutMask``), drawn when the op runs, so a compiled
graph draws a new mask on every run.

>>> import ember
>>> from ember.functions.dropout import dropout
>>> dropout(ember.ones(3), 0.5, training=False)
tensor([1., 1., 1.])
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops.base import apply
from ..ops.random import DropoutMask
from .creation import zeros_like


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p) (training only).

    >>> import ember
    >>> import ember.nn.functional as F
    >>> F.dropout(ember.ones(3), 0.5, training=False)
    tensor([1., 1., 1.])
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        mask = zeros_like(input)
    else:  # a random op: a compiled graph draws a new mask on every run
        mask = apply(DropoutMask(tuple(input.shape), float(p)), input)
    return input.mul_(mask) if inplace else input * mask
