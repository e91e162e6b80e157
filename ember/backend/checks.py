"""Checks of device data that never stall a step: an error found on a GPU is raised at the next
point that waits for the device anyway.

A check is a 0-d boolean array, True when something is wrong (a class index out of range), and
a function building the error to raise (it may read the data: it runs where the host waits for
the device anyway). On NumPy arrays the check is decided at once. On a GPU, asking would be a
device-to-host transfer in the middle of the step (the stream stalls; a CUDA graph cannot be
captured), so the check is queued, per thread, and decided when a value next comes back to the
host: ``Tensor.item()``, ``.cpu()``, ``.numpy()``, ``.tolist()``, ``bool()``, printing, or
``ember.cuda.synchronize()``. Then every queued flag comes back, and the first failed check
raises its error, naming the op as an immediate check would. As PyTorch's device-side asserts,
the error arrives later than the call that caused it; unlike them, it names the op and the
value, and the process can go on.

>>> import numpy as np
>>> defer(np.asarray(False), lambda: ValueError("never built"))
>>> defer(np.asarray(True), lambda: ValueError("bad"))
Traceback (most recent call last):
ValueError: bad
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

_LIMIT = 1024  # queued checks before one is forced (bounds what a loop without reads holds)


class _Queue(threading.local):
    def __init__(self) -> None:
        self.items: list = []


_queue = _Queue()


def defer(flag, error: Callable[[], BaseException]) -> None:
    """Raise ``error()`` if ``flag`` (a 0-d boolean array) is true: now for a NumPy flag, at
    the next read from the device for a device one."""
    if isinstance(flag, (np.ndarray, np.generic)):
        if flag:
            raise error()
        return
    items = _queue.items
    items.append((flag, error))
    if len(items) > _LIMIT:
        flush()


def flush() -> None:
    """Decide the queued checks (one transfer of their flags): raise the first failed one's
    error. ``ember.backend.cuda.to_host`` and ``synchronize`` call this first."""
    items = _queue.items
    if not items:
        return
    _queue.items = []
    for flag, error in items:
        if bool(flag.get()):
            raise error()


def take() -> list:
    """The queued checks, removed from the queue (a CUDA graph keeps those it captured and
    queues them again after each replay, see ``requeue``)."""
    items, _queue.items = _queue.items, []
    return items


def requeue(items: list) -> None:
    """Queue ``items`` (from ``take``) again: their flags were just recomputed."""
    _queue.items.extend(items)


__all__ = ["defer", "flush", "requeue", "take"]
