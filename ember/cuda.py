"""``ember.cuda``: GPUs (CuPy), their memory, streams and seeds; PyTorch's ``torch.cuda`` names.

Nothing here imports CuPy until a function needs a GPU; without one, queries answer
(``is_available() == False``, ``device_count() == 0``) and everything else raises a
``DeviceError`` that says how to get cuda.

>>> import ember
>>> isinstance(ember.cuda.is_available(), bool)
True
>>> ember.cuda.device_count() >= 0
True
"""

from __future__ import annotations

from dataclasses import dataclass

from ._legacy import CUDA_TYPES
from .backend import cuda as _cuda
from .backend import random_cuda as _random_cuda
from .backend.cuda import device_count, is_available, synchronize
from .backend.memory import (
    empty_cache,
    max_memory_allocated,
    memory_allocated,
    memory_reserved,
    reset_peak_memory_stats,
)

FloatTensor = CUDA_TYPES["FloatTensor"]
DoubleTensor = CUDA_TYPES["DoubleTensor"]
HalfTensor = CUDA_TYPES["HalfTensor"]
BFloat16Tensor = CUDA_TYPES["BFloat16Tensor"]
ByteTensor = CUDA_TYPES["ByteTensor"]
CharTensor = CUDA_TYPES["CharTensor"]
ShortTensor = CUDA_TYPES["ShortTensor"]
IntTensor = CUDA_TYPES["IntTensor"]
LongTensor = CUDA_TYPES["LongTensor"]
BoolTensor = CUDA_TYPES["BoolTensor"]


def is_initialized() -> bool:
    """Whether CuPy has been loaded (ember loads it on first use of a GPU)."""
    return _cuda._cupy is not None


def init() -> None:
    """Load CuPy now (raises a ``DeviceError`` without a GPU)."""
    _cuda.xp()


def current_device() -> int:
    """Index of the current GPU: the one ``device='cuda'`` means."""
    return _cuda.current_device()


def set_device(device) -> None:
    """Make a GPU current: ``set_device(1)``, ``set_device('cuda:1')``."""
    index = _cuda._index(device)
    if index is not None:
        _cuda.set_device(index)


class device:
    """Context manager: make a GPU current inside a block, as ``torch.cuda.device`` does.

    ``with ember.cuda.device(1): y = x * 2`` runs on GPU 1 (ops run on the current GPU).
    """

    def __init__(self, device) -> None:
        self.index = _cuda._index(device)
        self._prev = None

    def __enter__(self):
        if self.index is not None:
            self._prev = _cuda.current_device()
            _cuda.set_device(self.index)
        return self

    def __exit__(self, *exc) -> bool:
        if self._prev is not None:
            _cuda.set_device(self._prev)
        return False


def get_device_name(device=None) -> str:
    """The GPU's name, e.g. ``'NVIDIA H100 80GB HBM3'``."""
    return get_device_properties(device).name


@dataclass(frozen=True)
class DeviceProperties:
    """What ``get_device_properties`` returns (the fields PyTorch's has that CUDA reports)."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int


def get_device_properties(device=None) -> DeviceProperties:
    """Name, compute capability, memory and SM count of a GPU (the current one by default)."""
    cp = _cuda.xp()
    index = _cuda.resolve(_cuda._index(device))
    p = cp.cuda.runtime.getDeviceProperties(index)
    name = p["name"]
    return DeviceProperties(
        name=name.decode() if isinstance(name, bytes) else str(name),
        major=int(p["major"]),
        minor=int(p["minor"]),
        total_memory=int(p["totalGlobalMem"]),
        multi_processor_count=int(p["multiProcessorCount"]),
    )


def get_device_capability(device=None) -> tuple[int, int]:
    """The GPU's compute capability as ``(major, minor)``: ``(9, 0)`` for an H100."""
    p = get_device_properties(device)
    return p.major, p.minor


def mem_get_info(device=None) -> tuple[int, int]:
    """``(free, total)`` bytes of a GPU, as the driver reports them."""
    cp = _cuda.xp()
    free, total = cp.cuda.Device(_cuda.resolve(_cuda._index(device))).mem_info
    return int(free), int(total)


# -- seeds -----------------------------------------------------------------------------------


