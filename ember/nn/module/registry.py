"""The registries a Module keeps its parameters, buffers and submodules in.

Registered values live in ``_parameters`` / ``_buffers`` / ``_modules`` as in PyTorch, and are
also mirrored into the instance ``__dict__`` (each ``_Registry`` keeps the mirror in step), so
that ``self.weight`` in ``forward`` is a plain attribute read instead of a ``__getattr__``
fallback.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .registration import Module

_REGISTRIES = ("_parameters", "_buffers", "_modules")


class _Registry(dict):
    """A dict of registered values that mirrors every change into its module's ``__dict__``."""

    __slots__ = ("_owner",)

    def __init__(self, owner: Module | None = None, items=()) -> None:
        super().__init__(items)
        self._owner = None if owner is None else weakref.ref(owner)
        if owner is not None:
            owner.__dict__.update(self)

    def _mirror(self) -> dict | None:
        ref = self._owner
        if ref is None:
            return None
        owner = ref()
        return None if owner is None else owner.__dict__

    def __setitem__(self, key, value) -> None:
        dict.__setitem__(self, key, value)
        d = self._mirror()
        if d is not None:
            d[key] = value

    def __delitem__(self, key) -> None:
        dict.__delitem__(self, key)
        d = self._mirror()
        if d is not None:
            d.pop(key, None)

    def pop(self, key, *default):
        had = key in self
        value = dict.pop(self, key, *default)
        d = self._mirror()
        if had and d is not None:
            d.pop(key, None)
        return value

    def popitem(self):
        key, value = dict.popitem(self)
        d = self._mirror()
        if d is not None:
            d.pop(key, None)
        return key, value

    def clear(self) -> None:
        d = self._mirror()
        if d is not None:
            for key in self:
                d.pop(key, None)
        dict.clear(self)

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *args, **kwargs) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def __ior__(self, other):
        self.update(other)
        return self

    def __reduce__(self):
        return (dict, (dict(self),))  # pickles and deep copies as a plain dict

    def __copy__(self) -> dict:
        return dict(self)
