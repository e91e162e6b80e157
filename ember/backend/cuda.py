"""The one CUDA module: CuPy, GPUs, their memory, streams and seeds, and the cuBLAS switch.

PyTorch users reach it by two names, both this module (``ember/_aliases.py`` registers them):

- ``ember.cuda`` (``torch.cuda``): ``is_available``, ``device_count``, ``current_device``,
  ``set_device``, ``device(i)``, ``synchronize``, device properties, memory statistics
  (``memory.py``), seeds (``random_cuda.py``), ``Stream`` / ``Event``, the legacy
  ``ember.cuda.FloatTensor`` names;
- ``ember.backends.cuda`` (``torch.backends.cuda``): ``matmul.allow_tf32`` and ``is_built``;
  ``ember.set_float32_matmul_precision`` is the same TF32 switch by name. (cuDNN's switches are
  ``ember.backends.cudnn``, ``cudnn.py`` beside this module.)

CuPy is imported only when a cuda device is first used; without it, queries answer
(``is_available() == False``, ``device_count() == 0``) and everything else raises a
``DeviceError`` that says how to get cuda.

Everything ember knows about CuPy goes through this module's ``_cupy`` (CuPy as ember's
``xp``: ``arrays.cupy_surface``, which mends CuPy's dtype gaps) and ``_ndarray`` (its array
class): ``ember.backend.device_of`` / ``xp_of`` ask ``index_of(array)`` here instead of
importing CuPy themselves. So a stand-in module with the same surface (the test suite's
``tests/_fakecupy``) plugs in with ``install(module)`` and exercises every cuda code path on
a machine without a GPU.

CuPy surface used here (all documented CuPy API): ``cupy.ndarray`` (``.data.device_id``, its GPU
read without making a ``Device`` as ``.device`` does; ``.copy()``), ``cupy.asarray``,
``cupy.asnumpy``, ``cupy.empty`` / ``cupy.full``,
``cupy.cuda.Device(i)`` (context manager, ``.id``, ``.use()``, ``.synchronize()``,
``.compute_capability``, ``.mem_info``), ``cupy.cuda.runtime.getDeviceCount`` /
``getDevice`` / ``getDeviceProperties``, ``cupy.cuda.Stream`` / ``Event`` /
``get_current_stream`` / ``get_elapsed_time``, ``cupy.get_default_memory_pool()``
(``used_bytes``, ``total_bytes``, ``free_all_blocks``, ``malloc``), ``cupy.cuda.set_allocator``
and ``cupy.random.RandomState`` (see ``memory.py`` and ``random_cuda.py``).

>>> import ember
>>> isinstance(ember.cuda.is_available(), bool), ember.cuda.device_count() >= 0
(True, True)
>>> ember.backends.cuda.matmul.allow_tf32, ember.get_float32_matmul_precision()
(False, 'highest')
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from .._errors import DeviceError
from . import checks as _checks
from . import random_cuda as _random_cuda
from .memory import (
    empty_cache,
    max_memory_allocated,
    memory_allocated,
    memory_reserved,
    reset_peak_memory_stats,
)

_cupy = None  # the CuPy module (or an installed stand-in), once loaded
_ndarray = None  # its ndarray class
_import_error: str | None = None
_installed = False  # True while a stand-in module set by install() is in use


def _load():
    global _cupy, _ndarray, _import_error
    if _cupy is None and _import_error is None:
        try:
            import cupy

            cupy.cuda.runtime.getDeviceCount()
        except Exception as e:  # no CuPy, no driver, or no GPU
            _import_error = f"{type(e).__name__}: {e}"
        else:
            _cupy, _ndarray = _surface(cupy), cupy.ndarray
            _on_load(cupy)
    return _cupy


def _surface(cp):
    from .arrays import cupy_surface

    return cupy_surface(cp)


def _on_load(cp) -> None:
    from . import memory, random_cuda

    memory.attach(cp)
    random_cuda.reset()


def install(module) -> tuple:
    """Use ``module`` as CuPy (a stand-in for tests); returns a token for ``uninstall``.

    ``module`` needs the CuPy surface listed in this module's docstring. Memory statistics and
    the GPU generators start afresh.
    """
    global _cupy, _ndarray, _import_error, _installed
    token = (_cupy, _ndarray, _import_error, _installed)
    _cupy, _ndarray, _import_error, _installed = _surface(module), module.ndarray, None, True
    _on_load(module)
    return token


def uninstall(token: tuple) -> None:
    """Put back what ``install`` replaced."""
    global _cupy, _ndarray, _import_error, _installed
    from . import memory, random_cuda

    memory.detach()
    _cupy, _ndarray, _import_error, _installed = token
    random_cuda.reset()
    if _cupy is not None:
        memory.attach(_cupy)


def is_available() -> bool:
    """Whether CuPy imports and sees at least one GPU."""
    cp = _load()
    return cp is not None and cp.cuda.runtime.getDeviceCount() > 0


def device_count() -> int:
    """How many GPUs CuPy sees (0 without CuPy)."""
    cp = _load()
    return 0 if cp is None else cp.cuda.runtime.getDeviceCount()


def xp():
    """CuPy, or a clear error naming why cuda cannot be used."""
    cp = _cupy if _cupy is not None else _load()
    if cp is None:
        raise DeviceError(
            "cuda is not available: CuPy could not be loaded or sees no GPU "
            f"({_import_error}); install ember[cuda12] or ember[cuda13] on a machine with a GPU"
        )
    return cp


def is_cupy_array(array) -> bool:
    """Whether ``array`` is a (possibly stand-in) CuPy array."""
    return _ndarray is not None and isinstance(array, _ndarray)


def index_of(array) -> int | None:
    """The GPU index ``array`` lives on, or None when it is not a CuPy array."""
    if _ndarray is not None and isinstance(array, _ndarray):
        return array.data.device_id
    return None


_SAME = contextlib.nullcontext()


def device_context(array):
    """``with device_context(a):`` runs CuPy work on ``a``'s GPU, whichever is current (as
    PyTorch runs an op on its tensors' device); nothing to switch for a NumPy array or an array
    on the current GPU.

    >>> import numpy as np
    >>> with device_context(np.ones(2)):
    ...     pass
    """
    if _ndarray is None or not isinstance(array, _ndarray):
        return _SAME
    gpu = array.data.device_id
    if gpu == _cupy.cuda.runtime.getDevice():
        return _SAME
    return _cupy.cuda.Device(gpu)


def current_device() -> int:
    """Index of the current GPU (the one ``device='cuda'`` means)."""
    return xp().cuda.runtime.getDevice()


def resolve(index: int | None) -> int:
    """``index``, or the current GPU's when None; checked against the GPUs present."""
    cp = xp()
    if index is None:
        return cp.cuda.runtime.getDevice()
    count = cp.cuda.runtime.getDeviceCount()
    if not 0 <= index < count:
        raise DeviceError(f"cuda:{index} does not exist: {count} GPU(s) visible")
    return index


