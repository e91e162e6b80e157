"""A fake CuPy for CPU CI: the part of CuPy's surface ember uses, running on NumPy.

Installed by the ``fake_cuda`` fixture (``tests/conftest.py``) into ``ember.backend.cuda`` (and
as ``cupy`` / ``cupyx`` in ``sys.modules``), it lets tests on a machine without a GPU run every
cuda code path of ember: moves between devices, device checks and their messages, creation with
``device=``, ``map_location``, random draws on the device, memory statistics, optimizer steps
and training on "cuda" tensors.

It checks PLUMBING ONLY. The arithmetic is NumPy's, so it says nothing about CuPy's kernels,
cuBLAS / cuDNN numerics, TF32, float16 speed, streams or CUDA graphs: those need a real GPU.

What it imitates faithfully, because that is what catches mistakes in ember:

- ``ndarray`` is a subclass of ``numpy.ndarray`` (NumPy's math runs on it) but
  ``type(x) is not np.ndarray``, so ember's ``type(x) is np.ndarray`` fast paths go the cuda way;
- each array knows its GPU (``x.device.id``); results of ops are allocated on the *current* GPU,
  and using an array from another GPU raises, as CuPy does without peer access;
- mixing host (``numpy.ndarray``) and device arrays in one ufunc or NumPy function raises
  ``TypeError``, as CuPy does; reductions give 0-d device arrays, never NumPy scalars;
- ``RandomState`` draws only on the GPU current when it was made, and gives numbers different
  from NumPy's for the same seed (as cuRAND does);
- allocations go through ``cuda.set_allocator``'s allocator and a pool with ``used_bytes`` /
  ``total_bytes`` / ``free_all_blocks`` (512-byte rounding, freed blocks cached).

- ``np.asarray(x)`` / ``np.array(x)`` (and ``asanyarray``, ``ascontiguousarray``) on a device
  array raise ``TypeError`` as real CuPy's do: NumPy never asks a subclass, so ``strict_numpy``
  (installed by the fixture) wraps those four for as long as the fake is installed.

What it cannot catch: kernels (``ElementwiseKernel``, ``RawKernel``, ``fuse`` beyond a
pass-through) are absent.
"""

from __future__ import annotations

import functools
import sys
import types
import weakref

import numpy as np

DEVICE_COUNT = 2
_state = {"device": 0, "syncs": 0}


_IMPLICIT = (
    "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a "
    "NumPy array explicitly."
)


def _holds_device_array(obj) -> bool:
    if isinstance(obj, ndarray):
        return True
    return type(obj) in (list, tuple) and any(_holds_device_array(e) for e in obj)


def _strict(fn):
    @functools.wraps(fn)
    def call(obj, *args, **kwargs):
        if _holds_device_array(obj):
            raise TypeError(f"{_IMPLICIT} (fakecupy: numpy.{fn.__name__} on a device array)")
        return fn(obj, *args, **kwargs)

    return call


def strict_numpy(monkeypatch) -> None:
    """Make ``numpy.asarray`` & co. refuse device arrays, as they do with real CuPy."""
    for name in ("array", "asarray", "asanyarray", "ascontiguousarray"):
        monkeypatch.setattr(np, name, _strict(getattr(np, name)))


def reset() -> types.ModuleType:
    """Fresh state (current GPU 0, empty pool, default allocator); returns this module."""
    _state.update(device=0, syncs=0)
    _pool.__init__()
    cuda._allocator = _pool.malloc
    return sys.modules[__name__]


# -- arrays -------------------------------------------------------------------------------------


