"""The functions of the fake ``cupy`` namespaces: NumPy's, behind CuPy's signatures.

Every function the manifest lists for a namespace exists; a call is first bound against CuPy's
signature (an unknown keyword raises ``TypeError`` as CuPy does: ``clip(..., casting=)``,
``as_strided(..., writeable=)``), then its device arrays are checked (none from another GPU,
no host arrays except where CuPy copies them in), then NumPy runs it and the results become
device arrays on the current GPU (views of an input stay views of it). A name CuPy has and no
NumPy counterpart runs is present but raises ``NotImplementedError`` when called.
"""

from __future__ import annotations

import numpy as np

from . import _gpu, _manifest
from ._array import _d2h, _is_scalar, check, ndarray, ns, raw, sources, wrap

# CuPy names whose NumPy counterpart has another name (NumPy 2 removed the aliases).
_ALIASES = {
    "round_": np.round,
    "product": np.prod,
    "cumproduct": np.cumprod,
    "alltrue": np.all,
    "sometrue": np.any,
    "in1d": np.isin,
    "trapz": np.trapezoid,
    "msort": lambda a: np.sort(a, axis=0),
    "asfarray": lambda a, dtype=np.float64: np.asarray(a, dtype=dtype),
}
# functions that call cuBLAS, refused while a stream captures (manifest observed)
_CUBLAS = {"matmul", "dot", "vdot", "inner", "tensordot", "einsum"}


def _refuse_cublas_in_capture() -> None:
    if _gpu.capturing() is not None:
        raise NotImplementedError(_manifest.OBSERVED["cublas_during_capture"]["message"])


# Functions that read device data back on the host (a synchronization): those whose output shape
# depends on the data (CuPy reads a count back), and bincount, which checks for negative values
# with ``if (x < 0).any()`` (seen refused in a capture on an H100, 2026-11-26)
_DATA_DEPENDENT = {"nonzero", "argwhere", "flatnonzero", "unique", "compress", "extract",
                   "trim_zeros", "intersect1d", "union1d", "setdiff1d", "setxor1d",
                   "bincount"}  # fmt: skip
_CUPY_ONLY_KWARGS = ("blocking",)


def numpy_impl(path: str, name: str):
    """NumPy's implementation of ``path.name`` (None if NumPy has none)."""
    if path == "cupy" and name in _ALIASES:
        return _ALIASES[name]
    mod = {
        "cupy": np,
        "cupy.linalg": np.linalg,
        "cupy.fft": np.fft,
        "cupy.lib.stride_tricks": np.lib.stride_tricks,
    }.get(path)
    fn = getattr(mod, name, None) if mod is not None else None
    return fn if callable(fn) else None


def missing(qual: str):
    """A CuPy function the fake does not run."""

    def call(*args, **kwargs):
        raise NotImplementedError(f"fakecupy: {qual} exists in CuPy but is not emulated")

    call.__name__ = qual.rsplit(".", 1)[-1]
    return call


def generic(path: str, name: str, entry: dict, np_fn, host_ok: bool = False):
    """``path.name`` run by ``np_fn`` under CuPy's signature and device rules."""
    qual = f"{path}.{name}"
    sig = entry.get("signature")
    data_dependent = name in _DATA_DEPENDENT

    def call(*args, **kwargs):
        _manifest.bind(qual, sig, args, kwargs)
        cur = check(args, kwargs, host_ok=host_ok)
        if name in _CUBLAS:
            _refuse_cublas_in_capture()
        if data_dependent:
            _d2h()
        for k in _CUPY_ONLY_KWARGS:
            kwargs.pop(k, None)
        if host_ok:  # host data copied in (frombuffer & co. would alias host memory)
            _gpu.check_transfer("h2d")
            return wrap(_copy(np_fn(*raw(args), **raw(kwargs))), cur)
        return run(lambda: np_fn(*raw(args), **raw(kwargs)), (args, kwargs), cur)

    call.__name__ = name
    call.__qualname__ = qual
    call.__doc__ = f"fakecupy: {qual}{sig} run by NumPy"
    return call


