"""``ember.accelerator`` (PyTorch 2.6+'s ``torch.accelerator``): the one accelerator, if any.

ember's accelerator is CUDA (``ember.cuda``, this package's ``cuda.py``): these functions are
that module's answers under PyTorch's device-neutral names. Without a GPU there is none, as in
PyTorch's CPU build: ``is_available()`` is False, ``current_accelerator()`` None,
``device_count()`` 0, and the functions that need a device raise ``DeviceError`` (a
``RuntimeError``, as PyTorch's is) with PyTorch's message. ``ember.accelerator`` is a name of
this module, registered by ``ember/_aliases.py``.

>>> import ember
>>> device = ember.accelerator.current_accelerator() if ember.accelerator.is_available() else "cpu"
>>> ember.zeros(2, device=device).shape
ember.Size([2])
"""

from __future__ import annotations

from .._errors import DeviceError
from . import cuda as _cuda

NONE_AVAILABLE = "Cannot access accelerator device when none is available."


def is_available() -> bool:
    """Whether an accelerator (a GPU ember can use) is present.

    >>> import ember
    >>> ember.accelerator.is_available() == ember.cuda.is_available()
    True
    """
    return _cuda.is_available()


def current_accelerator(check_available: bool = False):
    """``device(type='cuda')`` when a GPU can be used, else None (ember's CUDA support is
    usable only where CuPy sees a GPU, so ``check_available`` changes nothing).

    >>> import ember
    >>> acc = ember.accelerator.current_accelerator()
    >>> acc is None or acc.type == "cuda"
    True
    """
    if not _cuda.is_available():
        return None
    from . import Device

    return Device("cuda")


def device_count() -> int:
    """How many accelerators there are (0 without a GPU).

    >>> import ember
    >>> ember.accelerator.device_count() == ember.cuda.device_count()
    True
    """
    return _cuda.device_count() if _cuda.is_available() else 0


def _require() -> None:
    if not _cuda.is_available():
        raise DeviceError(NONE_AVAILABLE)


def _index(device) -> int | None:
    """The GPU index of ``device``: an int, ``'cuda:1'``, an ``ember.device`` (or None)."""
    from . import Device

    if device is None or isinstance(device, int):
        return device
    dev = Device(device)
    if dev.type != "cuda":
        raise DeviceError(f"{dev.type} doesn't match the current accelerator cuda.")
    return dev.index


def current_device_index() -> int:
    """The index of the current accelerator (raises ``DeviceError`` without one).

    >>> import ember
    >>> if ember.accelerator.is_available():
    ...     assert ember.accelerator.current_device_index() == ember.cuda.current_device()
    """
    _require()
    return _cuda.current_device()


def set_device_index(device, /) -> None:
    """Make accelerator ``device`` (an index, ``'cuda:1'`` or a device) current; None does
    nothing.

    >>> import ember
    >>> if ember.accelerator.is_available():
    ...     ember.accelerator.set_device_index(0)
    """
    _require()
    index = _index(device)
    if index is not None:
        _cuda.set_device(index)


def synchronize(device=None, /) -> None:
    """Wait for the work queued on an accelerator (the current one by default).

    >>> import ember
    >>> if ember.accelerator.is_available():
    ...     ember.accelerator.synchronize()
    """
    _require()
    _cuda.synchronize(_index(device))


class device_index:
    """Context manager: make accelerator ``device`` current inside a block (None: no change).

    >>> import ember
    >>> with ember.accelerator.device_index(None):
    ...     pass
    """

    def __init__(self, device, /) -> None:
        self.index = device
        self._prev: int | None = None

    def __enter__(self):
        if self.index is not None:
            _require()
            self._prev = _cuda.current_device()
            set_device_index(self.index)
        return self

    def __exit__(self, *exc) -> bool:
        if self._prev is not None:
            _cuda.set_device(self._prev)
        return False


__all__ = [
    "current_accelerator",
    "current_device_index",
    "device_count",
    "device_index",
    "is_available",
    "set_device_index",
    "synchronize",
]