def set_device(device) -> None:
    """Make a GPU current: ``set_device(1)``, ``set_device('cuda:1')``."""
    index = _index(device)
    if index is not None:
        xp().cuda.Device(resolve(index)).use()


def to_host(array):
    """A NumPy copy of a CuPy array (waits for the GPU; decides the device checks queued so
    far first, ``ember.backend.checks``)."""
    _checks.flush()
    return xp().asnumpy(array)


def to_gpu(array, index: int | None):
    """A copy of ``array`` (NumPy or CuPy on another GPU) on GPU ``index``."""
    cp = xp()
    index = resolve(index)
    with cp.cuda.Device(index):
        if _ndarray is not None and isinstance(array, _ndarray):
            return array.copy()  # ndarray.copy() copies onto the current device
        return cp.asarray(array)


def full(shape: tuple, value, np_dtype, index: int | None):
    """A CuPy array on GPU ``index`` filled with ``value`` (uninitialized when None)."""
    cp = xp()
    with cp.cuda.Device(resolve(index)):
        return cp.empty(shape, np_dtype) if value is None else cp.full(shape, value, np_dtype)


def synchronize(device=None) -> None:
    """Wait for all work on a GPU (the current one by default) to finish."""
    cp = xp()
    cp.cuda.Device(resolve(_index(device))).synchronize()
    _checks.flush()


