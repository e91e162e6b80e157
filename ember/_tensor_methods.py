"""Attach the ops-side methods to Tensor, in one place (keeps imports pointing down)."""

from __future__ import annotations

from ._tensor import Tensor
from .functions import (
    autograd_methods,
    conversion,
    creation,
    elementwise,
    inplace,
    linalg,
    reduce,
    shape,
)

FAMILIES = (creation, elementwise, reduce, linalg, shape, conversion, inplace, autograd_methods)


def attach() -> None:
    for module in FAMILIES:
        for name, fn in module.TENSOR_METHODS.items():
            setattr(Tensor, name, fn)


attach()