class ndarray(np.ndarray):
    """A "device" array: NumPy memory tagged with a GPU index."""

    _dev = 0
    _mem = None

    def __array_finalize__(self, obj):
        if self.base is None:  # a fresh buffer (copy, astype...): on the current GPU
            self._dev = _state["device"]
            self._mem = _alloc(self.nbytes)
        else:  # a view: where its base is
            self._dev = getattr(obj, "_dev", _state["device"])

    @property
    def device(self):
        return cuda.Device(self._dev)

    def get(self, stream=None) -> np.ndarray:
        """A NumPy copy (CuPy's device-to-host transfer)."""
        return np.array(self.view(np.ndarray))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out")
        dev = _check(ufunc.__name__, inputs + (out or ()))
        if out is not None:
            kwargs["out"] = tuple(_raw(o) for o in out)
        result = getattr(ufunc, method)(*[_raw(x) for x in inputs], **kwargs)
        if method == "at":
            return None
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(result, dev)

    def __array_function__(self, func, types_, args, kwargs):
        dev = _check(func.__name__, args, kwargs)
        return _wrap(func(*_raw(args), **_raw(kwargs)), dev)

    # NumPy methods that give plain arrays or scalars where CuPy's give device arrays
    def __getitem__(self, key):
        out = super().__getitem__(key)
        return out if isinstance(out, ndarray) else _wrap(out, self._dev)

    def nonzero(self):
        return _wrap(self.view(np.ndarray).nonzero(), self._dev)

    def argmax(self, *args, **kwargs):
        return _wrap(self.view(np.ndarray).argmax(*args, **kwargs), self._dev)

    def argmin(self, *args, **kwargs):
        return _wrap(self.view(np.ndarray).argmin(*args, **kwargs), self._dev)

    def __repr__(self) -> str:
        return f"fakecupy.{np.ndarray.__repr__(self.view(np.ndarray))}"


def _raw(x):
    """Device arrays as plain NumPy (through tuples, lists and dicts)."""
    if isinstance(x, ndarray):
        return x.view(np.ndarray)
    if type(x) in (tuple, list):
        return type(x)(_raw(e) for e in x)
    if type(x) is dict:
        return {k: _raw(v) for k, v in x.items()}
    return x


def _check(name: str, args, kwargs=None, host_ok: bool = False) -> int:
    """The current GPU, after checking ``args``: no host arrays (unless ``host_ok``), no arrays
    from another GPU."""
    cur = _state["device"]
    stack = [args, kwargs or {}]
    while stack:
        x = stack.pop()
        if isinstance(x, ndarray):
            if x._dev != cur:
                raise ValueError(
                    f"fakecupy {name}: the array is on device {x._dev}, but the current device "
                    f"is {cur} (CuPy needs peer access for that)"
                )
        elif isinstance(x, np.ndarray):
            if not host_ok:
                raise TypeError(f"fakecupy {name}: Unsupported type {type(x)} (a host array)")
        elif type(x) in (tuple, list):
            stack.extend(x)
        elif type(x) is dict:
            stack.extend(x.values())
    return cur


def _wrap(x, dev: int):
    """NumPy results as device arrays on GPU ``dev`` (scalars become 0-d arrays)."""
    if isinstance(x, ndarray):
        return x
    if isinstance(x, np.ndarray):
        mem = _alloc(x.nbytes, dev) if x.base is None else None
        v = x.view(ndarray)
        v._dev = dev
        if mem is not None:
            v._mem = mem
        return v
    if isinstance(x, np.generic):
        return _wrap(np.array(x), dev)
    if type(x) in (tuple, list):
        return type(x)(_wrap(e, dev) for e in x)
    if isinstance(x, tuple):  # NumPy's named results (linalg.eigh, svd, slogdet): CuPy's tuples
        return tuple(_wrap(e, dev) for e in x)
    return x


def asarray(a, dtype=None, order=None, *, blocking=False):
    """``a`` on the current GPU (a device array is returned as it is, as CuPy does)."""
    if isinstance(a, ndarray):
        return a if dtype is None or np.dtype(dtype) == a.dtype else a.astype(dtype)
    return _wrap(np.array(_raw(a), dtype=dtype, order=order or "K", copy=True), _state["device"])


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False):
    if isinstance(obj, ndarray):
        return _wrap(np.array(_raw(obj), dtype=dtype, order=order, ndmin=ndmin), _state["device"])
    obj = _raw(obj)
    return _wrap(np.array(obj, dtype=dtype, order=order, ndmin=ndmin, copy=True), _state["device"])


asanyarray = asarray


def asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
    """A NumPy copy of ``a`` (NumPy data as it is)."""
    return a.get() if isinstance(a, ndarray) else np.asarray(a)


def get_array_module(*args):
    return sys.modules[__name__] if any(isinstance(a, ndarray) for a in args) else np


