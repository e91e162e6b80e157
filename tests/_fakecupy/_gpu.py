"""Process-wide state of the fake GPUs: the current device, the memory pool, stream capture.

Stream capture is emulated so that a captured step behaves as on a GPU: while a stream
captures, work still runs (the Python above needs shapes and values) but every launch is also
recorded as a thunk, and each array that existed before the capture is snapshotted before its
first write and restored at ``end_capture`` (a capture runs nothing on a GPU). ``Graph.launch``
replays the thunks. Host transfers (``get``, ``item``, ``asarray`` of host data, ...) raise
while capturing, with CuPy's messages.
"""

from __future__ import annotations

import itertools
import weakref

from . import _manifest

DEVICE_COUNT = 2
state = {"device": 0, "syncs": 0}
_epochs = itertools.count()


class Capture:
    """The capture in progress: its stream, the recorded thunks, the snapshots to restore."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.start = next(_epochs)
        self.thunks: list = []
        self.saved: dict = {}  # id(owner) -> (owner, copy of its buffer)
        # streams forked into the capture (an event recorded here, waited for there) -> how
        # many of their launches the capturing stream has waited for (end_capture refuses more)
        self.forked: dict = {}


capture: list = []  # [Capture] while a stream captures


def epoch() -> int:
    """A counter stamped on every allocation (to tell arrays made before a capture)."""
    return next(_epochs)


def capturing() -> Capture | None:
    """The capture in progress on the current stream, if any."""
    if not capture:
        return None
    from ._cuda import get_current_stream

    cap = capture[-1]
    return cap if get_current_stream() is cap.stream else None


def check_transfer(kind: str) -> None:
    """Raise CuPy's error for a host transfer (``'d2h'``, ``'h2d'``, ``'sync'``) while capturing."""
    if capturing() is not None:
        raise RuntimeError(_manifest.MESSAGES[f"capture_{kind}"])


def before_write(arr, cap: Capture | None = None) -> None:
    """Called before a launch writes ``arr``: keep a copy of memory older than the capture
    (``cap``: the capture of the launch's stream, when not the current one)."""
    cap = cap or capturing()
    if cap is None:
        return
    owner = arr._owner()
    if owner._epoch < cap.start and id(owner) not in cap.saved:
        cap.saved[id(owner)] = (owner, owner._a.copy())


def record(thunk) -> None:
    """Record a launch (a no-argument callable redoing it) into the capture in progress."""
    cap = capturing()
    if cap is not None:
        cap.thunks.append(thunk)


# -- memory pool -------------------------------------------------------------------------------


class MemoryPointer:
    """A block of "device" memory (``cupy.cuda.MemoryPointer``); returned to its pool when
    collected."""

    def __init__(self, device_id: int, size: int, ptr: int = 0) -> None:
        self.device_id = device_id
        self.size = size
        self.ptr = ptr

    @property
    def mem(self):
        return self

    @property
    def device(self):
        from ._cuda import Device

        return Device(self.device_id)

    def __int__(self) -> int:
        return self.ptr


class MemoryPool:
    """CuPy's pool: ``used_bytes`` live, ``total_bytes`` live + cached, per current GPU
    (512-byte rounding, freed blocks cached)."""

    def __init__(self, allocator=None) -> None:
        self._used = [0] * DEVICE_COUNT
        self._cached = [0] * DEVICE_COUNT
        self._limit = 0

    def malloc(self, size: int) -> MemoryPointer:
        dev = state["device"]
        size = -(-int(size) // 512) * 512
        mem = MemoryPointer(dev, size)
        self._used[dev] += size
        self._cached[dev] = max(0, self._cached[dev] - size)
        weakref.finalize(mem, self._free, dev, size)
        return mem

    def _free(self, dev: int, size: int) -> None:
        self._used[dev] -= size
        self._cached[dev] += size

    def used_bytes(self) -> int:
        return self._used[state["device"]]

    def total_bytes(self) -> int:
        d = state["device"]
        return self._used[d] + self._cached[d]

    def free_bytes(self) -> int:
        return self._cached[state["device"]]

    def n_free_blocks(self) -> int:
        return int(self._cached[state["device"]] > 0)

    def free_all_blocks(self, stream=None) -> None:
        self._cached[state["device"]] = 0

    def free_all_free(self) -> None:
        self.free_all_blocks()

    def set_limit(self, size=None, fraction=None) -> None:
        self._limit = int(size or 0)

    def get_limit(self) -> int:
        return self._limit


pool = MemoryPool()
allocator = [pool.malloc]


def alloc(nbytes: int, dev: int | None = None):
    """Memory for a new array on GPU ``dev`` (the current one by default), through the
    allocator set with ``cuda.set_allocator``."""
    if not nbytes:
        return None
    if dev is None or dev == state["device"]:
        return allocator[0](nbytes)
    prev = state["device"]
    state["device"] = dev
    try:
        return allocator[0](nbytes)
    finally:
        state["device"] = prev


# owners of the memory whose address was handed out (``ndarray.data``), by address: what a
# library call given raw pointers (the fake NCCL) reads and writes
by_address: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def owner_at(ptr: int, nbytes: int):
    """The array owning the ``nbytes`` at device address ``ptr`` (None: not a live array's)."""
    for base, owner in list(by_address.items()):
        if base <= ptr and ptr + nbytes <= base + owner._a.nbytes:
            return owner
    return None


def reset() -> None:
    """Fresh state: GPU 0 current, empty pool, default allocator, no capture."""
    state.update(device=0, syncs=0)
    pool.__init__()
    allocator[0] = pool.malloc
    capture.clear()
