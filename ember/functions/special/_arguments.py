"""Argument helpers shared by the ``ember.functions.special`` modules: numbers to tensors,
integer tensors to the default float dtype, and ``where`` (imported when first called)."""

from __future__ import annotations

from ... import dtypes as _dt
from ..._tensor import Tensor
from .. import creation as C


def _t(x, like: Tensor | None = None) -> Tensor:
    if isinstance(x, Tensor):
        return x
    device = like.device if like is not None else None
    dtype = like.dtype if like is not None and like.dtype.is_floating_point else None
    return C.tensor(x, dtype=dtype, device=device)


def _float(x: Tensor) -> Tensor:
    return x if x.dtype.is_floating_point else x.to(_dt.get_default_dtype())


def _where(cond, a, b):
    from ..elementwise import where

    return where(cond, a, b)
