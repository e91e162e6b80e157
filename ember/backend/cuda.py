"""The CUDA backend: CuPy, imported only when a cuda device is first used.

Everything ember knows about CuPy goes through this module's ``_cupy`` (CuPy as ember's
``xp``: ``arrays.cupy_surface``, which mends CuPy's dtype gaps) and ``_ndarray`` (its array
class): ``ember.backend.device_of`` / ``xp_of`` ask ``index_of(array)`` here instead of
importing CuPy themselves. So a stand-in module with the same surface (the test suite's
``tests/_fakecupy``) plugs in with ``install(module)`` and exercises every cuda code path on
a machine without a GPU.

CuPy surface used here (all documented CuPy API): ``cupy.ndarray`` (``.device.id``,
``.copy()``), ``cupy.asarray``, ``cupy.asnumpy``, ``cupy.empty`` / ``cupy.full``,
``cupy.cuda.Device(i)`` (context manager, ``.id``, ``.use()``, ``.synchronize()``,
``.compute_capability``, ``.mem_info``), ``cupy.cuda.runtime.getDeviceCount`` /
``getDevice`` / ``getDeviceProperties``, ``cupy.get_default_memory_pool()``
(``used_bytes``, ``total_bytes``, ``free_all_blocks``, ``malloc``), ``cupy.cuda.set_allocator``
and ``cupy.random.RandomState`` (see ``memory.py`` and ``random_cuda.py``).
"""

from __future__ import annotations

from .._errors import DeviceError

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
        return array.device.id
    return None


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


def set_device(index: int) -> None:
    """Make GPU ``index`` current."""
    xp().cuda.Device(resolve(index)).use()


def to_host(array):
    """A NumPy copy of a CuPy array (waits for the GPU)."""
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


def _index(device) -> int | None:
    """The GPU index of a device argument: None, an int, 'cuda:1' or an ``ember.device``."""
    if device is None or isinstance(device, int):
        return device
    from . import Device

    dev = Device(device)
    if dev.type != "cuda":
        raise DeviceError(f"expected a cuda device, got {dev}")
    return dev.index
