"""The array surface: where NumPy and CuPy differ, one named helper with a body for each.

Everything above ``ember/backend/`` writes NumPy code on ``xp`` and calls these helpers for the
few things the two libraries do differently (``tests/test_array_surface.py`` fails when code
outside the backend touches them directly):

- ``strided_view``: NumPy's ``as_strided`` takes ``writeable=``, CuPy's does not;
- ``scatter_add``: NumPy's ``add.at`` serves every dtype, CuPy's only some;
- ``sum_at``: NumPy's weighted ``bincount``; CuPy's synchronizes (a host check), so a
  scatter-add;
- ``assign``: a copy that casts like a C cast (``casting='unsafe'``, which ``cupy.clip`` and
  friends do not take);
- ``empty_pinned``: page-locked host memory (``cupyx``);
- ``writeable`` / ``freeze``: NumPy arrays carry a write flag, CuPy's have none (whether a
  *tensor* may be written is ember's own metadata, ``Tensor._readonly``);
- ``errstate``: NumPy's floating-point warnings (CuPy never warns);
- ``may_hold``: whether an array has a true element, where asking costs nothing (NumPy); on a
  GPU, asking would wait for the device, so the answer is "maybe" (True) and the caller takes
  its general path;
- ``cupy_surface``: CuPy as ember's ``xp`` on a GPU, with the functions whose CuPy kernels lack
  a bfloat16 loop replaced by ones that keep bfloat16 (``where``, ``clip``, ``round``: CuPy
  would compute them in float32 and return float32; batched ``matmul``: CuPy raises);
- ``capture_overrides``: what ``matmul``, ``asarray`` and ``array`` of the surface do while
  the calling thread captures a CUDA graph (that thread only: a thread-local hook).

>>> import numpy as np
>>> a = np.zeros(3, np.float32)
>>> scatter_add(a, np.array([0, 0, 2]), np.ones(3, np.float32))
>>> a
array([2., 0., 1.], dtype=float32)
>>> strided_view(np.arange(4.0), (3, 2), (8, 8)).tolist()
[[0.0, 1.0], [1.0, 2.0], [2.0, 3.0]]
"""

from __future__ import annotations

import contextlib
import threading
import types
import warnings

import ml_dtypes
import numpy as np

from . import cuda as _cuda

_BF16 = np.dtype(ml_dtypes.bfloat16)
# the dtypes CuPy 14's add.at serves (its message: "cupy.add.at only supports int32, int64,
# float16, float32, float64, uint32, uint64"; tests/cupy_manifest.json records it)
_SCATTER_ADD = frozenset(np.dtype(c) for c in ("i4", "i8", "f2", "f4", "f8", "u4", "u8"))
_SCATTER_VIA = {  # dtypes CuPy can't scatter-add, and the dtype that does it exactly
    np.dtype(np.int8): np.dtype(np.int32),
    np.dtype(np.int16): np.dtype(np.int32),
    np.dtype(np.uint8): np.dtype(np.int32),
    np.dtype(np.uint16): np.dtype(np.int32),
    np.dtype(np.bool_): np.dtype(np.int32),
    _BF16: np.dtype(np.float32),
}


def _is_numpy(a) -> bool:
    return type(a) is np.ndarray or not _cuda.is_cupy_array(a)


def strided_view(a, shape: tuple, strides: tuple):
    """A view of ``a`` with the given shape and byte strides (never written through).

    >>> strided_view(np.arange(3.0), (2, 2), (8, 8)).tolist()
    [[0.0, 1.0], [1.0, 2.0]]
    """
    if _is_numpy(a):
        return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=False)
    return _cuda.xp().lib.stride_tricks.as_strided(a, shape, strides)


def scatter_add(a, index, values) -> None:
    """``a[index] += values`` with repeated indices accumulating (NumPy's ``add.at``).

    >>> a = np.zeros(2, np.int64)
    >>> scatter_add(a, (np.array([1, 1]),), np.array([5, 6]))
    >>> a.tolist()
    [0, 11]
    """
    if _is_numpy(a):
        np.add.at(a, index, values)
        return
    cp = _cuda.xp()
    values = values.astype(a.dtype, copy=False) if hasattr(values, "astype") else values
    if a.dtype in _SCATTER_ADD:
        cp.add.at(a, index, cp.asarray(values, dtype=a.dtype))
    elif a.dtype in _SCATTER_VIA:
        wide = a.astype(_SCATTER_VIA[a.dtype])
        cp.add.at(wide, index, cp.asarray(values).astype(wide.dtype))
        assign(a, wide != 0 if a.dtype == np.bool_ else wide)
    else:
        raise TypeError(f"scatter_add: no GPU scatter-add for dtype {a.dtype}")


