"""The CUDA backend: CuPy, imported only when a cuda device is first used."""

from __future__ import annotations

from .._errors import DeviceError

_cupy = None
_import_error: str | None = None


def _load():
    global _cupy, _import_error
    if _cupy is None and _import_error is None:
        try:
            import cupy

            cupy.cuda.runtime.getDeviceCount()
            _cupy = cupy
        except Exception as e:  # no CuPy, no driver, or no GPU
            _import_error = f"{type(e).__name__}: {e}"
    return _cupy


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
    cp = _load()
    if cp is None:
        raise DeviceError(
            "cuda is not available: CuPy could not be loaded or sees no GPU "
            f"({_import_error}); install ember[cuda12] or ember[cuda13] on a machine with a GPU"
        )
    return cp


def is_cupy_array(array) -> bool:
    return _cupy is not None and isinstance(array, _cupy.ndarray)


def to_host(array):
    return xp().asnumpy(array)


def to_gpu(array, index: int):
    cp = xp()
    _check_index(cp, index)
    with cp.cuda.Device(index):
        return cp.asarray(array)


def full(shape: tuple, value, np_dtype, index: int):
    """A CuPy array on GPU ``index`` filled with ``value`` (uninitialized when None)."""
    cp = xp()
    _check_index(cp, index)
    with cp.cuda.Device(index):
        return cp.empty(shape, np_dtype) if value is None else cp.full(shape, value, np_dtype)


def _check_index(cp, index: int) -> None:
    count = cp.cuda.runtime.getDeviceCount()
    if index >= count:
        raise DeviceError(f"cuda:{index} does not exist: {count} GPU(s) visible")


def synchronize() -> None:
    """Wait for all GPU work to finish."""
    xp().cuda.Device().synchronize()
