"""``Parameter`` and ``Buffer``: tensors that a Module registers when they are assigned to it.

A Parameter shares the storage (and version counter) of the tensor it wraps, is always a leaf
and requires grad by default. Ops on Parameters return plain Tensors.

>>> import ember
>>> t = ember.zeros(2)
>>> p = ember.nn.Parameter(t)
>>> p
Parameter containing:
tensor([0., 0.], requires_grad=True)
>>> _ = t.add_(1); p.detach()
tensor([1., 1.])
>>> type(p * 2).__name__, isinstance(p, ember.Tensor)
('Tensor', True)
"""

from __future__ import annotations

from .._tensor import Tensor, _init
from ..backend.arrays import own_copy

__all__ = ["Parameter", "Buffer"]


def _wrap(cls, data, requires_grad: bool, name: str):
    if data is None:
        from ..functions.creation import empty

        data = empty(0)
    elif not isinstance(data, Tensor):
        raise TypeError(f"{name}: expected a Tensor as data, got {type(data).__name__}")
    t = object.__new__(cls)  # not cls._make: that calls cls.__new__, which is this
    _init(t, data._data, False)
    t._version = data._version  # same storage, same version counter (like detach())
    if requires_grad:
        t.requires_grad = True  # the setter refuses integer dtypes with a clear message
    return t


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning it to a Module attribute registers it.

    ``Parameter(data=None, requires_grad=True)``: ``data`` is shared, not copied; with no data
    the parameter is empty. ``requires_grad`` holds even under ``no_grad``.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.ones(2, 2))
    >>> w.is_leaf, w.requires_grad, w.shape
    (True, True, ember.Size([2, 2]))
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        return _wrap(cls, data, requires_grad, "Parameter")

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass  # everything happens in __new__ (Tensor.__init__ would rebuild the data)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + Tensor.__repr__(self)

    __str__ = __repr__

    def __deepcopy__(self, memo: dict) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(Tensor._make(own_copy(self._data)), self._requires_grad)
        memo[id(self)] = result
        return result

    def __reduce__(self):
        return (_rebuild_parameter, (self.numpy(force=True).copy(), self._requires_grad))


def _rebuild_parameter(array, requires_grad: bool) -> Parameter:
    return Parameter(Tensor._make(array), requires_grad)


class Buffer(Tensor):
    """A Tensor that a Module registers as a buffer when assigned (``persistent`` or not).

    >>> import ember
    >>> m = ember.nn.Module()
    >>> m.steps = ember.nn.Buffer(ember.zeros(1), persistent=False)
    >>> list(m.named_buffers()), list(m.state_dict())
    ([('steps', tensor([0.]))], [])
    """

    __slots__ = ("persistent",)

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Buffer:
        requires_grad = data._requires_grad if isinstance(data, Tensor) else False
        t = _wrap(cls, data, requires_grad, "Buffer")
        t.persistent = persistent
        return t

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        pass

    def __repr__(self) -> str:  # prints as a plain tensor, as PyTorch's buffers do
        return Tensor.__repr__(Tensor._make(self._data, self._requires_grad))

    __str__ = __repr__

    def __deepcopy__(self, memo: dict) -> Buffer:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(Tensor._make(own_copy(self._data)), persistent=self.persistent)
        memo[id(self)] = result
        return result

    def __reduce__(self):
        return (_rebuild_buffer, (self.numpy(force=True).copy(), self.persistent))


def _rebuild_buffer(array, persistent: bool) -> Buffer:
    return Buffer(Tensor._make(array), persistent=persistent)
