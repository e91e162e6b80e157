"""Devices and their array modules: ``cpu`` is NumPy, ``cuda[:N]`` is CuPy.

Only this package imports an array library by name; everything else gets ``xp`` from here.

>>> import ember
>>> ember.device("cpu")
device(type='cpu')
>>> ember.device("cuda:1")
device(type='cuda', index=1)
"""

from __future__ import annotations

import threading

import numpy as np

from .._errors import DeviceError
from . import cuda as _cuda
from . import malloc as _malloc

_malloc.tune()  # keep freed host memory for the next step (glibc; EMBER_MALLOC_TUNE=0 opts out)


class Device:
    """Where a tensor lives: ``device('cpu')``, ``device('cuda')``, ``device('cuda', 1)``."""

    __slots__ = ("type", "index")

    def __new__(cls, spec="cpu", index: int | None = None):
        if isinstance(spec, Device):
            return spec
        if isinstance(spec, int):
            spec, index = "cuda", spec
        if not isinstance(spec, str):
            raise DeviceError(f"device: expected a string like 'cpu' or 'cuda:0', got {spec!r}")
        kind, _, idx = spec.partition(":")
        if kind not in ("cpu", "cuda"):
            raise DeviceError(
                f"device: unknown device type {kind!r} (ember knows 'cpu' and 'cuda')"
            )
        if idx:
            if not idx.isdigit():
                raise DeviceError(f"device: bad device index in {spec!r}")
            index = int(idx)
        if kind == "cpu":
            if index is not None and index != 0:
                raise DeviceError(f"device: cpu has only index 0, got {index}")
            return CPU
        self = object.__new__(cls)
        self.type = "cuda"
        self.index = index
        return self

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = Device(other)
        if not isinstance(other, Device):
            return NotImplemented
        return self.type == other.type and (self.index or 0) == (other.index or 0)

    def __hash__(self) -> int:
        return hash((self.type, self.index or 0))

    @property
    def xp(self):
        """The array module for this device (numpy or cupy)."""
        if self.type == "cpu":
            return np
        from . import cuda

        return cuda.xp()


CPU = object.__new__(Device)
CPU.type = "cpu"
CPU.index = None

device = Device


_CUDA: dict[int, Device] = {}


def cuda_device(index: int) -> Device:
    """The (cached) ``Device('cuda', index)``."""
    dev = _CUDA.get(index)
    if dev is None:
        dev = _CUDA[index] = Device("cuda", index)
    return dev


_defaults = threading.local()  # per thread, as PyTorch's default device is


def default_device() -> Device | None:
    """The device ``set_default_device`` chose in this thread, or None (the CPU): where the
    creation functions put a tensor made without ``device=``."""
    return getattr(_defaults, "device", None)


def set_default_device(device) -> None:
    """Make creation functions called without ``device=`` (``zeros``, ``tensor``, ``randn``,
    ``arange``, layers' parameters...) create on ``device``; None restores the CPU. Set per
    thread, as in PyTorch. As PyTorch's, it checks only the spelling: ``'cuda'`` without a GPU
    is accepted, and the first tensor created raises ``DeviceError``.

    >>> import ember
    >>> ember.set_default_device("cpu")
    >>> ember.zeros(2).device, ember.get_default_device()
    (device(type='cpu'), device(type='cpu'))
    >>> ember.set_default_device(None)
    """
    if device is None:
        _defaults.device = None
        return
    dev = Device(device)
    _defaults.device = None if dev == CPU else dev


def get_default_device() -> Device:
    """The device creation functions use without ``device=``: the CPU unless
    ``set_default_device`` chose another (``cuda`` is given with the current GPU's index).

    >>> import ember
    >>> ember.get_default_device()
    device(type='cpu')
    """
    dev = default_device()
    if dev is None:
        return CPU
    if dev.type == "cuda" and dev.index is None:
        return cuda_device(_cuda.current_device())
    return dev


def device_of(array) -> Device:
    """The device an array lives on (asks the cuda backend about anything not NumPy)."""
    if type(array) is np.ndarray:
        return CPU
    index = _cuda.index_of(array)
    if index is None:  # a traced value (static graphs' Symbol) carries the device it stands for
        dev = getattr(array, "device", None)
        if isinstance(dev, Device):
            return dev
        index = getattr(dev, "id", None)
    return CPU if index is None else cuda_device(index)


def xp_of(array):
    """The array module that owns ``array``."""
    if type(array) is np.ndarray:
        return np
    if _cuda.is_cupy_array(array):
        return _cuda._cupy
    return np


def full(shape: tuple, value, np_dtype, dev: Device):
    """A new array of ``shape`` on ``dev`` filled with ``value`` (uninitialized when None)."""
    if dev.type == "cpu":
        return np.empty(shape, np_dtype) if value is None else np.full(shape, value, np_dtype)
    return _cuda.full(shape, value, np_dtype, dev.index)


def to_device(array, dev: Device):
    """Copy ``array`` onto ``dev`` (or return it if it is there already).

    ``cuda`` without an index means the current GPU, as in PyTorch.
    """
    if dev.type == "cpu":
        return array if _cuda.index_of(array) is None else _cuda.to_host(array)
    index = _cuda.resolve(dev.index)
    if _cuda.index_of(array) == index:
        return array
    return _cuda.to_gpu(array, index)
