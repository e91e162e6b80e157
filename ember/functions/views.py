"""Autograd for in-place writes through views: the base tensor takes the new history."""

from __future__ import annotations

from .._errors import AutogradError
from .._tensor import Tensor


def rebase_view(view: Tensor, result: Tensor) -> None:
    """After ``view``'s storage was overwritten with ``result``, rebuild the histories.

    Not supported yet: writes through a view into a tensor that is part of a graph.
    """
    raise AutogradError(
        f"in-place write of shape {tuple(view.shape)} through a view of a tensor that requires "
        f"grad (base shape {tuple(view._base.shape)}) is not supported; write to the base "
        "tensor with indexing instead (base[index] = value)"
    )