def sum_at(positions, weights, size: int):
    """Sums of ``weights`` per position in ``[0, size)``: NumPy's ``bincount(positions,
    weights, minlength=size)`` in the weights' dtype. CuPy's ``bincount`` checks for negative
    positions on the host (a synchronization, refused while a stream captures), so on a GPU
    it is a scatter-add into zeros.

    >>> sum_at(np.array([0, 2, 2]), np.ones(3, np.float32), 4).tolist()
    [1.0, 0.0, 2.0, 0.0]
    """
    if _is_numpy(positions):
        return np.bincount(positions, weights=weights, minlength=size).astype(weights.dtype)
    out = _cuda.xp().zeros(size, dtype=weights.dtype)
    scatter_add(out, (positions,), weights)
    return out


_F64 = np.dtype(np.float64)
_HALVES = frozenset((np.dtype(np.float16), _BF16))


def castable(value, dtype):
    """``value`` (an array) ready to convert to ``dtype``: float64 headed for float16 or
    bfloat16 as float32, so that it rounds twice, as PyTorch converts (and ml_dtypes; NumPy's
    float16 conversion rounds once, which can land a tie away).

    >>> castable(np.array([1 + 2.0**-11 + 2.0**-40]), np.float16).astype(np.float16).tolist()
    [1.0]
    """
    if value.dtype == _F64 and np.dtype(dtype) in _HALVES:
        return value.astype(np.float32)
    return value


def converted(values, dtype) -> np.ndarray:
    """``np.asarray(values, dtype)`` for Python numbers (float64 values), with ``castable``'s
    rounding into a 16-bit float (through float32).

    >>> converted([1 + 2.0**-11 + 2.0**-40], np.float16).tolist()
    [1.0]
    """
    if np.dtype(dtype) in _HALVES:
        return np.asarray(values, dtype=np.float32).astype(dtype)
    return np.asarray(values, dtype=dtype)


def assign(out, value) -> None:
    """``out[...] = value``, casting as a C cast does (float to int truncates, wide to narrow
    rounds, an int wraps; float64 to a 16-bit float through float32, see ``castable``), on
    either library.

    >>> out = np.zeros(2, np.float16)
    >>> assign(out, np.array([1.5, 2.25]))
    >>> out.tolist()
    [1.5, 2.25]
    """
    if type(value) is float:
        value = np.float64(value)
    elif type(value) is int and -(2**63) <= value < 2**63:  # wraps as a C cast: -1 -> 255
        value = np.int64(value)
    dtype = getattr(value, "dtype", None)
    if dtype is not None and dtype == _F64:  # (None == a float64 dtype in NumPy)
        value = castable(value, out.dtype)
    if _is_numpy(out):
        np.copyto(out, value, casting="unsafe")
        return
    _cuda.xp().copyto(out, value, casting="unsafe")


def empty_pinned(shape: tuple, dtype) -> np.ndarray:
    """A host array in page-locked memory (``cupyx.empty_pinned``), for fast copies to a GPU."""
    import cupyx

    return cupyx.empty_pinned(shape, dtype=dtype)


def writeable(a) -> bool:
    """Whether an array's memory may be written (NumPy's flag; CuPy arrays always may).

    >>> writeable(np.broadcast_to(np.zeros(1), (3,)))
    False
    """
    return a.flags.writeable if _is_numpy(a) else True


def owner(a):
    """What owns ``a``'s memory: the end of its chain of ``.base`` (``a`` itself when it is not
    a view; a foreign buffer, such as ``bytes``, when the chain ends in one).

    >>> x = np.zeros((2, 3))
    >>> owner(x.T[1:]) is x
    True
    """
    while getattr(a, "base", None) is not None:
        a = a.base
    return a


