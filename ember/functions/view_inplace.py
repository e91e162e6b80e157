"""In-place view ops (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``, ``swapdims_``):
the tensor takes its view's shape and strides, and its history, as PyTorch's do; the values
are not touched. Each is its out-of-place view function run through ``view_inplace``.

>>> import ember
>>> y = ember.arange(4.0).reshape(2, 2)
>>> y.t_()
tensor([[0., 2.],
        [1., 3.]])
"""

from __future__ import annotations

from .._config import state
from .._tensor import Tensor
from .inplace import check_inplace_allowed
from .shape import squeeze, swapaxes, swapdims, t, transpose, unsqueeze


def view_inplace(x: Tensor, fn, *args, name: str) -> Tensor:
    """``x`` becomes the view ``fn(x, *args)`` (same storage): its array and, while autograd
    records, its history; the version counter is bumped, as PyTorch does.

    >>> import ember
    >>> view_inplace(ember.zeros(3), ember.unsqueeze, 0, name="unsqueeze_").shape
    ember.Size([1, 3])
    """
    if state.grad_enabled and x._requires_grad:
        check_inplace_allowed(x, name)
    view = fn(_alias(x), *args)
    x._data = view._data
    if view._node is not None:
        x._node = view._node
    x._version[0] += 1
    return x


def _alias(x: Tensor) -> Tensor:
    """``x`` under a second name (same array, history, version counter and base), so the view's
    node keeps the input as it was when ``x`` itself changes shape."""
    a = Tensor._make(x._data, x._requires_grad)
    a._node, a._version, a._base, a._readonly = x._node, x._version, x._base, x._readonly
    return a


def _method(fn, name: str):
    def method(self: Tensor, *args) -> Tensor:
        return view_inplace(self, fn, *args, name=name)

    method.__name__ = name
    method.__doc__ = f"``{fn.__name__}`` in place: this tensor becomes the view."
    return method


TENSOR_METHODS = {
    name: _method(fn, name)
    for name, fn in {
        "t_": t,
        "transpose_": transpose,
        "swapdims_": swapdims,
        "swapaxes_": swapaxes,
        "squeeze_": squeeze,
        "unsqueeze_": unsqueeze,
    }.items()
}
__all__: list[str] = []
