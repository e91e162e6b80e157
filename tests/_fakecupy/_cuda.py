"""The fake ``cupy.cuda``: GPUs, streams with capture into graphs, events, memory.

``DEVICE_COUNT`` fake GPUs; ``Device(i)`` makes one current. Streams run work at once (no
asynchrony). ``Stream.begin_capture()`` ... ``end_capture()`` gives a ``Graph`` whose
``launch()`` replays the launches made while capturing (see ``_gpu``); host transfers and
synchronizations while capturing raise with CuPy's messages.
"""

from __future__ import annotations

import contextlib
import types
import weakref

import numpy as np

from . import _gpu
from ._gpu import DEVICE_COUNT, MemoryPointer, MemoryPool, state


class CUDARuntimeError(RuntimeError):
    """``cupy.cuda.runtime.CUDARuntimeError``."""


class Device:
    """``cupy.cuda.Device``: a GPU index; ``with Device(i):`` makes it current."""

    def __init__(self, device=None) -> None:
        self.id = state["device"] if device is None else int(device)
        if not 0 <= self.id < DEVICE_COUNT:
            raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        self._prev: list[int] = []

    def __enter__(self):
        self._prev.append(state["device"])
        state["device"] = self.id
        return self

    def __exit__(self, *exc) -> None:
        state["device"] = self._prev.pop()

    def use(self) -> None:
        state["device"] = self.id

    def synchronize(self) -> None:
        _gpu.check_transfer("sync")
        state["syncs"] += 1

    @property
    def compute_capability(self) -> str:
        return "90"

    @property
    def mem_info(self) -> tuple[int, int]:
        total = 80 * 2**30
        return total - _gpu.pool._used[self.id] - _gpu.pool._cached[self.id], total

    @property
    def attributes(self) -> dict:
        return {"MultiProcessorCount": 132, "WarpSize": 32}

    @property
    def pci_bus_id(self) -> str:
        return f"0000:{self.id:02x}:00.0"

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id}>"


class Event:
    """``cupy.cuda.Event`` (work runs at once, so every event is done). Recorded on a stream
    that captures, it belongs to that capture: another stream waiting for it joins the capture
    (CUDA's fork), and the capturing stream waiting for an event of a joined stream takes in
    that stream's work (the join; ``end_capture`` refuses a capture with unjoined work)."""

    def __init__(self, block=False, disable_timing=False, interprocess=False) -> None:
        self.done = True
        self._capture = None  # (Capture, the stream it was recorded on) inside a capture

    def record(self, stream=None) -> None:
        stream = stream or get_current_stream()
        cap = stream._capture or stream._joined
        self._capture = None if cap is None else (cap, stream, stream._launches)

    def synchronize(self) -> None:
        _gpu.check_transfer("sync")


class Graph:
    """A captured graph: ``launch()`` replays the launches recorded while capturing."""

    def __init__(self, thunks: list) -> None:
        self._thunks = thunks

    def launch(self, stream=None) -> None:
        for thunk in self._thunks:
            thunk()

    def upload(self, stream=None) -> None:
        pass