def _copy(x):
    return np.array(x) if isinstance(x, np.ndarray) else x


def run(fn, args, cur: int):
    """``fn()``'s result as device arrays (a launch: recorded while capturing, its fresh
    results rewritten in place at each replay; arrays passed as ``out`` are written by it)."""
    outs = [o for o in _outs(args) if type(o) is ndarray]
    for o in outs:
        _gpu.before_write(o)
    srcs = sources(args)
    res = wrap(fn(), cur, srcs)
    if _gpu.capturing() is not None:
        fresh = [r for r in _flat(res) if type(r) is ndarray and r._base is None]

        def replay():
            new = [r for r in _flat(wrap(fn(), cur, srcs)) if type(r) is ndarray]
            new = [n for n in new if n._base is None]
            for r, n in zip(fresh, new):
                np.copyto(r._a, n._a, casting="unsafe")

        _gpu.record(replay)
    return res


def _outs(args):
    a, kw = args if isinstance(args, tuple) and len(args) == 2 else (args, {})
    out = kw.get("out") if isinstance(kw, dict) else None
    if out is None:
        return []
    return list(out) if isinstance(out, tuple) else [out]


def _flat(x):
    if isinstance(x, (tuple, list)):
        return [e for i in x for e in _flat(i)]
    return [x]


# -- creation and transfers -------------------------------------------------------------------


def _to_device(obj, dtype=None, order="K", ndmin=0, copy=True):
    """``obj`` (host data, nested sequences of device arrays, scalars) on the current GPU."""
    cur = state_device()
    if type(obj) is ndarray:  # a copy, also from another GPU (CuPy copies between devices)
        return run(lambda: np.array(obj._a, dtype=dtype, order=order, ndmin=ndmin), ((), {}), cur)
    if _holds_device(obj):
        check((obj,))
        return wrap(np.array(raw(obj), dtype=dtype, order=order, ndmin=ndmin), cur)
    if not _is_scalar(obj):
        _gpu.check_transfer("h2d")
    return ndarray._own(np.array(obj, dtype=dtype, order=order, ndmin=ndmin, copy=True), cur)


def state_device() -> int:
    return _gpu.state["device"]


def _holds_device(obj) -> bool:
    if type(obj) is ndarray:
        return True
    return type(obj) in (list, tuple) and any(_holds_device(e) for e in obj)


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False):
    """``cupy.array``: a copy on the current GPU (host data is copied in)."""
    if type(obj) is ndarray and not copy and (dtype is None or np.dtype(dtype) == obj.dtype):
        return obj
    return _to_device(obj, dtype, order or "K", ndmin)


def asarray(a, dtype=None, order=None, *, copy=None, blocking=False):
    """``cupy.asarray``: a device array is returned as it is (wherever it lives)."""
    if type(a) is ndarray:
        if dtype is None or np.dtype(dtype) == a.dtype:
            return a.copy() if copy else a
        return a.astype(dtype)
    return _to_device(a, dtype, order or "K")


def asanyarray(a, dtype=None, order=None):
    return asarray(a, dtype, order)


def asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
    """A NumPy copy of ``a`` (host data as it is)."""
    if type(a) is ndarray:
        return a.get(stream=stream, order=order, out=out)
    if out is not None:
        out[...] = a
        return out
    return np.asarray(a, order=order)


def get_array_module(*args):
    return ns() if any(type(a) is ndarray for a in args) else np