def manual_seed(seed: int) -> None:
    """Seed the current GPU's generator (takes effect when a GPU is first used)."""
    if _cuda._cupy is None and _cuda._load() is None:
        _random_cuda.seed_all(seed)  # no GPU: remember it for a stand-in or later load
        return
    _random_cuda.seed_one(seed, _cuda.current_device())


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's generator (``ember.manual_seed`` does this too)."""
    _random_cuda.seed_all(seed)


def seed() -> None:
    """Seed the current GPU's generator from fresh entropy."""
    import numpy as np

    manual_seed(int(np.random.SeedSequence().entropy % 2**63))


def seed_all() -> None:
    """Seed every GPU's generator from fresh entropy."""
    import numpy as np

    manual_seed_all(int(np.random.SeedSequence().entropy % 2**63))


def initial_seed() -> int | None:
    """The seed of the current GPU's generator (None if seeded from entropy)."""
    return _random_cuda.initial_seed(_cuda.current_device())


# -- streams and events --------------------------------------------------------------------


class Stream:
    """A CUDA stream (CuPy's ``cupy.cuda.Stream``); ``with stream:`` makes it current.

    ``stream.cupy`` is the CuPy stream, for code that needs it.
    """

    def __init__(self, device=None, priority: int = 0, *, _cupy_stream=None) -> None:
        if _cupy_stream is not None:
            self.cupy = _cupy_stream
            return
        cp = _cuda.xp()
        with cp.cuda.Device(_cuda.resolve(_cuda._index(device))):
            self.cupy = cp.cuda.Stream(non_blocking=True)

    def __enter__(self):
        self.cupy.__enter__()
        return self

    def __exit__(self, *exc):
        return self.cupy.__exit__(*exc)

    def synchronize(self) -> None:
        """Wait for the work queued on this stream."""
        self.cupy.synchronize()

    def query(self) -> bool:
        """Whether all work queued on this stream has finished."""
        return bool(self.cupy.done)

    def wait_stream(self, other: Stream) -> None:
        """Make later work on this stream wait for what ``other`` has queued so far."""
        self.cupy.wait_event(other.cupy.record())

    def wait_event(self, event: Event) -> None:
        """Make later work on this stream wait for ``event``."""
        self.cupy.wait_event(event.cupy)

    def record_event(self, event: Event | None = None) -> Event:
        """Record ``event`` (a new one by default) on this stream."""
        event = Event() if event is None else event
        event.record(self)
        return event


def current_stream(device=None) -> Stream:
    """The current stream (CuPy's ``get_current_stream``) of a GPU."""
    cp = _cuda.xp()
    with cp.cuda.Device(_cuda.resolve(_cuda._index(device))):
        return Stream(_cupy_stream=cp.cuda.get_current_stream())


def stream(s: Stream | None):
    """Context manager making ``s`` the current stream (a no-op for None)."""
    import contextlib

    return contextlib.nullcontext() if s is None else s


class Event:
    """A CUDA event (CuPy's ``cupy.cuda.Event``): marks a point in a stream; times work."""

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ) -> None:
        cp = _cuda.xp()
        self.cupy = cp.cuda.Event(
            block=blocking, disable_timing=not enable_timing, interprocess=interprocess
        )

    def record(self, stream: Stream | None = None) -> None:
        """Record on ``stream`` (the current one by default)."""
        self.cupy.record(None if stream is None else stream.cupy)

    def synchronize(self) -> None:
        """Wait until the work before the event has finished."""
        self.cupy.synchronize()

    def query(self) -> bool:
        """Whether the work before the event has finished."""
        return bool(self.cupy.done)

    def wait(self, stream: Stream | None = None) -> None:
        """Make ``stream`` (the current one by default) wait for this event."""
        (stream or current_stream()).wait_event(self)

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds from this event to ``end`` (both made with ``enable_timing=True``)."""
        return float(_cuda.xp().cuda.get_elapsed_time(self.cupy, end.cupy))


__all__ = [
    "is_available",
    "is_initialized",
    "init",
    "device_count",
    "current_device",
    "set_device",
    "device",
    "synchronize",
    "get_device_name",
    "get_device_properties",
    "get_device_capability",
    "mem_get_info",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "initial_seed",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "reset_peak_memory_stats",
    "empty_cache",
    "Stream",
    "Event",
    "current_stream",
    "stream",
    *CUDA_TYPES,
]
