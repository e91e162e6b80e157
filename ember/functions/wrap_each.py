"""``wrap_each``: replace functions in a namespace by wrappers of them, an alias (one function
under two names) staying one object. ``out=`` and NumPy's argument names are put on the
``ember.*`` functions this way.

>>> def f(x):
...     return x
>>> ns = {"f": f, "g": f}
>>> wrap_each(ns, ["f", "g"], lambda fn, name: lambda x: fn(x) + 1)
>>> ns["f"] is ns["g"], ns["g"](1)
(True, 2)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable


def wrap_each(namespace: dict, names: Iterable[str], make: Callable[[Callable, str], Callable]):
    """Set each function ``namespace[name]`` (plain functions only; missing names are skipped)
    to ``make(fn, name)``, made once per function object.

    >>> ns = {"neg": lambda x: -x}
    >>> wrap_each(ns, ["neg", "absent"], lambda fn, name: lambda x: (name, fn(x)))
    >>> ns["neg"](2)
    ('neg', -2)
    """
    wrapped: dict[int, Callable] = {}
    for name in names:
        fn = namespace.get(name)
        if not inspect.isfunction(fn):
            continue
        if id(fn) not in wrapped:
            wrapped[id(fn)] = make(fn, name)
        namespace[name] = wrapped[id(fn)]


__all__ = ["wrap_each"]