def _index(device) -> int | None:
    """The GPU index of a device argument: None, an int, 'cuda:1' or an ``ember.device``."""
    if device is None or isinstance(device, int):
        return device
    from . import Device

    dev = Device(device)
    if dev.type != "cuda":
        raise DeviceError(f"expected a cuda device, got {dev}")
    return dev.index


def is_initialized() -> bool:
    """Whether CuPy has been loaded (ember loads it on first use of a GPU)."""
    return _cupy is not None


def init() -> None:
    """Load CuPy now (raises a ``DeviceError`` without a GPU)."""
    xp()


class device:
    """Context manager: make a GPU current inside a block, as ``torch.cuda.device`` does.

    ``with ember.cuda.device(1): y = x * 2`` runs on GPU 1 (ops run on the current GPU).
    """

    def __init__(self, device) -> None:
        self.index = _index(device)
        self._prev = None

    def __enter__(self):
        if self.index is not None:
            self._prev = current_device()
            set_device(self.index)
        return self

    def __exit__(self, *exc) -> bool:
        if self._prev is not None:
            set_device(self._prev)
        return False


# -- properties ------------------------------------------------------------------------------


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
    cp = xp()
    p = cp.cuda.runtime.getDeviceProperties(resolve(_index(device)))
    name = p["name"]
    return DeviceProperties(
        name=name.decode() if isinstance(name, bytes) else str(name),
        major=int(p["major"]),
        minor=int(p["minor"]),
        total_memory=int(p["totalGlobalMem"]),
        multi_processor_count=int(p["multiProcessorCount"]),
    )


def get_device_name(device=None) -> str:
    """The GPU's name, e.g. ``'NVIDIA H100 80GB HBM3'``."""
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple[int, int]:
    """The GPU's compute capability as ``(major, minor)``: ``(9, 0)`` for an H100."""
    p = get_device_properties(device)
    return p.major, p.minor


def mem_get_info(device=None) -> tuple[int, int]:
    """``(free, total)`` bytes of a GPU, as the driver reports them."""
    free, total = xp().cuda.Device(resolve(_index(device))).mem_info
    return int(free), int(total)


# -- seeds -----------------------------------------------------------------------------------


def manual_seed(seed: int) -> None:
    """Seed the current GPU's generator (takes effect when a GPU is first used)."""
    if _cupy is None and _load() is None:
        _random_cuda.seed_all(seed)  # no GPU: remember it for a stand-in or later load
        return
    _random_cuda.seed_one(seed, current_device())


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's generator (``ember.manual_seed`` does this too)."""
    _random_cuda.seed_all(seed)


def _entropy() -> int:
    import numpy as np

    return int(np.random.SeedSequence().entropy % 2**63)


def seed() -> None:
    """Seed the current GPU's generator from fresh entropy."""
    manual_seed(_entropy())


def seed_all() -> None:
    """Seed every GPU's generator from fresh entropy."""
    manual_seed_all(_entropy())


def initial_seed() -> int | None:
    """The seed of the current GPU's generator (None if seeded from entropy)."""
    return _random_cuda.initial_seed(current_device())


# -- streams and events --------------------------------------------------------------------


class Stream:
    """A CUDA stream (CuPy's ``cupy.cuda.Stream``); ``with stream:`` makes it current.

    ``stream.cupy`` is the CuPy stream, for code that needs it.
    """

    def __init__(self, device=None, priority: int = 0, *, _cupy_stream=None) -> None:
        if _cupy_stream is not None:
            self.cupy = _cupy_stream
            return
        cp = xp()
        with cp.cuda.Device(resolve(_index(device))):
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
    cp = xp()
    with cp.cuda.Device(resolve(_index(device))):
        return Stream(_cupy_stream=cp.cuda.get_current_stream())


