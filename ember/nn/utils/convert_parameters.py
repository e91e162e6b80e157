"""Parameters as one flat vector and back (``parameters_to_vector``, ``vector_to_parameters``).

>>> import ember
>>> from ember.nn.utils import parameters_to_vector
>>> parameters_to_vector([ember.ones(2, 2), ember.zeros(3)])
tensor([1., 1., 1., 1., 0., 0., 0.])
"""

from __future__ import annotations

from collections.abc import Iterable

from ..._errors import DeviceError
from ..._tensor import Tensor
from ...functions.shape import cat


def _check_device(param: Tensor, device):
    if device is not None and param.device != device:
        raise DeviceError(
            "Found two parameters on different devices, this is currently not supported "
            f"({device} and {param.device})"
        )
    return param.device


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All ``parameters`` flattened and concatenated into one 1-D tensor (differentiable).

    >>> import ember
    >>> parameters_to_vector(ember.nn.Linear(2, 1).parameters()).shape
    ember.Size([3])
    """
    device, vec = None, []
    for param in parameters:
        device = _check_device(param, device)
        vec.append(param.reshape(-1))
    return cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Slice ``vec`` into the shapes of ``parameters`` and make each slice its new ``.data``.

    >>> import ember
    >>> p = ember.nn.Parameter(ember.zeros(2))
    >>> vector_to_parameters(ember.tensor([1.0, 2.0]), [p])
    >>> p
    Parameter containing:
    tensor([1., 2.], requires_grad=True)
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected ember.Tensor, but got: {type(vec).__name__}")
    device, pointer = None, 0
    for param in parameters:
        device = _check_device(param, device)
        n = param.numel()
        param.data = vec[pointer : pointer + n].view_as(param).data
        pointer += n


__all__ = ["parameters_to_vector", "vector_to_parameters"]
