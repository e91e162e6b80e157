"""NumPy's argument names, accepted as PyTorch accepts them: ``axis`` for ``dim`` and
``keepdims`` for ``keepdim``, in every ``ember.*`` function and Tensor method that has the
PyTorch name (``x.sum(1, keepdims=True)``, as makemore writes it). PyTorch's argument parser
does this for its functions and methods (``nn.functional`` is plain Python there and takes
none); it also maps ``x``/``a``/``x1`` to ``input`` and ``x2`` to ``other``, which ember
leaves out: they would put a wrapper on every binary operator for names nobody passes.

>>> import ember
>>> x = ember.ones(2, 3)
>>> x.sum(axis=1, keepdims=True).shape
ember.Size([2, 1])
>>> ember.argmax(x, axis=0)
tensor([0, 0, 0])
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

from .wrap_each import wrap_each

ALIASES = {"axis": "dim", "keepdims": "keepdim"}


def accept_numpy_names(fn: Callable) -> Callable:
    """``fn``, or ``fn`` wrapped to take the NumPy names of the parameters it has (and does not
    have under those names already).

    >>> def total(input, dim=None, keepdim=False):
    ...     return (input, dim, keepdim)
    >>> accept_numpy_names(total)(1, axis=0, keepdims=True)
    (1, 0, True)
    """
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    names = {a: n for a, n in ALIASES.items() if n in params and a not in params}
    if not names:
        return fn

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if kwargs:
            for alias in names.keys() & kwargs.keys():
                name = names[alias]
                if name in kwargs:
                    raise TypeError(
                        f"{fn.__name__}() got values for both '{name}' and its NumPy name '{alias}'"
                    )
                kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)

    return call


def add_numpy_names(namespace: dict, names) -> None:
    """Wrap each function of ``names`` in ``namespace`` with ``accept_numpy_names``; aliases
    (one function under two names) stay one object.

    >>> import ember
    >>> ns = {"sum": ember.functions.reduce.sum, "total": ember.functions.reduce.sum}
    >>> add_numpy_names(ns, ["sum", "total"])
    >>> ns["sum"] is ns["total"], ns["sum"](ember.ones(2, 2), axis=0)
    (True, tensor([2., 2.]))
    """
    wrap_each(namespace, names, lambda fn, _name: accept_numpy_names(fn))


__all__ = ["ALIASES", "accept_numpy_names", "add_numpy_names"]