def fuse(*args, **kwargs):
    """A pass-through: ``cupy.fuse`` compiles the function; here it just runs it."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda fn: fn


def copyto(dst, src, casting="same_kind", where=None):
    """``cupy.copyto``: host arrays only as scalars (CuPy's rule)."""
    if type(dst) is not ndarray:
        raise TypeError(f"Unsupported type {type(dst)}")
    check((dst, src, where), host_ok=True)
    if isinstance(src, np.ndarray):
        if src.size != 1:
            raise ValueError("non-scalar numpy.ndarray cannot be used for copyto")
        src = src.reshape(()).item() if src.dtype.kind not in "V" else src.reshape(())[()]
    if type(src) is ndarray:
        value = src._a
        if not np.can_cast(src.dtype, dst.dtype, casting):
            raise TypeError(f"Cannot cast {src.dtype} to {dst.dtype} in {casting} casting mode")
    elif _is_scalar(src):
        value = src
        np.copyto(np.empty((), dst.dtype), src, casting=casting)  # NumPy's weak-scalar rule
    else:
        raise TypeError(f"Unsupported type {type(src)}")
    mask = raw(where)
    dst._write(lambda: np.copyto(dst._a, value, casting="unsafe", where=True if mask is None
                                 else mask))  # fmt: skip


def matmul(*args, axes=None, axis=None, keepdims=False, casting="same_kind", dtype=None,
           signature=None, order="K", out=None):  # fmt: skip
    """``cupy.matmul``: cuBLAS-like half precision (float32 accumulation, one rounding), the
    batched bfloat16 GEMM CuPy 14.2 lacks and the refusal while a stream captures (manifest
    ``observed``)."""
    if len(args) != 2:
        raise TypeError(f"matmul() takes 2 arguments, got {len(args)}")
    _refuse_cublas_in_capture()
    a, b = args
    rule = _manifest.OBSERVED["matmul_bfloat16_batched"]
    if _manifest.BF16 in (getattr(a, "dtype", None), getattr(b, "dtype", None)) and b.ndim >= 3:
        raise TypeError(rule["message"])
    return cublas_matmul(a, b, dtype=dtype, out=out)


def cublas_matmul(a, b, dtype=None, out=None):
    """A product as cuBLAS computes it, which stream capture allows when it is called directly
    (``ember.backend.kernels.cublas`` does, through ctypes): ``matmul`` without CuPy's refusals
    (during capture, and of batched bfloat16, which ``cublasGemmStridedBatchedEx`` takes)."""
    cur = check((a, b, out))
    for x in (a, b):
        if type(x) is not ndarray:
            raise TypeError(f"Unsupported type {type(x)}")
    res_dtype = np.dtype(dtype) if dtype is not None else np.result_type(a.dtype, b.dtype)
    if (a.dtype.kind == "V") != (b.dtype.kind == "V") and dtype is None:
        res_dtype = np.promote_types(a.dtype, b.dtype)

    def compute():
        x, y = a._a, b._a
        if res_dtype.itemsize == 2 and res_dtype.kind in "fV":
            x, y = x.astype(np.float32), y.astype(np.float32)
        return np.matmul(x, y).astype(res_dtype, copy=False)

    if out is not None:
        out._write(lambda: np.copyto(out._a, compute(), casting="unsafe"))
        return out
    return run(compute, ((a, b), {}), cur)


def as_strided(x, shape=None, strides=None):
    """``cupy.lib.stride_tricks.as_strided``: a view (no ``writeable=``, no ``subok=``)."""
    if type(x) is not ndarray:
        raise TypeError(f"Unsupported type {type(x)}")
    v = np.lib.stride_tricks.as_strided(x._a, shape, strides)
    return ndarray._view(v, x)


_where_ufunc = []


def where(condition, x=None, y=None):
    """``cupy.where``: CuPy's ``_where_ufunc`` and its loops (no bfloat16 loop: bfloat16 values
    come back as float32, as on the GPU)."""
    if x is None and y is None:
        return ns().nonzero(condition)
    if (x is None) != (y is None):
        raise ValueError("Must provide both 'x' and 'y' or neither.")
    if not _where_ufunc:
        from ._ufunc import ufunc

        qual = _manifest.NAMESPACES["cupy"]["where"]["internal_ufuncs"][0]
        _where_ufunc.append(ufunc(qual, _manifest.UFUNCS[qual], np.where))
    return _where_ufunc[0](condition.astype("?", copy=False), x, y)


SPECIAL = {
    "cupy": {
        "array": array,
        "asarray": asarray,
        "asanyarray": asanyarray,
        "asnumpy": asnumpy,
        "get_array_module": get_array_module,
        "fuse": fuse,
        "copyto": copyto,
        "matmul": matmul,
        "where": where,
    },
    "cupy.lib.stride_tricks": {"as_strided": as_strided},
}
