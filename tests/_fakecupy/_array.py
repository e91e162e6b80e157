"""The fake ``cupy.ndarray``: a NumPy array held by composition, with CuPy's surface only.

Its members are the manifest's (``classes["cupy.ndarray"]``): methods written here, and every
other method of CuPy's ndarray run by NumPy after binding the call against CuPy's signature.
What NumPy has and CuPy lacks (``flags.writeable``, ``setflags``, ``ctypes``, ``__index__``,
``item(i)``, ``view(np.ndarray)``, ...) is absent or refused. Views share memory with their
base; results of operations live on the current GPU, and an array from another GPU raises.
"""

from __future__ import annotations

import sys

import numpy as np

from . import _gpu, _manifest
from ._gpu import state

_CLS = "cupy.ndarray"
_IMPLICIT = _manifest.MESSAGES["implicit_conversion"]
_PEER = _manifest.MESSAGES["peer_access"]


def ns():
    """The fake ``cupy`` module (this package)."""
    return sys.modules[__package__]


# -- helpers: unwrap, check, wrap ----------------------------------------------------------------


def raw(x):
    """Device arrays as their NumPy arrays (through tuples, lists and dicts)."""
    t = type(x)
    if t is ndarray:
        return x._a
    if t is tuple or t is list:
        return t(raw(e) for e in x)
    if t is dict:
        return {k: raw(v) for k, v in x.items()}
    return x


def peer_error(dev: int, cur: int) -> ValueError:
    return ValueError(
        f"The device where the array resides ({dev}) is different from the current device "
        f"({cur}).{_PEER}"
    )


def check(args, kwargs=None, host_ok: bool = False) -> int:
    """The current GPU, after checking the arrays in ``args``: none from another GPU (no peer
    access), no host arrays unless ``host_ok``."""
    cur = state["device"]
    stack = [args, kwargs] if kwargs else [args]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is ndarray:
            if x._dev != cur:
                raise peer_error(x._dev, cur)
        elif t is tuple or t is list:
            stack.extend(x)
        elif t is dict:
            stack.extend(x.values())
        elif isinstance(x, np.ndarray) and not host_ok:
            raise TypeError(f"Unsupported type {type(x)}")
    return cur


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def sources(args) -> dict:
    """``{id(root NumPy buffer): owner}`` of the device arrays in ``args``, and ``{id(its NumPy
    array): array}`` of each (``wrap`` gives an input back itself, as CuPy does)."""
    out = {}
    stack = [args]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is ndarray:
            o = x._owner()
            out[id(o._a)] = o
            out[id(x._a)] = x
        elif t is tuple or t is list:
            stack.extend(x)
        elif t is dict:
            stack.extend(x.values())
    return out


def wrap(x, dev: int | None = None, srcs: dict | None = None):
    """NumPy results as device arrays on GPU ``dev`` (the current one): views of an input's
    memory stay views of it, scalars become 0-d arrays, tuples stay tuples."""
    if dev is None:
        dev = state["device"]
    if isinstance(x, np.ndarray):
        if type(x) is not np.ndarray:
            x = x.view(np.ndarray)
        if srcs:  # an input itself (ascontiguousarray of a contiguous array: CuPy returns it)
            same = srcs.get(id(x))
            if same is not None and same._a is x:
                return same
        if srcs and x.base is not None:
            owner = srcs.get(id(_root(x)))
            if owner is not None:
                return ndarray._view(x, owner)
        return ndarray._own(x, dev)
    if isinstance(x, np.generic):
        return ndarray._own(np.array(x), dev)
    if isinstance(x, ndarray):
        return x
    if isinstance(x, (tuple, list)):
        items = [wrap(e, dev, srcs) for e in x]
        return items if type(x) is list else tuple(items)
    return x


def is_basic(key) -> bool:
    """Whether an index takes a view (ints, slices, None, Ellipsis only)."""
    keys = key if type(key) is tuple else (key,)
    for k in keys:
        if k is None or k is Ellipsis or type(k) is slice:
            continue
        if isinstance(k, (bool, np.bool_)):
            return False
        if isinstance(k, (int, np.integer)):
            continue
        return False
    return True


def _index(key):
    """An index with device arrays as NumPy arrays (after the device check); host arrays and
    lists are allowed, as CuPy copies them to the device (not while a stream captures)."""
    if type(key) is tuple:
        return tuple(_index(k) for k in key)
    if type(key) is ndarray:
        check((key,))
        return key._a
    if isinstance(key, (np.ndarray, list)):
        _gpu.check_transfer("h2d")
    return key


