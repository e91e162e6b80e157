"""Helpers the distributions share: ``broadcast_all``, ``lazy_property``, the probs/logits
conversions, and the sums and draws several distributions make.

>>> import ember
>>> from ember.distributions.utils import broadcast_all, probs_to_logits
>>> [t.shape for t in broadcast_all(ember.zeros(2), 1.0)]
[ember.Size([2]), ember.Size([2])]
>>> probs_to_logits(ember.tensor([0.5]), is_binary=True)
tensor([0.])
"""

from __future__ import annotations

from functools import update_wrapper
from numbers import Number

from .. import dtypes as _dt
from .._config import enable_grad
from .._tensor import Tensor
from ..functions.creation import rand, randn, tensor
from ..functions.structure import broadcast_tensors
from ..nn._functional.activation import softmax
from ..static.symbol import Symbol

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
]


def broadcast_all(*values) -> tuple[Tensor, ...]:
    """Tensors and numbers broadcast together; numbers take the first tensor's dtype and
    device (the default dtype when all are numbers).

    >>> import ember
    >>> a, b = broadcast_all(ember.zeros(2, dtype=ember.float64), 3)
    >>> b
    tensor([3., 3.], dtype=ember.float64)
    """
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number or ember.Tensor.")
    like = next((v for v in values if isinstance(v, Tensor)), None)
    options = (
        {"dtype": _dt.get_default_dtype()}
        if like is None
        else {"dtype": like.dtype, "device": like.device}
    )
    new = [v if isinstance(v, Tensor) else tensor(v, **options) for v in values]
    return tuple(broadcast_tensors(*new))


class lazy_property:
    """A property computed on first access (with grad enabled) and then kept on the instance;
    ``Categorical.probs`` and ``logits`` are the one not given, derived from the other.

    >>> class A:
    ...     @lazy_property
    ...     def x(self):
    ...         return 2
    >>> a = A(); a.x, "x" in a.__dict__
    (2, True)
    """

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities clamped into [eps, 1 - eps] of their dtype.

    >>> import ember
    >>> clamp_probs(ember.tensor([0.0, 1.0], dtype=ember.float64)).tolist()[0] > 0
    True
    """
    eps = _dt.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Log-probabilities (or, binary, log-odds) of clamped ``probs``.

    >>> import ember
    >>> probs_to_logits(ember.tensor([1.0, 1.0]) / 2)
    tensor([-0.6931, -0.6931])
    """
    ps = clamp_probs(probs)
    return ps.log() - (-ps).log1p() if is_binary else ps.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Softmax over the last dimension (or, binary, the sigmoid) of ``logits``.

    >>> import ember
    >>> logits_to_probs(ember.tensor([0.0, 0.0]))
    tensor([0.5000, 0.5000])
    """
    return logits.sigmoid() if is_binary else softmax(logits, dim=-1)


def check_probs_or_logits(probs, logits) -> None:
    """Exactly one of ``probs`` and ``logits`` is given (Bernoulli, Categorical...)."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """``value`` summed over its last ``dim`` dimensions."""
    return value.reshape(tuple(value.shape[: value.dim() - dim]) + (-1,)).sum(-1) if dim else value


def standard_normal(shape, like: Tensor) -> Tensor:
    """Standard normal draws of ``shape`` in ``like``'s dtype and device (a random op, so a
    compiled graph draws anew on every run)."""
    return randn(tuple(shape), dtype=like.dtype, device=like.device)


def standard_uniform(shape, like: Tensor) -> Tensor:
    """Uniform [0, 1) draws of ``shape`` in ``like``'s dtype and device."""
    return rand(tuple(shape), dtype=like.dtype, device=like.device)


def all_true(valid: Tensor) -> bool:
    """Whether every entry of a check holds; a symbolic check (inside ``ember.compile`` or a
    static graph) has no values yet and passes."""
    if isinstance(valid, bool):
        return valid
    return type(valid._data) is Symbol or bool(valid.all())
