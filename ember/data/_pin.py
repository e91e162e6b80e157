"""Page-locked (pinned) host memory and batch prefetch onto a GPU, for the DataLoader.

A copy from ordinary (pageable) host memory to a GPU is staged through a driver buffer and
blocks the host; from page-locked memory it is one DMA the host only enqueues, so it can
overlap GPU work. Three pieces:

- ``pin(x)`` / ``Tensor.pin_memory()``: a copy of a CPU tensor (or a nest of them) in pinned
  memory from ``cupyx.empty_pinned``; ``Tensor.is_pinned()`` says whether a tensor's memory
  is. Without a GPU (no CuPy, or no device) there is nothing to pin: ``pin_memory()`` returns
  the tensor itself and ``is_pinned()`` is False.
- ``PinnedRing``: the buffers are reused, per shape and dtype, a few at a time, once nothing
  refers to a buffer any more (the prefetcher holds each source buffer until the event after
  its copy has completed), so steady-state loading allocates no host memory.
- ``DevicePrefetcher``: wraps a batch iterator; when it hands out batch *k* it has already
  queued the copy of batch *k + 1* onto the GPU on a side stream (non-blocking, from pinned
  memory), and the current stream waits on batch *k*'s copy event before using it. So the copy
  of the next batch overlaps the compute of this one. The side stream first waits for the work
  already queued on the current stream, so a device buffer freed by an earlier step is never
  overwritten while that step may still read it.

CuPy surface used: ``cupyx.empty_pinned``, ``cupy.cuda.Stream(non_blocking=True)``,
``cupy.cuda.get_current_stream``, ``Stream.record`` / ``wait_event``, ``Event.done``,
``cupy.empty``, ``ndarray.set(array, stream=...)``, ``cupy.cuda.runtime.pointerGetAttributes``.

>>> import ember
>>> t = ember.arange(3)
>>> t.pin_memory() is t or t.pin_memory().is_pinned()   # without a GPU: the tensor itself
True
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections.abc import Mapping

import numpy as np

from .._errors import DeviceError
from .._tensor import Tensor
from ..backend import cuda as _cuda
from ..backend.arrays import empty_pinned

__all__ = ["DevicePrefetcher", "PinnedRing", "available", "is_pinned", "pin", "pin_memory"]

_registry: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # id(root) -> root


def available() -> bool:
    """Whether pinned memory can be had: CuPy loaded and a GPU present."""
    return _cuda._cupy is not None or _cuda.is_available()


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _array_pinned(a) -> bool:
    if type(a) is not np.ndarray and not isinstance(a, np.ndarray):
        return False
    if _cuda.is_cupy_array(a):
        return False
    root = _root(a)
    if _registry.get(id(root)) is root:
        return True
    cp = _cuda._cupy
    if cp is None or a.size == 0:
        return False
    try:  # memory pinned by someone else (cudaHostAlloc / cudaHostRegister)
        attrs = cp.cuda.runtime.pointerGetAttributes(a.ctypes.data)
        return int(getattr(attrs, "type", 0)) == 1  # cudaMemoryTypeHost
    except Exception:  # noqa: BLE001 - pageable memory, or a CuPy without the call
        return False


class PinnedRing:
    """Pinned host buffers reused per ``(shape, dtype)``: at most ``slots`` kept per key.

    ``take(shape, dtype)`` returns a kept buffer that nothing else refers to, or a new one
    (kept while fewer than ``slots`` are). Whoever queues an asynchronous copy from a buffer
    must hold a reference to it until the copy has finished. Thread-safe (DataLoader worker
    threads pin their batches themselves).
    """

    def __init__(self, slots: int = 8) -> None:
        self.slots = slots
        self._kept: dict = {}  # (shape, dtype) -> [array, ...]
        self._lock = threading.Lock()

    def take(self, shape: tuple, dtype) -> np.ndarray:
        key = (tuple(shape), np.dtype(dtype).str)
        with self._lock:
            kept = self._kept.setdefault(key, [])
            for buf in kept:
                # holders: the ``kept`` list, ``buf`` here and getrefcount's argument
                if sys.getrefcount(buf) <= 3:
                    return buf
            buf = _empty_pinned(shape, dtype)
            if len(kept) < self.slots:
                kept.append(buf)
            return buf

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()


def _empty_pinned(shape: tuple, dtype) -> np.ndarray:
    buf = empty_pinned(tuple(shape), np.dtype(dtype))
    _registry[id(_root(buf))] = _root(buf)
    return buf


_ring = PinnedRing()


def _pin_array(a: np.ndarray, ring: PinnedRing | None) -> np.ndarray:
    buf = ring.take(a.shape, a.dtype) if ring is not None else _empty_pinned(a.shape, a.dtype)
    buf[...] = a  # same shape and dtype
    return buf


def _pin_tensor(t: Tensor, ring: PinnedRing | None) -> Tensor:
    d = t._data
    if type(d) is not np.ndarray or _array_pinned(d):
        return t
    return Tensor._make(_pin_array(d, ring))


def pin(data, ring: PinnedRing | None = _ring):
    """``data`` (a Tensor, or lists / tuples / dicts / namedtuples of them) with every CPU
    tensor copied into pinned memory (buffers from ``ring``; None: fresh ones). Without a GPU,
    ``data`` as it is.

    >>> import ember
    >>> pin([ember.ones(2), "label"])[1]
    'label'
    """
    if not available():
        return data
    return _map(data, lambda t: _pin_tensor(t, ring))


def _map(data, fn):
    if isinstance(data, Tensor):
        return fn(data)
    if isinstance(data, Mapping):
        try:
            return type(data)({k: _map(v, fn) for k, v in data.items()})
        except TypeError:
            return {k: _map(v, fn) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(_map(v, fn) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(_map(v, fn) for v in data)
    return data


# -- Tensor.pin_memory / Tensor.is_pinned ---------------------------------------------------


def pin_memory(self: Tensor, device=None) -> Tensor:
    """A copy of this CPU tensor in page-locked memory (the tensor itself if it is pinned
    already, or when there is no GPU to pin for). The copy has no autograd history.

    >>> import ember
    >>> t = ember.ones(2)
    >>> t.pin_memory().tolist()
    [1.0, 1.0]
    """
    if self.device.type != "cpu":
        raise DeviceError(
            f"pin_memory: cannot pin a tensor on {self.device}: only CPU tensors can be pinned"
        )
    if not available():
        return self
    d = self._data
    if type(d) is not np.ndarray or _array_pinned(d):
        return self
    return Tensor._make(_pin_array(d, None))


def is_pinned(self: Tensor, device=None) -> bool:
    """Whether this tensor's memory is page-locked (False on a GPU tensor, or without one).

    >>> import ember
    >>> ember.zeros(3).is_pinned()
    False
    """
    return _array_pinned(self._data)


TENSOR_METHODS = {"pin_memory": pin_memory, "is_pinned": is_pinned}
for _name, _fn in TENSOR_METHODS.items():  # attached here until _tensor_methods lists this
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _fn)


# -- moving batches onto a GPU ahead of use -------------------------------------------------


class DevicePrefetcher:
    """Iterate ``batches`` with each batch's tensors on ``device``, the next batch's copy
    already queued on a side stream (see the module docstring). ``pin``: copy through pinned
    buffers (non-blocking); otherwise the copies come from pageable memory (blocking).

    Tensors already on the device, and non-tensor leaves, pass through unchanged.
    """

    def __init__(self, batches, device, pin: bool = True, ring: PinnedRing | None = None):
        from ..backend import Device

        self._it = batches
        dev = Device(device)
        if dev.type != "cuda":
            raise DeviceError(f"DataLoader device={device!r}: batches can be moved to cuda only")
        self._cp = _cuda.xp()
        self._index = _cuda.resolve(dev.index)
        self._pin = pin
        self._ring = ring if ring is not None else _ring
        self._inflight: list = []  # (event, host arrays its copies read), oldest first
        with self._cp.cuda.Device(self._index):
            self._stream = self._cp.cuda.Stream(non_blocking=True)
        self._next = None  # (batch, copy event) queued ahead
        self._done = False

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._it)

    def __next__(self):
        cp = self._cp
        with cp.cuda.Device(self._index):
            if self._next is None:
                if self._done:
                    raise StopIteration
                self._next = self._queue(next(self._it))  # StopIteration: nothing at all
            batch, event = self._next
            self._next = None
            try:
                self._next = self._queue(next(self._it))  # overlaps this batch's compute
            except StopIteration:
                self._done = True
            if event is not None:
                cp.cuda.get_current_stream().wait_event(event)
        return batch

    def _queue(self, batch):
        """Queue the copy of ``batch`` on the side stream: ``(device batch, its event)``."""
        cp = self._cp
        host = pin(batch, self._ring) if self._pin else batch
        compute = cp.cuda.get_current_stream()
        side = self._stream
        side.wait_event(compute.record())
        sources: list = []

        def move(t: Tensor) -> Tensor:
            d = t._data
            if type(d) is not np.ndarray:
                return t if _cuda.index_of(d) == self._index else t.to(f"cuda:{self._index}")
            if not d.flags.c_contiguous:
                d = np.ascontiguousarray(d)
            with side:
                out = cp.empty(d.shape, d.dtype)
                if d.size:
                    out.set(d, stream=side)
            sources.append(d)
            return Tensor._make(out, t._requires_grad)

        moved = _map(host, move)
        if not sources:
            return moved, None
        event = side.record()
        # The host arrays must live until their copies have run (pinned memory returned to
        # CuPy's pool, or a ring buffer taken again, could be overwritten under the DMA).
        while self._inflight and self._inflight[0][0].done:
            self._inflight.pop(0)
        self._inflight.append((event, sources))
        return moved, event
