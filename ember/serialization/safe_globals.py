"""The user's allowlist for ``load(weights_only=True)``, as ``torch.serialization`` keeps it.

An entry is a class or function (allowed under ``{__module__}.{__qualname__}``) or a pair
``(obj, "full.path")`` naming the path the pickle uses. The list is process-wide, as PyTorch's.

>>> import collections, ember
>>> with ember.serialization.safe_globals([collections.defaultdict]):
...     ember.serialization.get_safe_globals()
[<class 'collections.defaultdict'>]
>>> ember.serialization.get_safe_globals()
[]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SafeGlobal = Callable | tuple  # an object, or (object, "module.qualname")
_marked: set = set()


def add_safe_globals(safe_globals: list[SafeGlobal]) -> None:
    """Allow these globals in ``ember.load(weights_only=True)`` (classes may then be built and
    have their state set, functions called), as ``torch.serialization.add_safe_globals``.

    >>> import ember
    >>> class Point:
    ...     pass
    >>> ember.serialization.add_safe_globals([Point])
    >>> Point in ember.serialization.get_safe_globals()
    True
    >>> ember.serialization.clear_safe_globals()
    """
    global _marked
    _marked = _marked.union(set(safe_globals))


def get_safe_globals() -> list[SafeGlobal]:
    """The globals the user allowed (``add_safe_globals``, open ``safe_globals`` blocks).

    >>> import ember
    >>> ember.serialization.get_safe_globals()
    []
    """
    return list(_marked)


def clear_safe_globals() -> None:
    """Forget every global the user allowed.

    >>> import ember
    >>> ember.serialization.add_safe_globals([len]); ember.serialization.clear_safe_globals()
    >>> ember.serialization.get_safe_globals()
    []
    """
    global _marked
    _marked = set()


class safe_globals:  # noqa: N801  (torch.serialization.safe_globals is a lowercase class)
    """Context manager allowing globals for the ``ember.load`` calls in its block.

    >>> import collections, ember
    >>> with ember.serialization.safe_globals([collections.defaultdict]):
    ...     len(ember.serialization.get_safe_globals())
    1
    """

    def __init__(self, safe_globals: list[SafeGlobal]) -> None:
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc: object) -> None:
        global _marked
        _marked = _marked - set(self.safe_globals)


def user_allowed() -> dict[str, Any]:
    """The allowlist by path (``module.qualname``), checked as PyTorch checks it."""
    out: dict[str, Any] = {}
    for entry in _marked:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError(
                    "Expected tuple of length 2 (global, str of callable full path), but got "
                    f"tuple of length: {len(entry)}"
                )
            if type(entry[1]) is not str:
                raise TypeError(
                    "Expected second item in tuple to be str of callable full path, but got: "
                    f"{type(entry[1])}"
                )
            out[entry[1]] = entry[0]
        else:
            out[f"{entry.__module__}.{entry.__qualname__}"] = entry
    return out