class Stream:
    """``cupy.cuda.Stream``; ``with stream:`` makes it current."""

    _current: list = []
    _by_ptr: weakref.WeakValueDictionary = weakref.WeakValueDictionary()

    def __init__(self, null=False, non_blocking=False, ptds=False, priority=None) -> None:
        self.device_id = -1 if null else state["device"]
        self.ptr = 0 if null else id(self)
        self._capture = None
        self._joined = None  # the capture this stream was forked into (an event's wait)
        self._launches = 0  # library calls made on it by raw pointer (the fake NCCL counts)
        Stream._by_ptr[self.ptr] = self

    @property
    def done(self) -> bool:
        return True

    def __enter__(self):
        Stream._current.append(self)
        return self

    def __exit__(self, *exc) -> None:
        Stream._current.pop()

    def use(self):
        Stream._current[:] = [self]
        return self

    def synchronize(self) -> None:
        if self._capture is not None or self._joined is not None:
            raise RuntimeError(_gpu._manifest.MESSAGES["capture_sync"])

    def record(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def wait_event(self, event) -> None:
        if event._capture is None:
            return
        cap, source, launches = event._capture
        if cap not in _gpu.capture:
            return
        if self._capture is cap and source in cap.forked:  # the join: the source's work so far
            cap.forked[source] = max(cap.forked[source], launches)
        elif self._capture is None and self._joined is None:  # the fork
            self._joined = cap
            cap.forked[self] = self._launches

    def is_capturing(self) -> bool:
        return self._capture is not None or self._joined is not None

    def begin_capture(self, mode=None) -> None:
        if self.ptr == 0:
            raise CUDARuntimeError("cudaErrorStreamCaptureUnsupported: the null stream cannot "
                                   "be captured")  # fmt: skip
        if self._capture is not None:
            raise CUDARuntimeError("cudaErrorIllegalState: the stream is already capturing")
        self._capture = _gpu.Capture(self)
        _gpu.capture.append(self._capture)

    def end_capture(self) -> Graph:
        cap = self._capture
        if cap is None:
            raise CUDARuntimeError("cudaErrorIllegalState: the stream is not capturing")
        self._capture = None
        _gpu.capture.remove(cap)
        for owner, saved in cap.saved.values():  # a capture runs nothing: undo its writes
            np.copyto(owner._a, saved)
        unjoined = [s for s, joined in cap.forked.items() if s._launches > joined]
        for s in cap.forked:
            s._joined = None
        if unjoined:
            raise CUDARuntimeError(
                "cudaErrorStreamCaptureUnjoined: the capture sequence contains a fork that was "
                "not joined to the primary stream"
            )
        return Graph(cap.thunks)

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and other.ptr == self.ptr

    def __hash__(self) -> int:
        return hash(self.ptr)

    def __repr__(self) -> str:
        return f"<Stream {self.ptr} (device {self.device_id})>"


Stream.null = Stream(null=True)


def get_current_stream(device_id=None) -> Stream:
    return Stream._current[-1] if Stream._current else Stream.null


def set_allocator(allocator=None) -> None:
    _gpu.allocator[0] = _gpu.pool.malloc if allocator is None else allocator


def get_allocator():
    return _gpu.allocator[0]


@contextlib.contextmanager
def using_allocator(allocator=None):
    prev = _gpu.allocator[0]
    set_allocator(allocator)
    try:
        yield
    finally:
        _gpu.allocator[0] = prev


def alloc(size):
    return _gpu.allocator[0](size)


def get_elapsed_time(start_event, end_event) -> float:
    return 0.0


def get_device_id() -> int:
    return state["device"]


def _device_properties(index: int) -> dict:
    Device(index)
    return {
        "name": b"Fake GPU (tests/_fakecupy)",
        "major": 9,
        "minor": 0,
        "totalGlobalMem": 80 * 2**30,
        "multiProcessorCount": 132,
        "warpSize": 32,
    }


def _pointer_attributes(ptr: int):
    from ._cupyx import pinned_at

    kind = 1 if pinned_at(int(ptr)) else 0
    return types.SimpleNamespace(type=kind, device=state["device"], devicePointer=0,
                                 hostPointer=int(ptr) if kind else 0)  # fmt: skip


def _set_device(index: int) -> None:
    Device(index).use()


RUNTIME = {
    "getDeviceCount": lambda: DEVICE_COUNT,
    "getDevice": lambda: state["device"],
    "setDevice": _set_device,
    "getDeviceProperties": _device_properties,
    "runtimeGetVersion": lambda: 12080,
    "driverGetVersion": lambda: 12080,
    "pointerGetAttributes": _pointer_attributes,
    "deviceSynchronize": lambda: Device().synchronize(),
    "CUDARuntimeError": CUDARuntimeError,
}

CUDA = {
    "Device": Device,
    "Stream": Stream,
    "Event": Event,
    "Graph": Graph,
    "MemoryPointer": MemoryPointer,
    "MemoryPool": MemoryPool,
    "get_current_stream": get_current_stream,
    "set_allocator": set_allocator,
    "get_allocator": get_allocator,
    "using_allocator": using_allocator,
    "alloc": alloc,
    "get_elapsed_time": get_elapsed_time,
    "get_device_id": get_device_id,
    "is_available": lambda: True,
}

DEVICE = {"Device": Device, "get_device_id": get_device_id}