class Flags:
    """``cupy.ndarray.flags``: only ``c_contiguous``, ``f_contiguous`` and ``owndata``."""

    __slots__ = ("_c", "_f", "_own")

    def __init__(self, c_contiguous, f_contiguous, owndata) -> None:
        self._c, self._f, self._own = bool(c_contiguous), bool(f_contiguous), bool(owndata)

    c_contiguous = property(lambda self: self._c)
    f_contiguous = property(lambda self: self._f)
    owndata = property(lambda self: self._own)
    fnc = property(lambda self: self._f and not self._c)
    forc = property(lambda self: self._f or self._c)

    def __getitem__(self, name):
        key = {"C_CONTIGUOUS": "_c", "F_CONTIGUOUS": "_f", "OWNDATA": "_own"}.get(name)
        if key is None:
            raise KeyError(f"{name} is not defined for cupy.ndarray.flags")
        return getattr(self, key)

    def __repr__(self) -> str:
        return f"  C_CONTIGUOUS : {self._c}\n  F_CONTIGUOUS : {self._f}\n  OWNDATA : {self._own}"


def _d2h() -> None:
    _gpu.check_transfer("d2h")


# -- the array -----------------------------------------------------------------------------------


class ndarray:
    """A "device" array: NumPy memory tagged with a GPU (see the module docstring)."""

    __slots__ = ("_a", "_dev", "_base", "_mem", "_epoch", "__weakref__")
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C") -> None:
        a = np.empty(shape, dtype=dtype, order=order)
        if strides is not None:
            a = np.lib.stride_tricks.as_strided(a, a.shape, strides)
        self._set(a, state["device"], None)
        self._mem = _gpu.alloc(a.nbytes)

    def _set(self, a, dev, base) -> None:
        self._a, self._dev, self._base = a, dev, base
        self._epoch = _gpu.epoch() if base is None else base._epoch

    @classmethod
    def _own(cls, a: np.ndarray, dev: int) -> ndarray:
        """A fresh device array owning ``a`` (memory from the pool of GPU ``dev``)."""
        self = object.__new__(cls)
        if not a.flags.writeable:
            a = a.copy()
        self._set(a, dev, None)
        self._mem = _gpu.alloc(a.nbytes, dev)
        return self

    @classmethod
    def _view(cls, a: np.ndarray, of: ndarray) -> ndarray:
        """A view ``a`` of the memory of device array ``of`` (CuPy's views are writeable)."""
        owner = of._owner()
        if not a.flags.writeable:
            buf = owner._a
            a = np.ndarray(a.shape, a.dtype, buffer=buf, strides=a.strides,
                           offset=a.__array_interface__["data"][0]
                           - buf.__array_interface__["data"][0])  # fmt: skip
        self = object.__new__(cls)
        self._set(a, owner._dev, owner)
        self._mem = None
        return self

    def _owner(self) -> ndarray:
        return self if self._base is None else self._base

    # -- attributes ----------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self._a.shape

    @shape.setter
    def shape(self, value) -> None:
        self._a = self._a.reshape(value, copy=False)

    strides = property(lambda self: self._a.strides)
    dtype = property(lambda self: self._a.dtype)
    size = property(lambda self: self._a.size)
    ndim = property(lambda self: self._a.ndim)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    base = property(lambda self: self._base)
    T = property(lambda self: ndarray._view(self._a.T, self))
    mT = property(lambda self: ndarray._view(np.swapaxes(self._a, -1, -2), self))

    @property
    def real(self) -> ndarray:
        return ndarray._view(self._a.real, self) if self._a.dtype.kind == "c" else self

    @property
    def imag(self) -> ndarray:
        if self._a.dtype.kind == "c":
            return ndarray._view(self._a.imag, self)
        return wrap(np.zeros_like(self._a))

    @property
    def flags(self) -> Flags:
        f = self._a.flags
        return Flags(f.c_contiguous, f.f_contiguous, self._base is None)

    @property
    def device(self):
        from ._cuda import Device

        return Device(self._dev)

    @property
    def data(self):
        owner = self._owner()
        _gpu.by_address[owner._a.__array_interface__["data"][0]] = owner
        return _gpu.MemoryPointer(self._dev, self._a.nbytes, self._a.__array_interface__["data"][0])

    @property
    def __cuda_array_interface__(self) -> dict:
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "descr": self.dtype.descr,
            "data": (self.data.ptr, False),
            "version": 3,
            "strides": None if self._a.flags.c_contiguous else self.strides,
        }

    @property
    def flat(self):
        raise NotImplementedError("fakecupy: cupy.ndarray.flat is not emulated")

    @property
    def cstruct(self):
        raise NotImplementedError("fakecupy: cupy.ndarray.cstruct is not emulated")

    @property
    def mdspan(self):
        raise NotImplementedError("fakecupy: cupy.ndarray.mdspan is not emulated")

    # -- host transfers ------------------------------------------------------------------
    def get(self, stream=None, order="C", out=None, blocking=True) -> np.ndarray:
        """A NumPy copy (CuPy's device-to-host transfer; refused while a stream captures)."""
        _d2h()
        if out is not None:
            if not isinstance(out, np.ndarray):
                raise TypeError("Only numpy.ndarray can be obtained fromcupy.ndarray")
            if out.dtype != self.dtype:
                raise TypeError(f"{out.dtype} array cannot be obtained from {self.dtype} array")
            if out.shape != self.shape:
                raise ValueError(
                    f"Shape mismatch. Expected shape: {self.shape}, actual shape: {out.shape}"
                )
            np.copyto(out, self._a)
            return out
        return np.array(self._a, order=order)

    def set(self, arr, stream=None) -> None:
        """Copy host array ``arr`` in (CuPy's host-to-device transfer)."""
        if not isinstance(arr, np.ndarray):
            raise TypeError("Only numpy.ndarray can be set to cupy.ndarray")
        if self.dtype != arr.dtype:
            raise TypeError(f"{arr.dtype} array cannot be set to {self.dtype} array")
        if self.shape != arr.shape:
            raise ValueError(f"Shape mismatch. Old shape: {self.shape}, new shape: {arr.shape}")
        if not (self._a.flags.c_contiguous or self._a.flags.f_contiguous):
            raise RuntimeError("Cannot set to non-contiguous array")
        from ._cupyx import is_pinned

        if stream is None or not is_pinned(arr):
            _gpu.check_transfer("h2d")
        self._write(lambda: np.copyto(self._a, arr))

    def item(self):
        _d2h()
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self._a.item()

    def tolist(self):
        _d2h()
        return self._a.tolist()

    def tobytes(self, order="C") -> bytes:
        _d2h()
        return self._a.tobytes(order)

    def __array__(self, dtype=None, copy=None):
        raise TypeError(_IMPLICIT)

    def __bool__(self) -> bool:
        _d2h()
        return bool(self._a)

    def __int__(self) -> int:
        _d2h()
        return int(self._a)

    def __float__(self) -> float:
        _d2h()
        return float(self._a)

    def __complex__(self) -> complex:
        _d2h()
        return complex(self._a)

    def __oct__(self):
        return oct(int(self))

    def __hex__(self):
        return hex(int(self))

    def __bytes__(self) -> bytes:
        _d2h()
        return bytes(self._a)

    def __repr__(self) -> str:
        _d2h()
        return repr(self._a)

    def __str__(self) -> str:
        _d2h()
        return str(self._a)

    def __format__(self, spec: str) -> str:
        _d2h()
        return format(self._a, spec)

    def __reduce__(self):
        return (_rebuild, (self.get(), self._dev))

    def __copy__(self) -> ndarray:
        return self.copy()

    def __deepcopy__(self, memo) -> ndarray:
        with _on(self._dev):
            return self.copy()

    # -- shape, copies, views --------------------------------------------------------------
    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def copy(self, order="C") -> ndarray:
        """A copy on the current GPU (CuPy copies from another GPU too)."""
        return self._launch(lambda: np.array(self._a, order=order))

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True) -> ndarray:
        dt = np.dtype(dtype)
        if not copy and dt == self.dtype:
            return self
        check((self,))
        kw = {} if casting is None else {"casting": casting}
        return self._launch(lambda: self._a.astype(dt, order=order, **kw))

    def view(self, dtype=None, type=None) -> ndarray:
        if dtype is not None and not _is_dtype_like(dtype):
            raise TypeError(f"Cannot interpret '{dtype!r}' as a data type")
        if type is not None and type is not ndarray:
            raise TypeError(f"fakecupy: view(type={type!r}) needs a subclass of cupy.ndarray")
        return ndarray._view(self._a if dtype is None else self._a.view(dtype), self)

    def reshape(self, *shape, order="C", copy=None) -> ndarray:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        out = self._a.reshape(shape, order=order, copy=copy)
        if out.base is not None and np.shares_memory(out, self._a):
            return ndarray._view(out, self)
        check((self,))
        return self._launch(lambda: self._a.reshape(shape, order=order))

    def fill(self, value) -> None:
        if isinstance(value, np.ndarray):
            if value.shape != ():
                raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
            value = value.item()
        elif type(value) is ndarray:
            check((value,))
            self._write(lambda: np.copyto(self._a, value._a, casting="unsafe"))
            return
        elif not _is_scalar(value):
            raise TypeError(f"Unsupported type {type(value)}")
        self._write(lambda: self._a.fill(value))

    # -- indexing ------------------------------------------------------------------------
    def __getitem__(self, key):
        k = _index(key)
        if is_basic(k):
            if k is not Ellipsis and not (type(k) is tuple and Ellipsis in k):
                k = (k if type(k) is tuple else (k,)) + (Ellipsis,)
            return ndarray._view(self._a[k], self)
        check((self,))
        if _has_mask(k):
            _d2h()  # CuPy reads the number of True elements back (a synchronization)
        return self._launch(lambda: self._a[k])

    def __setitem__(self, key, value) -> None:
        k = _index(key)
        basic = is_basic(k)
        check((self, value), host_ok=True)
        if isinstance(value, np.ndarray):
            if basic and not (
                type(key) is slice
                and key == slice(None)
                and value.shape == self.shape
                and value.dtype == self.dtype
            ):
                if value.shape != ():
                    raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
                value = value.item()
            else:
                _gpu.check_transfer("h2d")
        elif type(value) is not ndarray and not _is_scalar(value):
            if basic:
                raise TypeError(f"Unsupported type {type(value)}")
            _gpu.check_transfer("h2d")
            value = np.asarray(value, dtype=self.dtype)
        if _has_mask(k):
            _d2h()
        v = raw(value)

        def assign():
            with np.errstate(all="ignore"):
                if type(v) is np.ndarray:
                    self._a[k] = v.astype(self.dtype, copy=False)
                else:
                    self._a[k] = v

        self._write(assign)

    def __delitem__(self, key):
        raise ValueError("cannot delete array elements")

    # -- NumPy interop (CuPy's rules) -----------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inout = inputs
        if "out" in kwargs:
            out = kwargs["out"]
            if len(out) != 1:
                raise ValueError("The 'out' parameter must have exactly one array value")
            inout += out
            kwargs["out"] = out[0]
        if method != "__call__":
            return NotImplemented
        cp_ufunc = getattr(ns(), ufunc.__name__, None)
        if cp_ufunc is None:
            return NotImplemented
        for x in inout:
            if not (type(x) is ndarray or _is_scalar(x) or isinstance(x, np.ndarray)):
                return NotImplemented
        return cp_ufunc(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        mod = ns()
        try:
            for part in func.__module__.split(".")[1:]:
                if part.startswith("_"):
                    continue
                mod = getattr(mod, part)
            cupy_func = getattr(mod, func.__name__)
        except AttributeError:
            return NotImplemented
        for t in types:
            if t is not ndarray and not issubclass(t, np.ndarray):
                return NotImplemented
        return cupy_func(*args, **kwargs)

    # -- CuPy-only methods -----------------------------------------------------------------
    def scatter_add(self, slices, value) -> None:
        from ._ufunc import scatter_op

        scatter_op(self, slices, value, "add", "cupy.add")

    def scatter_max(self, slices, value) -> None:
        from ._ufunc import scatter_op

        scatter_op(self, slices, value, "max", "cupy.maximum")

    def scatter_min(self, slices, value) -> None:
        from ._ufunc import scatter_op

        scatter_op(self, slices, value, "min", "cupy.minimum")

    def reduced_view(self, dtype=None) -> ndarray:
        if self._a.flags.c_contiguous:
            return ndarray._view(self._a.reshape(-1), self)
        return self

    def dot(self, b, out=None):
        return ns().dot(self, b, out=out)

    def toDlpack(self):
        raise NotImplementedError("fakecupy: DLPack is not emulated")

    def __dlpack__(self, *args, **kwargs):
        raise NotImplementedError("fakecupy: DLPack is not emulated")

    def __dlpack_device__(self):
        return (2, self._dev)

    # -- running NumPy as a "kernel" ------------------------------------------------------------
    def _write(self, fn) -> None:
        """Run ``fn`` (which writes this array in place) as a launch."""
        _gpu.before_write(self)
        fn()
        _gpu.record(fn)

    def _launch(self, fn) -> ndarray:
        """``fn()``'s result as a new array on the current GPU (a launch: recorded while
        capturing, replayed into the same array)."""
        res = wrap(fn())
        if _gpu.capturing() is not None:
            _gpu.record(lambda: np.copyto(res._a, fn(), casting="unsafe"))
        return res


def _rebuild(host: np.ndarray, dev: int) -> ndarray:
    with _on(dev):
        return ndarray._own(np.array(host), dev)


class _on:
    """``with _on(dev):`` makes GPU ``dev`` current."""

    def __init__(self, dev: int) -> None:
        self.dev = dev

    def __enter__(self):
        self.prev = state["device"]
        state["device"] = self.dev

    def __exit__(self, *exc):
        state["device"] = self.prev


def _is_scalar(x) -> bool:
    return isinstance(x, (bool, int, float, complex, np.generic))


def _is_dtype_like(x) -> bool:
    if x is np.ndarray or (isinstance(x, type) and issubclass(x, (np.ndarray, ndarray))):
        return False
    try:
        np.dtype(x)
    except TypeError:
        return False
    return True


def _has_mask(key) -> bool:
    keys = key if type(key) is tuple else (key,)
    return any(isinstance(k, np.ndarray) and k.dtype == np.bool_ for k in keys)
