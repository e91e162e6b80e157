"""Device kernels as overrides: one table, and one lookup that every path running an op uses.

An op has one contract: its ``forward(xp, *arrays)`` is the reference body, NumPy code that CuPy
runs as well. Where that code is not fast enough on a device (NumPy's five passes for softmax,
where one CUDA kernel reads each row once), a kernel is registered as an *override* of the op
for that device type, beside the op:

    @overrides.register(Softmax, "cuda")
    def _softmax_cuda(op, xp, x):
        return rows.softmax(xp, x, op.dim, log=False)

An override gets the op (its static parameters), ``xp`` and the arrays, and returns the result,
or ``NotImplemented`` to decline (a dtype, layout or library it does not serve: a stand-in CuPy
without kernels, cuDNN switched off); the op's ``forward`` then runs. So an override is always
optional, and the tests check each one against the forward it replaces.

Where the choice is made: ``ember.ops.base.apply`` (eager), ``ember.static.executor.Plan``
(static and compiled graphs, CUDA-graph capture), the fusion and folding passes, all through
``table(device_type)[type(op)]`` (one dict lookup; ``run`` and ``bind`` wrap it). On the CPU
there is no lookup at all while no CPU override is registered (``live``).

An optimizer's per-parameter rule (its ``update``, written in ember ops) is overridable the
same way: ``table(device_type, "update")`` finds the override registered for the optimizer
class, which ``Optimizer.step`` calls as ``fn(opt, xp, p, g, state, group)`` on the arrays
(returning ``NotImplemented`` to decline; the rule runs then).

Keys: an override belongs to the class whose body (``forward``, or the marked rule) it replaces.
A subclass that inherits that body inherits the override; one that defines its own body does
not. The class may be named by its qualified name (``"ember.optim.adam.Adam"``) where the module
that registers must not import it: the kernels in ``ember/backend/kernels`` register for
``ember.optim`` that way, so nothing in the backend points up.

>>> import numpy as np
>>> class Twice:
...     def forward(self, xp, x):
...         return x * 2
>>> @register(Twice, "cpu")
... def _twice_declines_odd(op, xp, x):
...     return NotImplemented if x.size % 2 else x + x
>>> run(Twice(), np, np.arange(2)), run(Twice(), np, np.arange(3))
(array([0, 2]), array([0, 2, 4]))
>>> unregister(Twice, "cpu")
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

DEVICE_TYPES = ("cpu", "cuda")

_registered: dict[str, dict[str, Callable]] = {d: {} for d in DEVICE_TYPES}
_tables: dict[tuple[str, str], _Table] = {}
_ndarray = np.ndarray


def qualname(cls) -> str:
    """The key of a class: ``module.QualifiedName``.

    >>> qualname(dict)
    'builtins.dict'
    """
    return f"{cls.__module__}.{cls.__qualname__}"


class _Table(dict):
    """``cls -> override or None`` for one device type and one body name (``forward`` for ops),
    filled on first use of each class, emptied whenever the registrations change."""

    __slots__ = ("device_type", "body")

    def __init__(self, device_type: str, body: str) -> None:
        super().__init__()
        self.device_type, self.body = device_type, body

    def __missing__(self, cls):
        found = None
        for c in cls.__mro__:
            if self.body in c.__dict__:  # the class whose body the instances run
                found = _registered[self.device_type].get(qualname(c))
                break
        self[cls] = found
        return found


def table(device_type: str, body: str = "forward") -> _Table:
    """The live lookup table ``cls -> override or None`` of ``device_type`` for the method
    ``body`` (hot paths keep a reference to it; it stays the same object).

    >>> table("cuda")[int] is None
    True
    """
    t = _tables.get((device_type, body))
    if t is None:
        _check(device_type)
        t = _tables[(device_type, body)] = _Table(device_type, body)
    return t


def _check(device_type: str) -> None:
    if device_type not in DEVICE_TYPES:
        raise ValueError(
            f"overrides: unknown device type {device_type!r} (expected one of {DEVICE_TYPES})"
        )


def register(target, device_type: str = "cuda"):
    """Decorator: register ``fn`` as the ``device_type`` override of ``target`` (a class, or its
    qualified name); a second registration for the same pair replaces the first."""
    _check(device_type)
    key = target if isinstance(target, str) else qualname(target)

    def decorate(fn: Callable) -> Callable:
        _registered[device_type][key] = fn
        _changed()
        return fn

    return decorate


def unregister(target, device_type: str = "cuda") -> None:
    """Remove the override of ``target`` on ``device_type`` (no error if there is none)."""
    key = target if isinstance(target, str) else qualname(target)
    if _registered[device_type].pop(key, None) is not None:
        _changed()


def _changed() -> None:
    for t in _tables.values():
        t.clear()


def registered(device_type: str = "cuda") -> dict[str, Callable]:
    """``{qualified class name: override}`` for ``device_type`` (a copy, for listing and tests;
    ops register theirs when their module is imported, as ``import ember`` does).

    >>> import ember
    >>> "ember.ops.softmax.Softmax" in registered("cuda")
    True
    """
    return dict(_registered[device_type])


def live(device_type: str) -> dict[str, Callable]:
    """The registrations of ``device_type`` themselves (read-only; for hot paths that skip the
    lookup while there are none: ``if live("cpu"): ...`` costs one truth test; the CPU's only
    override, compiled graphs' fused elementwise programs, registers when ``ember.static``'s
    passes are first imported).

    >>> live("cuda") is live("cuda")
    True
    """
    return _registered[device_type]


def device_type(xp) -> str:
    """``'cpu'`` for NumPy, ``'cuda'`` for CuPy (or a stand-in with its surface)."""
    return "cpu" if xp is np else "cuda"


def run(op, xp, *arrays, out=None):
    """``op``'s result on ``xp``'s device: its override there, or ``op.forward`` when there is
    none or it declines. With ``out`` (an op whose forward takes it), the result is written
    there: by the override only where it takes ``out=`` too (its ``writes_out`` attribute)."""
    return into(table(device_type(xp))[type(op)], op, xp, arrays, out)


def into(fn, op, xp, arrays, out=None):
    """``run`` with the override ``fn`` already looked up (None: there is none)."""
    if fn is not None and (out is None or getattr(fn, "writes_out", False)):
        r = fn(op, xp, *arrays) if out is None else fn(op, xp, *arrays, out=out)
        if r is not NotImplemented:
            return r
    return op.forward(xp, *arrays) if out is None else op.forward(xp, *arrays, out=out)


def bind(op, device_type: str) -> Callable:
    """A function ``(xp, *arrays)`` computing ``op`` on ``device_type``: ``op.forward`` itself
    when no override is registered (what graph executors store per node)."""
    fn = table(device_type)[type(op)]
    if fn is None:
        return op.forward
    return functools.partial(_first, fn, op)


def _first(fn, op, xp, *arrays):
    out = fn(op, xp, *arrays)
    return op.forward(xp, *arrays) if out is NotImplemented else out


def unbind(step: Callable):
    """``(override, op)`` for a function ``bind`` made around an override, else None (the
    function is the op's ``forward``): for executors that call the two themselves.

    >>> from ember.ops.elementwise import ADD, EXP
    >>> unbind(bind(EXP, "cpu")) is None
    True
    >>> unbind(bind(ADD, "cpu"))[1] is ADD
    True
    """
    if type(step) is functools.partial and step.func is _first:
        return step.args
    return None


__all__ = [
    "DEVICE_TYPES",
    "register",
    "unregister",
    "registered",
    "live",
    "table",
    "run",
    "into",
    "bind",
    "unbind",
    "device_type",
    "qualname",
]