def fuse(*args, **kwargs):
    """A pass-through: ``cupy.fuse`` compiles the function; here it just runs it."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda fn: fn


class _Ufunc:
    """A NumPy ufunc that insists on device arrays (as CuPy's ufuncs do)."""

    def __init__(self, uf: np.ufunc) -> None:
        self._uf = uf
        self.__name__ = uf.__name__

    def __call__(self, *args, **kwargs):
        return self._uf(*_device_args(self.__name__, args), **kwargs)

    def __getattr__(self, method):
        fn = getattr(self._uf, method)
        return lambda *a, **k: fn(*_device_args(self.__name__, a), **k)


def _device_args(name, args):
    _check(name, args)
    return args


_HOST_OK = {"array", "asarray", "asanyarray", "ascontiguousarray", "frombuffer"}


def _function(name: str, fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        dev = _check(name, args, kwargs, host_ok=name in _HOST_OK)
        return _wrap(fn(*_raw(args), **_raw(kwargs)), dev)

    return call


class _Namespace(types.SimpleNamespace):
    """A NumPy submodule (``linalg``, ``fft``, ``lib``) whose functions take and give device
    arrays."""

    def __init__(self, np_module) -> None:
        super().__init__()
        self._np = np_module

    def __getattr__(self, name):
        attr = getattr(self._np, name)
        if isinstance(attr, types.ModuleType):
            return _Namespace(attr)
        return _function(name, attr) if callable(attr) and not isinstance(attr, type) else attr


_delegated: dict = {}


def __getattr__(name: str):
    """Everything else delegates to NumPy, returning device arrays."""
    if name in _delegated:
        return _delegated[name]
    if name.startswith("__"):
        raise AttributeError(name)
    if name in ("linalg", "fft", "lib"):
        attr = _Namespace(getattr(np, name))
    else:
        attr = getattr(np, name)
        if isinstance(attr, np.ufunc):
            attr = _Ufunc(attr)
        elif callable(attr) and not isinstance(attr, type):
            attr = _function(name, attr)
    _delegated[name] = attr  # not globals(): they would shadow builtins (any, max) in this file
    return attr


# -- memory ------------------------------------------------------------------------------------


class MemoryPointer:
    """A block of "device" memory; returned to its pool when collected."""

    def __init__(self, device_id: int, size: int) -> None:
        self.device_id = device_id
        self.size = size


class MemoryPool:
    """CuPy's pool: ``used_bytes`` live, ``total_bytes`` live + cached, per current GPU."""

    def __init__(self) -> None:
        self._used = [0] * DEVICE_COUNT
        self._cached = [0] * DEVICE_COUNT

    def malloc(self, size: int) -> MemoryPointer:
        dev = _state["device"]
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
        return self._used[_state["device"]]

    def total_bytes(self) -> int:
        d = _state["device"]
        return self._used[d] + self._cached[d]

    def free_bytes(self) -> int:
        return self._cached[_state["device"]]

    def free_all_blocks(self, stream=None) -> None:
        self._cached[_state["device"]] = 0


_pool = MemoryPool()


def get_default_memory_pool() -> MemoryPool:
    return _pool


def _alloc(nbytes: int, dev: int | None = None):
    if not nbytes:
        return None
    if dev is None or dev == _state["device"]:
        return cuda._allocator(nbytes)
    with cuda.Device(dev):
        return cuda._allocator(nbytes)


# -- cuda ----------------------------------------------------------------------------------------


class _CUDARuntimeError(RuntimeError):
    pass


class _Device:
    """``cupy.cuda.Device``: a GPU index; ``with Device(i):`` makes it current."""

    def __init__(self, device=None) -> None:
        self.id = _state["device"] if device is None else int(device)
        if not 0 <= self.id < DEVICE_COUNT:
            raise _CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        self._prev: list[int] = []

    def __enter__(self):
        self._prev.append(_state["device"])
        _state["device"] = self.id
        return self

    def __exit__(self, *exc) -> None:
        _state["device"] = self._prev.pop()

    def use(self) -> None:
        _state["device"] = self.id

    def synchronize(self) -> None:
        _state["syncs"] += 1

    @property
    def compute_capability(self) -> str:
        return "90"

    @property
    def mem_info(self) -> tuple[int, int]:
        total = 80 * 2**30
        return total - _pool._used[self.id] - _pool._cached[self.id], total

    def __eq__(self, other) -> bool:
        return isinstance(other, _Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id}>"


class _Event:
    def __init__(self, block=False, disable_timing=False, interprocess=False) -> None:
        self.done = True

    def record(self, stream=None) -> None:
        pass

    def synchronize(self) -> None:
        pass


class _Stream:
    _current: list = []

    def __init__(self, null=False, non_blocking=False, ptr=0) -> None:
        self.device_id = _state["device"]
        self.done = True
        self.ptr = id(self)

    def __enter__(self):
        _Stream._current.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _Stream._current.pop()

    def use(self):
        _Stream._current[:] = [self]
        return self

    def synchronize(self) -> None:
        pass

    def record(self, event=None):
        return event or _Event()

    def wait_event(self, event) -> None:
        pass


_null_stream = _Stream(null=True)


def _get_current_stream():
    return _Stream._current[-1] if _Stream._current else _null_stream


def _set_allocator(allocator=None) -> None:
    cuda._allocator = _pool.malloc if allocator is None else allocator


def _get_device_properties(index: int) -> dict:
    _Device(index)
    return {
        "name": b"Fake GPU (tests/_fakecupy.py)",
        "major": 9,
        "minor": 0,
        "totalGlobalMem": 80 * 2**30,
        "multiProcessorCount": 132,
    }


def _set_device(index: int) -> None:
    _Device(index).use()


runtime = types.SimpleNamespace(
    getDeviceCount=lambda: DEVICE_COUNT,
    getDevice=lambda: _state["device"],
    setDevice=_set_device,
    getDeviceProperties=_get_device_properties,
    CUDARuntimeError=_CUDARuntimeError,
)

cuda = types.SimpleNamespace(
    Device=_Device,
    Stream=_Stream,
    Event=_Event,
    runtime=runtime,
    MemoryPointer=MemoryPointer,
    MemoryPool=MemoryPool,
    get_current_stream=_get_current_stream,
    set_allocator=_set_allocator,
    get_allocator=lambda: cuda._allocator,
    alloc=lambda size: cuda._allocator(size),
    get_elapsed_time=lambda start, end: 0.0,
    _allocator=_pool.malloc,
)


# -- random ------------------------------------------------------------------------------------


class RandomState:
    """``cupy.random.RandomState``: draws on the GPU current when it was made."""

    def __init__(self, seed=None, method=None) -> None:
        self._dev = _state["device"]
        seed = None if seed is None else (int(seed) ^ 0x5EED_CAFE) % 2**64  # not NumPy's numbers
        self._g = np.random.Generator(np.random.PCG64(seed))

    def _here(self, name: str) -> int:
        if _state["device"] != self._dev:
            raise ValueError(
                f"fakecupy RandomState.{name}: made on device {self._dev}, used on "
                f"{_state['device']}"
            )
        return self._dev

    def random_sample(self, size=None, dtype=float):
        return _wrap(np.asarray(self._g.random(size, dtype=dtype)), self._here("random_sample"))

    def standard_normal(self, size=None, dtype=float):
        dev = self._here("standard_normal")
        return _wrap(np.asarray(self._g.standard_normal(size, dtype=dtype)), dev)

    def randint(self, low, high=None, size=None, dtype=int):
        return _wrap(np.asarray(self._g.integers(low, high, size, dtype=dtype)), self._here("x"))

    def permutation(self, num):
        return _wrap(self._g.permutation(num), self._here("permutation"))


random = types.SimpleNamespace(RandomState=RandomState)


# -- cupyx -------------------------------------------------------------------------------------


def _scatter_add(a, slices, value):
    _check("scatter_add", (a, slices, value))
    np.add.at(_raw(a), _raw(slices), _raw(value))


cupyx = types.ModuleType("cupyx")
cupyx.scatter_add = _scatter_add
cupyx.empty_pinned = lambda shape, dtype=float, order="C": np.empty(shape, dtype, order)
cupyx.zeros_pinned = lambda shape, dtype=float, order="C": np.zeros(shape, dtype, order)