def stream(s: Stream | None):
    """Context manager making ``s`` the current stream (a no-op for None)."""
    return contextlib.nullcontext() if s is None else s


class Event:
    """A CUDA event (CuPy's ``cupy.cuda.Event``): marks a point in a stream; times work."""

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ) -> None:
        self.cupy = xp().cuda.Event(
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
        return float(xp().cuda.get_elapsed_time(self.cupy, end.cupy))


# -- cuBLAS matmul precision (torch.backends.cuda.matmul) -------------------------------------

_PRECISIONS = ("highest", "high", "medium")

# Read by the GPU matmul (ember.backend.kernels.matmul) before each product: ``version`` changes
# with every setting, so applying it to CuPy costs one comparison when nothing changed.
state = {"precision": "highest", "version": 0}


def set_float32_matmul_precision(precision: str) -> None:
    """How float32 matrix products may round on the GPU: ``"highest"`` (full float32, the
    default), ``"high"`` or ``"medium"`` (TensorFloat-32 tensor cores allowed, on GPUs of
    compute capability 8.0 or more; ember has no bfloat16-based float32 matmul, so "medium"
    means TF32 too). No effect on the CPU. ``ember.set_float32_matmul_precision``.

    >>> import ember
    >>> ember.set_float32_matmul_precision("high")
    >>> ember.backends.cuda.matmul.allow_tf32
    True
    >>> ember.set_float32_matmul_precision("highest")
    """
    if precision not in _PRECISIONS:
        raise ValueError(
            f"set_float32_matmul_precision: expected one of {', '.join(map(repr, _PRECISIONS))}, "
            f"got {precision!r}"
        )
    if precision != state["precision"]:
        state["precision"] = precision
        state["version"] += 1


def get_float32_matmul_precision() -> str:
    """The current float32 matmul precision: ``"highest"`` unless set otherwise.

    >>> import ember
    >>> ember.get_float32_matmul_precision()
    'highest'
    """
    return state["precision"]


def matmul_allows_tf32() -> bool:
    """Whether float32 GEMMs may use TF32 now."""
    return state["precision"] != "highest"


class _Matmul:
    """``ember.backends.cuda.matmul``: cuBLAS switches, as ``torch.backends.cuda.matmul``."""

    # cuBLAS accumulates float16 / bfloat16 products in float32 either way (CUBLAS_COMPUTE_32F,
    # CuPy's choice); these flags exist for PyTorch code that sets them and change nothing
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self) -> bool:
        return matmul_allows_tf32()

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        set_float32_matmul_precision("high" if value else "highest")

    def __repr__(self) -> str:
        return f"<ember.backends.cuda.matmul allow_tf32={self.allow_tf32}>"


matmul = _Matmul()


def is_built() -> bool:
    """Whether ember can use CUDA at all here (CuPy loads and sees a GPU)."""
    return is_available()


# -- legacy tensor types: ember.cuda.FloatTensor ... ------------------------------------------

_LEGACY = (
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "BFloat16Tensor",
    "ByteTensor",
    "CharTensor",
    "ShortTensor",
    "IntTensor",
    "LongTensor",
    "BoolTensor",
)


_legacy_types: dict = {}  # name -> type, filled from above by ember/_legacy.py


def register_legacy_types(types: dict) -> None:
    """Make ``ember.cuda.FloatTensor`` and the rest the types in ``types`` (``ember._legacy``
    calls this when it loads: the backend imports nothing above it)."""
    _legacy_types.update(types)


def __getattr__(name: str):
    if name in _LEGACY and name in _legacy_types:
        return _legacy_types[name]
    raise AttributeError(f"module 'ember.cuda' has no attribute {name!r}")


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
    "matmul",
    "is_built",
    "set_float32_matmul_precision",
    "get_float32_matmul_precision",
    *_LEGACY,
    "register_legacy_types",
]
