"""Shape functions: reshape/view, squeeze, expand, permute, cat/stack, split, flip, repeat...

Primitives are few (``Reshape``, ``Permute``, ``Expand``, ``BasicIndex``, ``Cat``, ``Flip``,
``Roll``); everything else here is built from them, so it has no gradient code of its own.
Results are views of the input wherever PyTorch's are (reshape of a contiguous tensor, squeeze,
transpose, narrow, split, unbind, expand...).

>>> import ember
>>> ember.ones(2, 3).view(-1).shape
ember.Size([6])

The family is a package, one module per kind: ``reshaping`` (the cached ``Reshape`` op
included), ``broadcasting``, ``reordering``, ``slicing``, ``joining`` and
``flip_roll_repeat``, with the argument helpers they share in ``_arguments``; this module
gathers their ``__all__`` and ``TENSOR_METHODS``.
"""

from ._arguments import _dims_arg, _shape_arg, infer_shape
from .broadcasting import broadcast_to, expand, expand_as, sum_to_size
from .flip_roll_repeat import flip, fliplr, flipud, repeat, roll, tile
from .joining import (
    _same_dtype,
    _tensor_list,
    atleast_1d,
    cat,
    concat,
    concatenate,
    hstack,
    stack,
    vstack,
)
from .reordering import _T, _mT, movedim, permute, t, transpose
from .reshaping import (
    _RESHAPE_OPS,
    _reshape,
    _reshape_op,
    flatten,
    ravel,
    reshape,
    reshape_as,
    squeeze,
    unflatten,
    unsqueeze,
    view,
    view_as,
)
from .slicing import (
    chunk,
    dsplit,
    hsplit,
    narrow,
    select,
    split,
    split_with_sizes,
    tensor_split,
    unbind,
    vsplit,
)

__all__ = [
    "reshape",
    "view_as",
    "reshape_as",
    "flatten",
    "ravel",
    "unflatten",
    "squeeze",
    "unsqueeze",
    "expand_as",
    "broadcast_to",
    "permute",
    "transpose",
    "swapaxes",
    "swapdims",
    "t",
    "movedim",
    "moveaxis",
    "narrow",
    "select",
    "split",
    "chunk",
    "tensor_split",
    "unbind",
    "split_with_sizes",
    "hsplit",
    "vsplit",
    "dsplit",
    "cat",
    "concat",
    "concatenate",
    "stack",
    "hstack",
    "vstack",
    "atleast_1d",
    "flip",
    "fliplr",
    "flipud",
    "roll",
    "tile",
]

swapaxes = swapdims = transpose
moveaxis = movedim

TENSOR_METHODS = {
    "reshape": reshape,
    "view": view,
    "view_as": view_as,
    "reshape_as": reshape_as,
    "flatten": flatten,
    "ravel": ravel,
    "unflatten": unflatten,
    "squeeze": squeeze,
    "unsqueeze": unsqueeze,
    "expand": expand,
    "expand_as": expand_as,
    "broadcast_to": broadcast_to,
    "permute": permute,
    "transpose": transpose,
    "swapaxes": transpose,
    "swapdims": transpose,
    "t": t,
    "movedim": movedim,
    "moveaxis": movedim,
    "narrow": narrow,
    "select": select,
    "split": split,
    "chunk": chunk,
    "tensor_split": tensor_split,
    "unbind": unbind,
    "split_with_sizes": split_with_sizes,
    "hsplit": hsplit,
    "vsplit": vsplit,
    "dsplit": dsplit,
    "sum_to_size": sum_to_size,
    "flip": flip,
    "fliplr": fliplr,
    "flipud": flipud,
    "roll": roll,
    "repeat": repeat,
    "tile": tile,
    "T": property(_T),
    "mT": property(_mT),
}
