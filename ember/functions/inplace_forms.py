"""In-place Tensor methods of existing functions (``x.addmm_(a, b)``, ``x.eq_(y)``,
``x.cumsum_(0)``, ``x.fill_diagonal_(v)``...): each is the function written back into ``x``
through the one in-place path, ``inplace.apply_inplace`` (version bump, autograd history,
graph write-backs), with the result cast to ``x``'s dtype.

>>> import ember
>>> ember.tensor([1.0, 2.0, 3.0]).ge_(2)
tensor([0., 1., 1.])
"""

from __future__ import annotations

import numpy as np

from .._errors import ShapeError
from .._tensor import Tensor
from ..ops.elementwise import where
from . import compare, linalg, math, reduce, structure
from .inplace import apply_inplace, inplace_method


def _const_mask(x: Tensor, mask: np.ndarray) -> Tensor:
    return Tensor._make(x.device.xp.asarray(mask))


def _with_diagonal(x: Tensor, value, wrap: bool) -> Tensor:
    if x.ndim < 2:
        raise ShapeError(
            f"fill_diagonal_: dimensions must larger than 1, got shape {tuple(x.shape)}"
        )
    if x.ndim > 2 and len(set(x.shape)) != 1:
        raise ShapeError(
            f"fill_diagonal_: all dimensions of input must be of equal length, got shape "
            f"{tuple(x.shape)}"
        )
    mask = np.zeros(tuple(x.shape), dtype=bool)
    flat = mask.reshape(-1)
    if x.ndim == 2:
        rows, cols = x.shape
        step = cols + 1
        end = flat.size if wrap and rows > cols + 1 else min(rows, cols) * cols
        flat[:end:step] = True
    else:
        n = x.shape[0]
        flat[:: sum(n**k for k in range(x.ndim))] = True
    value = value if isinstance(value, Tensor) else x.new_full((), value)
    return where(_const_mask(x, mask), value.to(x.dtype), x)


def fill_diagonal_(self: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """Fill the main diagonal (all dims equal, or a matrix) with ``fill_value`` in place;
    ``wrap`` restarts it every ``cols + 1`` rows of a tall matrix, as NumPy and PyTorch.

    >>> import ember
    >>> ember.zeros(2, 3).fill_diagonal_(5)
    tensor([[5., 0., 0.],
            [0., 5., 0.]])
    """
    return apply_inplace(self, _with_diagonal, fill_value, wrap, name="fill_diagonal_")


# name -> (function, whether its gradient reads the old value of self)
_FORMS = {
    "addmm_": (linalg.addmm, False),
    "addmv_": (structure.addmv, False),
    "addr_": (structure.addr, False),
    "baddbmm_": (structure.baddbmm, False),
    "cumsum_": (reduce.cumsum, False),
    "cumprod_": (reduce.cumprod, True),
    "exp2_": (math.exp2, True),
    "renorm_": (reduce.renorm, True),
    "eq_": (compare.eq, False),
    "ne_": (compare.ne, False),
    "lt_": (compare.lt, False),
    "le_": (compare.le, False),
    "gt_": (compare.gt, False),
    "ge_": (compare.ge, False),
}
_ALIASES = {
    "not_equal_": "ne_",
    "less_": "lt_",
    "less_equal_": "le_",
    "greater_": "gt_",
    "greater_equal_": "ge_",
}

__all__: list = []
TENSOR_METHODS = {name: inplace_method(fn, name, saves) for name, (fn, saves) in _FORMS.items()}
TENSOR_METHODS.update({alias: TENSOR_METHODS[name] for alias, name in _ALIASES.items()})
TENSOR_METHODS["fill_diagonal_"] = fill_diagonal_
