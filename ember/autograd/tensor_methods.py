"""Tensor methods that start backward passes (``Tensor.backward``), attached to Tensor by
``ember/_tensor_methods.py`` with the functions families' methods.

>>> import ember
>>> x = ember.ones(2, requires_grad=True)
>>> (x * x).sum().backward(); x.grad
tensor([2., 2.])
"""

from __future__ import annotations

from .._tensor import Tensor
from . import engine


def backward(
    self: Tensor, gradient=None, retain_graph=None, create_graph: bool = False, inputs=None
) -> None:
    """Accumulate the gradient of this tensor into the ``.grad`` of the leaves it depends on.

    >>> import ember
    >>> x = ember.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * 3
    >>> y.backward(ember.ones(2)); x.grad
    tensor([3., 3.])
    """
    engine.backward(self, gradient, retain_graph, create_graph, inputs)


__all__: list = []
TENSOR_METHODS = {"backward": backward}
