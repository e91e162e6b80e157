"""Fake modules built from the manifest: a name exists exactly when CuPy has it.

Each manifest name resolves, on first use, to the fake's own object when it has one
(``overrides``), else by kind: a ufunc from the manifest's loop table, a function run by NumPy
(``_functions.generic``), NumPy's own object where CuPy re-exports it (dtypes, ``newaxis``,
``s_``), the recorded value of a constant, a fake submodule, or a stand-in that raises
``NotImplementedError`` when used (a CuPy feature the fake does not emulate). Any other name
raises ``AttributeError`` as CuPy does.
"""

from __future__ import annotations

import importlib
import types

import numpy as np

from . import _functions, _manifest
from ._ufunc import ufunc

_HOST_OK_PREFIXES = ("from", "load", "genfromtxt")


class Unemulated:
    """A CuPy object the fake does not emulate: using it raises."""

    def __init__(self, qual: str) -> None:
        self._qual = qual

    def _refuse(self, *args, **kwargs):
        raise NotImplementedError(f"fakecupy: {self._qual} exists in CuPy but is not emulated")

    __call__ = _refuse

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotImplementedError(f"fakecupy: {self._qual}.{name} is not emulated")

    def __repr__(self) -> str:
        return f"<fakecupy: {self._qual} (not emulated)>"


def _stub_class(qual: str) -> type:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"fakecupy: {qual} exists in CuPy but is not emulated")

    return type(qual.rsplit(".", 1)[-1], (), {"__init__": __init__, "__module__": "fakecupy"})


def resolve(path: str, name: str, entry: dict, overrides: dict, submodules: dict):
    """The fake's object for manifest name ``path.name``."""
    qual = f"{path}.{name}"
    if name in overrides:
        return overrides[name]
    kind = entry["kind"]
    if kind == "ufunc":
        return ufunc(qual, _manifest.UFUNCS[qual])
    if kind == "function":
        special = _functions.SPECIAL.get(path, {}).get(name)
        if special is not None:
            return special
        np_fn = _functions.numpy_impl(path, name)
        if np_fn is None:
            return _functions.missing(qual)
        host_ok = name.startswith(_HOST_OK_PREFIXES)
        return _functions.generic(path, name, entry, np_fn, host_ok)
    if kind == "constant":
        return entry["value"] if "value" in entry else float(entry["repr"])
    if kind in ("class", "object") and entry.get("numpy"):
        if hasattr(np, name):
            return getattr(np, name)
        mod, _, attr = entry["qualname"].rpartition(".")  # moved within NumPy (AxisError)
        return getattr(importlib.import_module(mod), attr)
    if kind == "class":
        return _stub_class(qual)
    if kind == "module":
        sub = entry["module"]
        if sub in submodules:
            return submodules[sub]()
        return Unemulated(sub)
    return Unemulated(qual)


def getter(path: str, overrides: dict, submodules: dict):
    """A module ``__getattr__`` serving ``path``'s manifest names."""
    entries = _manifest.NAMESPACES[path]
    cache: dict = {}

    def __getattr__(name: str):
        try:
            return cache[name]
        except KeyError:
            pass
        entry = entries.get(name)
        if entry is None:
            raise AttributeError(f"module '{path}' has no attribute '{name}'")
        value = cache[name] = resolve(path, name, entry, overrides, submodules)
        return value

    __getattr__.cache = cache
    return __getattr__


def module(path: str, overrides: dict, submodules: dict) -> types.ModuleType:
    """A fake module for manifest namespace ``path``."""
    mod = types.ModuleType(path, f"fakecupy: {path} (names from the manifest)")
    mod.__getattr__ = getter(path, overrides, submodules)
    mod.__dir__ = lambda: sorted(_manifest.NAMESPACES[path])
    return mod
