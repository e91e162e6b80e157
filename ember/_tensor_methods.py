"""Attach the ops-side methods to Tensor, in one place (keeps imports pointing down)."""

from __future__ import annotations

from ._tensor import Tensor
from .autograd import tensor_methods
from .functions import (
    compare,
    conversion,
    creation,
    elementwise,
    elementwise_inplace,
    indexing,
    inplace,
    inplace_forms,
    linalg,
    logical,
    math,
    matrices,
    reduce,
    sampling,
    searching,
    shape,
    sorting,
    special,
    statistics,
    structure,
    tensor_flags,
    view_inplace,
)
from .functions.numpy_names import accept_numpy_names
from .sparse import methods as sparse_methods

FAMILIES = (
    creation, elementwise, math, compare, logical, elementwise_inplace,
    reduce, linalg, shape, indexing, sorting, conversion, inplace, tensor_methods,
    sampling, structure, searching, special, sparse_methods, view_inplace, matrices, statistics,
    inplace_forms, tensor_flags,
)  # fmt: skip


def attach() -> None:
    for module in FAMILIES:
        for name, fn in module.TENSOR_METHODS.items():
            setattr(Tensor, name, fn if name.startswith("__") else accept_numpy_names(fn))


attach()
