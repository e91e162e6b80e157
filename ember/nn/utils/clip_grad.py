"""Gradient clipping: by total norm (``clip_grad_norm_``) and by value (``clip_grad_value_``).

Follows PyTorch 2.13 step for step: the total norm is the ``norm_type`` norm of the per-tensor
norms (so ``norm_type=0`` counts tensors with a nonzero gradient, as in PyTorch), it is returned
as a tensor, and gradients are always multiplied by ``min(max_norm / (total + 1e-6), 1)`` (no
data-dependent branch, so NaN/Inf norms spread as in PyTorch unless ``error_if_nonfinite``).
Written in ember ops under ``no_grad``, so the work can be traced into a compiled step.

>>> import ember
>>> from ember.nn.utils import clip_grad_value_
>>> p = ember.nn.Parameter(ember.zeros(3))
>>> p.grad = ember.tensor([-2.0, 0.5, 3.0])
>>> clip_grad_value_(p, 1.0)
>>> p.grad
tensor([-1.0000,  0.5000,  1.0000])
"""

from __future__ import annotations

import math
import types
import warnings
from collections.abc import Iterable

from ..._config import no_grad
from ..._errors import EmberError
from ..._tensor import Tensor
from ...functions.creation import tensor
from ...functions.shape import stack

TensorOrTensors = Tensor | Iterable[Tensor]


def _vector_norm(x: Tensor, p: float) -> Tensor:
    """``torch.linalg.vector_norm(x, p)`` of a whole tensor (0-d result, ``x``'s dtype)."""
    if p == 2.0:
        return (x * x).sum().sqrt()
    if p == 1.0:
        return x.abs().sum()
    if p == math.inf:
        return x.abs().amax()
    if p == -math.inf:
        return x.abs().amin()
    if p == 0.0:
        return (x != 0).sum().to(x.dtype)
    return (x.abs() ** p).sum() ** (1.0 / p)


def _as_list(tensors: TensorOrTensors) -> list:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


@no_grad()
def get_total_norm(
    tensors: TensorOrTensors,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The ``norm_type`` norm of the per-tensor norms of ``tensors`` (0. for none).

    ``foreach`` is accepted for PyTorch compatibility; ember has one implementation.

    >>> import ember
    >>> from ember.nn.utils import get_total_norm
    >>> get_total_norm([ember.tensor([3.0]), ember.tensor([4.0])])
    tensor(5.)
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    norms = [_vector_norm(t, norm_type) for t in tensors]
    total = (
        norms[0] if len(norms) == 1 and norm_type != 0.0 else _vector_norm(stack(norms), norm_type)
    )
    if error_if_nonfinite and not bool(total.isfinite()):
        raise EmberError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total


@no_grad()
def clip_grads_with_norm_(
    parameters: TensorOrTensors,
    max_norm: float,
    total_norm: Tensor,
    foreach: bool | None = None,
) -> None:
    """Scale the gradients of ``parameters`` in place by ``min(max_norm / (total_norm + 1e-6),
    1)``: the second half of ``clip_grad_norm_``, for a norm computed elsewhere.

    >>> import ember
    >>> from ember.nn.utils import clip_grads_with_norm_
    >>> p = ember.nn.Parameter(ember.zeros(2))
    >>> p.grad = ember.tensor([3.0, 4.0])
    >>> clip_grads_with_norm_([p], 1.0, ember.tensor(10.0))
    >>> p.grad
    tensor([0.3000, 0.4000])
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef)


@no_grad()
def clip_grad_norm_(
    parameters: TensorOrTensors,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale the gradients of ``parameters`` in place so that their total ``norm_type`` norm
    (computed as if all were one vector; ``inf`` for the max-norm) is at most ``max_norm``.
    Returns the total norm before clipping, as a tensor.

    >>> import ember
    >>> from ember.nn.utils import clip_grad_norm_
    >>> p = ember.nn.Parameter(ember.zeros(2))
    >>> p.grad = ember.tensor([3.0, 4.0])
    >>> clip_grad_norm_(p, max_norm=1.0)
    tensor(5.)
    >>> p.grad
    tensor([0.6000, 0.8000])
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)  # a generator must not be exhausted by the first pass
        if is_generator and not parameters:
            warnings.warn(
                "`parameters` is an empty generator, no gradient clipping will occur.",
                UserWarning,
                stacklevel=3,
            )
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(
    parameters: TensorOrTensors,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Deprecated alias of :func:`clip_grad_norm_` (warns, as PyTorch does)."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@no_grad()
def clip_grad_value_(
    parameters: TensorOrTensors, clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp the gradients of ``parameters`` in place to ``[-clip_value, clip_value]``.

    >>> import ember
    >>> from ember.nn.utils import clip_grad_value_
    >>> p = ember.nn.Parameter(ember.zeros(2))
    >>> p.grad = ember.tensor([-3.0, 0.25])
    >>> clip_grad_value_([p], 0.5)
    >>> p.grad
    tensor([-0.5000,  0.2500])
    """
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)


__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
]
