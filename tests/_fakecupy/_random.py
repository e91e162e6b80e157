"""The fake ``cupy.random``: ``RandomState`` draws on the GPU current when it was made.

Numbers differ from NumPy's for the same seed (as cuRAND's do). The float draws take CuPy's
``dtype`` argument (float32 or float64 only); methods of CuPy's ``RandomState`` not written here
exist and raise ``NotImplementedError``.
"""

from __future__ import annotations

import numpy as np

from . import _manifest
from ._array import peer_error, wrap
from ._gpu import state

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _float_dtype(dtype, name: str) -> np.dtype:
    dt = np.dtype(dtype)
    if dt not in _FLOATS:
        raise TypeError(f"cupy.random.RandomState.{name}: dtype {dt} is not supported (float32 "
                        "or float64 only)")  # fmt: skip
    return dt


class RandomState:
    """``cupy.random.RandomState`` (see the module docstring)."""

    def __init__(self, seed=None, method=None) -> None:
        self._dev = state["device"]
        self.seed(seed)

    def seed(self, seed=None) -> None:
        seed = None if seed is None else (int(seed) ^ 0x5EED_CAFE) % 2**64  # not NumPy's numbers
        self._g = np.random.Generator(np.random.PCG64(seed))

    def _here(self, name: str) -> int:
        if state["device"] != self._dev:
            raise peer_error(self._dev, state["device"])
        return self._dev

    def random_sample(self, size=None, dtype=float):
        dt = _float_dtype(dtype, "random_sample")
        return wrap(np.asarray(self._g.random(size, dtype=dt)), self._here("random_sample"))

    def rand(self, *size, **kwargs):
        return self.random_sample(size=size or None, **kwargs)

    def standard_normal(self, size=None, dtype=float):
        dt = _float_dtype(dtype, "standard_normal")
        dev = self._here("standard_normal")
        return wrap(np.asarray(self._g.standard_normal(size, dtype=dt)), dev)

    def randn(self, *size, **kwargs):
        return self.standard_normal(size=size or None, **kwargs)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=float):
        dt = _float_dtype(dtype, "normal")
        x = self._g.normal(np.asarray(loc), np.asarray(scale), size).astype(dt)
        return wrap(np.asarray(x), self._here("normal"))

    def uniform(self, low=0.0, high=1.0, size=None, dtype=float):
        dt = _float_dtype(dtype, "uniform")
        x = self._g.uniform(low, high, size).astype(dt)
        return wrap(np.asarray(x), self._here("uniform"))

    def randint(self, low, high=None, size=None, dtype="l"):
        x = self._g.integers(low, high, size, dtype=np.dtype(dtype))
        return wrap(np.asarray(x), self._here("randint"))

    def permutation(self, num):
        if not isinstance(num, (int, np.integer)):
            raise TypeError("fakecupy: RandomState.permutation of an array is not emulated")
        return wrap(self._g.permutation(num), self._here("permutation"))


def _missing_method(name: str):
    def call(self, *args, **kwargs):
        raise NotImplementedError(f"fakecupy: cupy.random.RandomState.{name} is not emulated")

    call.__name__ = name
    return call


for _name, _entry in _manifest.members("cupy.random.RandomState").items():
    if not _name.startswith("_") and not hasattr(RandomState, _name):
        setattr(RandomState, _name, _missing_method(_name))

_global: list = []


def get_random_state() -> RandomState:
    if not _global:
        _global.append(RandomState())
    return _global[0]


def seed(seed=None) -> None:
    _global[:] = [RandomState(seed)]


def _module_draw(name: str):
    def call(*args, **kwargs):
        return getattr(get_random_state(), name)(*args, **kwargs)

    call.__name__ = name
    return call


RANDOM = {
    "RandomState": RandomState,
    "get_random_state": get_random_state,
    "seed": seed,
    "reset_states": lambda: _global.clear(),
}
for _name in ("random_sample", "rand", "randn", "standard_normal", "normal", "uniform",
              "randint", "permutation"):  # fmt: skip
    RANDOM[_name] = _module_draw(_name)
RANDOM["random"] = RANDOM["sample"] = RANDOM["ranf"] = _module_draw("random_sample")