def own_copy(a):
    """A copy of ``a`` on ``a``'s own device (CuPy's ``copy`` allocates on the current GPU).

    >>> own_copy(np.ones(2))
    array([1., 1.])
    """
    if type(a) is np.ndarray:
        return a.copy()
    with _cuda.device_context(a):
        return a.copy()


def disjoint(arrays) -> bool:
    """Whether no two of ``arrays`` (views, any strides) can touch the same memory: their
    address spans are apart (an empty array has no span and counts as touching).

    >>> x = np.zeros((2, 3))
    >>> disjoint([x[0], x[1]]), disjoint([x[0], x[:, 1]])
    (True, False)
    """
    from .kernels import address

    spans = []
    for a in arrays:
        lo = hi = address(a)
        for n, s in zip(a.shape, a.strides):
            if n == 0:
                return False
            lo, hi = (lo + (n - 1) * s, hi) if s < 0 else (lo, hi + (n - 1) * s)
        spans.append((lo, hi + a.itemsize))
    spans.sort()
    return all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def freeze(a):
    """Mark a host array read-only (a cached constant); device arrays are returned as they are.

    >>> writeable(freeze(np.zeros(2)))
    False
    """
    if _is_numpy(a):
        a.flags.writeable = False
    return a


def errstate(xp, **kwargs):
    """NumPy's ``errstate(**kwargs)`` on the CPU; nothing on a GPU (CuPy does not warn).

    >>> with errstate(np, divide="ignore"):
    ...     float(np.float64(1.0) / np.float64(0.0))
    inf
    """
    return np.errstate(**kwargs) if xp is np else contextlib.nullcontext()


def may_hold(xp, test) -> bool:
    """Whether ``test()`` (a boolean array) has a true element, asked only on the CPU: on a
    GPU the answer would wait for the device (a host round trip in the middle of a step), so it
    is True there without running ``test``, and the caller takes the path that is right either
    way (a fast path for the common case stays a CPU fast path).

    >>> x = np.array([1.0, 2.0])
    >>> may_hold(np, lambda: np.isnan(x))
    False
    """
    return bool(test().any()) if xp is np else True


# -- CuPy as ember's xp ------------------------------------------------------------------------


def cupy_surface(cp) -> types.ModuleType:
    """CuPy (or a stand-in with its surface) as ember's ``xp``: the same names, with ``where``,
    ``clip``, ``round``, ``around`` and batched ``matmul`` serving bfloat16 where CuPy's kernels
    have no bfloat16 loop. Attributes are copied once, so ``xp.name`` costs what ``cupy.name`` does.

    >>> cupy_surface(np).where is not np.where
    True
    """
    surface = types.ModuleType(getattr(cp, "__name__", "cupy"), getattr(cp, "__doc__", None))
    with warnings.catch_warnings():  # touching a deprecated name warns (CuPy 14: a few)
        warnings.simplefilter("ignore")
        for name in dir(cp):
            if not name.startswith("__"):
                try:
                    setattr(surface, name, getattr(cp, name))
                except AttributeError:  # a lazily delegated name that fails to resolve
                    continue
    surface.__getattr__ = lambda name: getattr(cp, name)  # names added to cp later
    surface.__wrapped__ = cp
    surface.where = _bf16_where(cp.where)
    surface.clip = _bf16_through_float32(cp.clip)
    surface.round = _bf16_through_float32(cp.round)
    surface.around = _bf16_through_float32(cp.around)
    surface.matmul = _capture_hook("matmul", _bf16_batched_matmul(cp))
    surface.asarray = _capture_hook("asarray", cp.asarray)
    surface.array = _capture_hook("array", cp.array)
    return surface


# -- capture-time replacements, one thread's ---------------------------------------------------

CAPTURE_NAMES = ("matmul", "asarray", "array")
_capture = threading.local()  # .overrides: {name: function} while this thread captures


