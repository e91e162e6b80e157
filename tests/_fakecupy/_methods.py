"""The rest of the fake ``cupy.ndarray``: operators (CuPy's: each one a ufunc call) and every
other method of CuPy's ndarray, bound against its signature and run by NumPy."""

from __future__ import annotations

import numpy as np

from . import _manifest
from ._array import _d2h, check, ndarray, ns, raw
from ._functions import run

_BINARY = {
    "add": "add",
    "sub": "subtract",
    "mul": "multiply",
    "truediv": "true_divide",
    "div": "true_divide",
    "floordiv": "floor_divide",
    "mod": "remainder",
    "pow": "power",
    "lshift": "left_shift",
    "rshift": "right_shift",
    "and": "bitwise_and",
    "or": "bitwise_or",
    "xor": "bitwise_xor",
    "divmod": "divmod",
    "matmul": "matmul",
}
_COMPARE = {
    "lt": "less",
    "le": "less_equal",
    "gt": "greater",
    "ge": "greater_equal",
    "eq": "equal",
    "ne": "not_equal",
}
_UNARY = {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}


def _defer(other) -> bool:
    """CuPy's ``_should_use_rop``: let an object of higher ``__array_priority__`` answer."""
    if type(other) is ndarray or isinstance(other, np.ndarray):
        return False
    return getattr(other, "__array_priority__", 0) > ndarray.__array_priority__


def _binary(fn: str, reflected: bool):
    def op(self, other, *modulo):
        if _defer(other):
            return NotImplemented
        f = getattr(ns(), fn)
        return f(other, self) if reflected else f(self, other)

    return op


def _inplace(fn: str):
    def op(self, other):
        getattr(ns(), fn)(self, other, out=self)
        return self

    return op


def _unary(fn: str):
    def op(self):
        return getattr(ns(), fn)(self)

    return op


# NumPy has no method (or another signature) for these CuPy methods.
def _argext(name):
    def call(a, axis=None, out=None, dtype=None, keepdims=False):
        r = getattr(np, name)(a, axis=axis, out=out, keepdims=keepdims)
        return r if dtype is None else np.asarray(r).astype(dtype)

    return call


_IMPL = {
    "ptp": lambda a, axis=None, out=None, keepdims=False: np.ptp(a, axis, out, keepdims),
    "argmax": _argext("argmax"),
    "argmin": _argext("argmin"),
    "dumps": lambda a: a.dumps(),
}
_VIEWS = {"transpose", "swapaxes", "squeeze", "diagonal"}
_IN_PLACE = {"sort", "partition", "put"}
_HOST = {"dump", "dumps", "tofile"}
_DATA_DEPENDENT = {"nonzero", "compress"}


def _method(name: str, sig: str | None):
    impl = _IMPL.get(name) or (lambda a, *args, **kw: getattr(a, name)(*args, **kw))
    qual = f"cupy.ndarray.{name}"

    def method(self, *args, **kwargs):
        _manifest.bind(qual, sig, args, kwargs)
        if name in _VIEWS:
            return ndarray._view(impl(self._a, *args, **kwargs), self)
        cur = check(((self,) + args, kwargs))
        if name in _HOST or name in _DATA_DEPENDENT:
            _d2h()
        if name in _IN_PLACE:
            self._write(lambda: impl(self._a, *raw(args), **raw(kwargs)))
            return None
        return run(lambda: impl(self._a, *raw(args), **raw(kwargs)), ((self,) + args, kwargs), cur)

    method.__name__ = name
    method.__qualname__ = f"ndarray.{name}"
    return method


def _install() -> None:
    for short, fn in _BINARY.items():
        setattr(ndarray, f"__{short}__", _binary(fn, False))
        setattr(ndarray, f"__r{short}__", _binary(fn, True))
        setattr(ndarray, f"__i{short}__", _inplace(fn))
    for short, fn in _COMPARE.items():
        setattr(ndarray, f"__{short}__", _binary(fn, False))
    for short, fn in _UNARY.items():
        setattr(ndarray, f"__{short}__", _unary(fn))
    names = _manifest.members("cupy.ndarray")
    for dunder in [n for n in vars(ndarray) if n.startswith("__") and n.endswith("__")]:
        if dunder not in names and dunder not in _KEEP:
            delattr(ndarray, dunder)  # an operator CuPy's ndarray lacks (__imatmul__, ...)
    for name, entry in names.items():
        if entry["kind"] == "method" and not name.startswith("__") and name not in vars(ndarray):
            setattr(ndarray, name, _method(name, entry.get("signature")))


_KEEP = {"__module__", "__qualname__", "__doc__", "__slots__", "__weakref__", "__dict__",
         "__annotations__", "__firstlineno__", "__static_attributes__"}  # fmt: skip

_install()