@contextlib.contextmanager
def capture_overrides(overrides: dict):
    """Within the block, ``xp.<name>(...)`` of every ``cupy_surface`` calls
    ``overrides[name](...)`` instead, on the calling thread only: other threads (a DataLoader's
    workers) keep the ordinary functions. ``ember.compile``'s CUDA-graph capture uses it for the
    calls CuPy cannot record (``name`` in ``CAPTURE_NAMES``); ``ordinary(xp.<name>)`` is the
    function an override stands in for (call that one, not ``xp.<name>``, from an override).

    >>> xp = cupy_surface(np)
    >>> with capture_overrides({"asarray": lambda obj, *args, **kwargs: "captured"}):
    ...     xp.asarray(1.0)
    'captured'
    >>> xp.asarray(1.0)
    array(1.)
    """
    unknown = sorted(set(overrides) - set(CAPTURE_NAMES))
    if unknown:
        raise ValueError(f"capture_overrides: {unknown} not in {CAPTURE_NAMES}")
    previous = getattr(_capture, "overrides", None)
    _capture.overrides = {**(previous or {}), **overrides}
    try:
        yield
    finally:
        _capture.overrides = previous


def ordinary(fn):
    """The function a surface's capture hook calls outside ``capture_overrides`` (``fn`` itself
    when it is no hook).

    >>> ordinary(cupy_surface(np).asarray) is np.asarray
    True
    """
    return getattr(fn, "_ordinary", fn)


def _capture_hook(name: str, fn):
    def hooked(*args, **kwargs):
        overrides = getattr(_capture, "overrides", None)
        if overrides is not None:
            override = overrides.get(name)
            if override is not None:
                return override(*args, **kwargs)
        return fn(*args, **kwargs)

    hooked.__doc__ = fn.__doc__
    hooked.__name__ = getattr(fn, "__name__", name)
    hooked._ordinary = fn
    return hooked


def _is_bf16(a) -> bool:
    return getattr(a, "dtype", None) == _BF16


def _bf16_where(where):
    def bf16_where(condition, x=None, y=None):
        if x is None or not (_is_bf16(x) or _is_bf16(y)):
            return where(condition, x, y)
        xb, yb = (_bits(v, x if _is_bf16(x) else y) for v in (x, y))
        if xb is None or yb is None:  # another dtype beside bfloat16: CuPy's promotion
            return where(condition, x, y)
        return where(condition, xb, yb).view(_BF16)

    bf16_where.__doc__ = where.__doc__
    return bf16_where


def _bits(v, like):
    """A bfloat16 array or Python scalar as uint16 bits (None for any other dtype)."""
    if _is_bf16(v):
        return v.view(np.uint16)
    if isinstance(v, (bool, int, float)):
        return np.asarray(v, _BF16).view(np.uint16)[()]
    return None


def _bf16_batched_matmul(cp):
    """CuPy 14.2's batched GEMM (an operand above 2-D) has no bfloat16 loop ("data type 'E' not
    understood", seen on an H200): such products are one ``cublasGemmStridedBatchedEx`` in
    bfloat16 with float32 accumulation, called directly (``kernels.cublas``). Where cuBLAS cannot
    be loaded (a stand-in CuPy) or the dtypes differ, they run in float32 (bfloat16 -> float32
    is exact) and round back once."""
    from .kernels import cublas

    matmul = cp.matmul

    def matmul_bf16_batches(a, b, out=None, **kwargs):
        if (a.ndim > 2 or b.ndim > 2) and (_is_bf16(a) or _is_bf16(b)) and not kwargs:
            if a.dtype == b.dtype:
                try:
                    return cublas.matmul(cp, a, b, out=out)
                except cublas.CaptureUnsupported:
                    pass
            r = matmul(a.astype(np.float32), b.astype(np.float32))
            if out is None:
                return r.astype(np.result_type(a.dtype, b.dtype))
            out[...] = r
            return out
        return matmul(a, b, out=out, **kwargs)

    matmul_bf16_batches.__doc__ = matmul.__doc__
    return matmul_bf16_batches


def _bf16_through_float32(fn):
    def bf16_safe(a, *args, out=None, **kwargs):
        if not _is_bf16(a):
            return fn(a, *args, out=out, **kwargs)
        r = fn(a.astype(np.float32), *args, **kwargs).astype(_BF16)
        if out is None:
            return r
        out[...] = r
        return out

    bf16_safe.__doc__ = fn.__doc__
    return bf16_safe


__all__ = [
    "sum_at",
    "strided_view",
    "scatter_add",
    "assign",
    "empty_pinned",
    "writeable",
    "owner",
    "own_copy",
    "disjoint",
    "freeze",
    "errstate",
    "may_hold",
    "cupy_surface",
    "capture_overrides",
    "ordinary",
    "CAPTURE_NAMES",
]
