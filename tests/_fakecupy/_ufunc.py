"""The fake ``cupy.ufunc``: CuPy's loop tables and call rules, NumPy's arithmetic.

A call takes CuPy's keywords only (``out``, ``dtype``, ``casting``, ``_where``), refuses host
arrays and lists, and picks the loop as CuPy's ``_Ops.guess_routine`` does: the first entry of
the manifest's ``types`` whose input types the arguments cast to safely (``numpy.can_cast``),
Python scalars being weak (NEP 50) unless they are of a higher kind than every array, and
``promote_weak_int`` for the comparisons; with ``dtype=``, the first loop whose outputs are
that dtype. The result has the loop's output dtype whatever NumPy would have given. Loops that
CuPy refuses (boolean ``negative``, ...) raise its message. ``ufunc.at`` and ``cupyx.scatter_*``
serve only the dtypes CuPy's compiled code accepts (the manifest's ``compiled`` section).
"""

from __future__ import annotations

import numpy as np

from . import _gpu, _manifest
from ._array import _d2h, _index, _is_scalar, check, is_basic, ndarray, ns, raw, wrap

_SCATTER_NP = {
    "add": np.add,
    "sub": np.subtract,
    "max": np.maximum,
    "min": np.minimum,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
}
_SCATTER_QUAL = {
    "add": "cupy.add",
    "sub": "cupy.subtract",
    "max": "cupy.maximum",
    "min": "cupy.minimum",
    "and": "cupy.bitwise_and",
    "or": "cupy.bitwise_or",
    "xor": "cupy.bitwise_xor",
}
_NO_NUMPY = {
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "fix": np.fix,
    "i0": np.i0,
    "sinc": np.sinc,
}


def _pyscalar(x):
    """``(dtype, weak type)`` of a kernel argument, as CuPy's ``CScalar``."""
    t = type(x)
    if t is bool:
        return np.dtype(np.bool_), False
    if t is float:
        return np.dtype(np.float64), float
    if t is complex:
        return np.dtype(np.complex128), complex
    if t is int:
        return np.dtype(np.uint64 if x >= 2**63 else np.int64), int
    if isinstance(x, np.generic):
        return x.dtype, False
    raise TypeError(f"Unsupported type {type(x)}")


def _kind_score(t) -> int:
    if issubclass(t, np.bool_):
        return 0
    if issubclass(t, (np.integer, int)):
        return 1
    if issubclass(t, (np.inexact, float, complex)):
        return 2
    return 3


def use_weak_scalar(in_types, weaks) -> bool:
    """CuPy's ``_check_should_use_weak_scalar`` (a cdef function in _kernel.pyx, so not callable
    from Python: ``tools/cupy_manifest.py`` uses this copy too)."""
    if weaks is None:
        return False
    arr, sca = -1, -1
    for t, w in zip(in_types, weaks):
        if w:
            sca = max(sca, _kind_score(w))
        else:
            arr = max(arr, _kind_score(t.type))
    return not (sca == -1 or arr == -1) and arr >= sca


def promote_weak_int(in_types, weaks):
    """CuPy's comparison hook: Python ints are not weak (comparisons have mixed int loops)."""
    if weaks is None:
        return in_types, weaks
    return in_types, tuple(False if w is int else w for w in weaks)


_PROMOTE = {"promote_weak_int": promote_weak_int}


class _Loop:
    __slots__ = ("ins", "outs", "typ")

    def __init__(self, typ: str) -> None:
        i, o = typ.split("->")
        self.ins = tuple(_manifest.dtype_of_char(c) for c in i)
        self.outs = tuple(_manifest.dtype_of_char(c) for c in o)
        self.typ = typ


class ufunc:
    """A CuPy ufunc as the manifest describes it, computing with NumPy."""

    def __init__(self, qualname: str, entry: dict, np_impl=None) -> None:
        self._qual = qualname
        self.name = self.__name__ = entry["name"]
        self.nin, self.nout = entry["nin"], entry["nout"]
        self.nargs = self.nin + self.nout
        self._types = list(entry["types"])
        self._loops = [_Loop(t) for t in entry["types"]]
        self._dtype_loops = [_Loop(t) for t in entry["dtype_types"] or entry["types"]]
        self._errors = entry["error_loops"]
        self._promote = _PROMOTE.get(entry["promote_types"])
        if entry["promote_types"] and self._promote is None:
            raise NotImplementedError(f"fakecupy: promotion hook {entry['promote_types']}")
        self._casting = entry["default_casting"]
        self._scatter = entry["scatter_op"]
        short = qualname.rsplit(".", 1)[-1]
        self._np = np_impl or _NO_NUMPY.get(short) or getattr(np, short)
        self._cache: dict = {}
        self.__doc__ = f"fakecupy ufunc {qualname} (loops from the manifest)"

    @property
    def types(self) -> list:
        return list(self._types)

    def __repr__(self) -> str:
        return f"<ufunc '{self.name}'>"

    # -- type resolution (CuPy's _Ops.guess_routine) -------------------------------------------
    def resolve(self, in_types: tuple, weaks: tuple | None, dtype=None) -> _Loop:
        key = (in_types, weaks, dtype)
        loop = self._cache.get(key)
        if loop is None:
            loop = self._cache[key] = self._guess(in_types, weaks, dtype)
        err = self._errors.get(loop.typ)
        if err is not None:
            raise TypeError(err["message"])
        return loop

    def _guess(self, in_types, weaks, dtype) -> _Loop:
        if dtype is not None:
            for loop in self._dtype_loops:
                if all(t == dtype for t in loop.outs):
                    return loop
            raise TypeError(f"Wrong type ({dtype}) of arguments for {self.name}")
        if not use_weak_scalar(in_types, weaks):
            weaks = None
        if self._promote is not None:
            in_types, weaks = self._promote(in_types, weaks)
        for loop in self._loops:
            for i, (it, ot) in enumerate(zip(in_types, loop.ins)):
                if np.can_cast(it, ot):
                    continue
                w = weaks[i] if weaks is not None else False
                if not w:
                    break
                try:
                    if np.result_type(w(0), ot) != ot:
                        break
                except TypeError:
                    break
            else:
                return loop
        raise TypeError(f"Wrong type ({in_types}) of arguments for {self.name}")

    # -- calls ------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        out = kwargs.pop("out", None)
        where = kwargs.pop("_where", None)
        dtype = kwargs.pop("dtype", None)
        casting = kwargs.pop("casting", self._casting)
        if dtype is not None:
            dtype = np.dtype(dtype)
        if kwargs:
            raise TypeError(f"Wrong arguments {kwargs}")
        n = len(args)
        if not self.nin <= n <= self.nargs:
            raise TypeError(
                f"Wrong number of arguments for {self.name!r}. It must be either {self.nin} or "
                f"{self.nargs} (with outputs), but given {n}."
            )
        ins, outs = args[: self.nin], list(args[self.nin :])
        if out is not None:
            if outs:
                raise ValueError("Cannot specify 'out' as both a positional and keyword argument")
            if isinstance(out, tuple):
                if len(out) != self.nout:
                    raise ValueError("The 'out' tuple must have exactly one entry per ufunc output")
                outs = list(out)
            else:
                if self.nout != 1:
                    raise ValueError("'out' must be a tuple of arrays")
                outs = [out]
        cur = check(ins)
        in_types, weaks, any_weak = [], [], False
        for a in ins:
            if type(a) is ndarray:
                in_types.append(a.dtype)
                weaks.append(False)
            else:
                t, w = _pyscalar(a)
                in_types.append(t)
                weaks.append(w)
                any_weak = any_weak or w is not False
        outs += [None] * (self.nout - len(outs))
        for o in outs:
            if o is not None and type(o) is not ndarray:
                raise TypeError("Output arguments type must be cupy.ndarray")
        check([o for o in outs if o is not None])
        if where is not None:
            check((where,))
            if type(where) is ndarray and where.dtype != np.bool_:
                raise TypeError(
                    f"Cannot cast array data from {where.dtype!r} to {np.dtype(bool)!r} "
                    "according to the rule 'safe'"
                )
        loop = self.resolve(tuple(in_types), tuple(weaks) if any_weak else None, dtype)
        arrays = [a for a in (*ins, where, *outs) if type(a) is ndarray]
        shape = np.broadcast_shapes(*(a.shape for a in arrays)) if arrays else ()
        for i, o in enumerate(outs):
            if o is None:
                outs[i] = ndarray._own(np.empty(shape, loop.outs[i]), cur)
                continue
            if o.shape != shape:
                raise ValueError("Out shape is mismatched")
            if not np.can_cast(loop.outs[i], o.dtype, casting):
                raise TypeError(
                    f"output operand: cannot cast {loop.outs[i]} to {o.dtype} with casting "
                    f"rule {casting!r}"
                )
        scalars = {
            i: np.asarray(a, dtype=t) for i, (a, t) in enumerate(zip(ins, loop.ins))
            if type(a) is not ndarray
        }  # fmt: skip
        mask = raw(where)
        targets = [o._a for o in outs]

        def launch():  # reads the inputs' memory when it runs (a replay sees new values)
            xs = [
                scalars[i] if i in scalars else a._a.astype(t, copy=False)
                for i, (a, t) in enumerate(zip(ins, loop.ins))
            ]
            res = self._compute(xs, loop)
            for t, r in zip(targets, res):
                if mask is None:
                    np.copyto(t, r, casting="unsafe")
                else:
                    np.copyto(t, r, casting="unsafe", where=mask)

        for o in outs:
            _gpu.before_write(o)
        launch()
        _gpu.record(launch)
        return outs[0] if self.nout == 1 else tuple(outs)

    def _compute(self, xs, loop) -> tuple:
        """NumPy's result for arguments already cast to the loop's input types; 16-bit float
        loops compute in float32 and round once, as CuPy's kernels do."""
        xs = [x.astype(np.float32) if x.dtype.itemsize == 2 and x.dtype.kind in "fV" else x
              for x in xs]  # fmt: skip
        with np.errstate(all="ignore"):
            r = self._np(*xs)
        if not isinstance(r, tuple):
            r = (r,)
        return tuple(np.asarray(v).astype(t, copy=False) for v, t in zip(r, loop.outs))

    # -- methods ----------------------------------------------------------------------------
    def at(self, a, indices, b=None) -> None:
        if self._scatter is None:
            raise NotImplementedError(f"`{self.name}.at` is not supported yet")
        scatter_op(a, indices, b, self._scatter, self._qual)

    def outer(self, A, B, **kwargs):
        A, B = _to_device(A), _to_device(B)
        A = A.reshape(A.shape + (1,) * B.ndim)
        B = B.reshape((1,) * A.ndim + B.shape)
        return self(A, B, **kwargs)

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False):
        if self.name == "cupy_add":
            return array.sum(axis, dtype, out, keepdims)
        if self.name == "cupy_multiply":
            return array.prod(axis, dtype, out, keepdims)
        raise NotImplementedError(f"`{self.name}.reduce` is not supported yet")

    def accumulate(self, array, axis=0, dtype=None, out=None):
        if self.name == "cupy_add":
            return array.cumsum(axis, dtype, out)
        if self.name == "cupy_multiply":
            return array.cumprod(axis, dtype, out)
        raise NotImplementedError(f"`{self.name}.accumulate` is not supported yet")

    def reduceat(self, array, indices, axis=0, dtype=None, out=None):
        if self.name == "cupy_add":
            check((array, indices))
            return wrap(np.add.reduceat(array._a, raw(indices), axis=axis, dtype=dtype))
        raise NotImplementedError(f"`{self.name}.reduceat` is not supported yet")


def _to_device(x):
    from . import _functions

    return _functions.array(x)


def scatter_op(a, slices, value, op: str, qual: str | None = None) -> None:
    """CuPy's ``_scatter_op``: ``ufunc.at``, ``cupyx.scatter_*`` and ``ndarray.scatter_*``."""
    if type(a) is not ndarray:
        raise AttributeError(f"'{type(a).__name__}' object has no attribute '_scatter_op'")
    qual = qual or _SCATTER_QUAL[op]
    check((a, value), host_ok=True)
    key = _index(slices)
    fn = _SCATTER_NP[op]
    if is_basic(key):  # CuPy applies the ufunc itself to the view
        view = a[slices]
        getattr(ns(), qual.split(".")[1])(view, value, out=view)
        return
    keys = key if type(key) is tuple else (key,)
    arrays = [k for k in keys if isinstance(k, (np.ndarray, list))]
    mask = len(arrays) == 1 and np.asarray(arrays[0]).dtype == np.bool_
    if mask:
        _d2h()
    else:
        allowed = _manifest.AT_DTYPES[qual]
        if a.dtype.name not in allowed:
            raise TypeError(_manifest.MANIFEST["compiled"]["ufunc_at_dtypes"][qual]["message"])
    if isinstance(value, np.ndarray) or not (type(value) is ndarray or _is_scalar(value)):
        _gpu.check_transfer("h2d")

    def launch():
        v = np.asarray(raw(value)).astype(a.dtype, copy=False)
        if mask:
            sel = a._a[key]
            a._a[key] = fn(sel, np.broadcast_to(v, sel.shape)).astype(a.dtype, copy=False)
        else:
            with np.errstate(all="ignore"):
                fn.at(a._a, key, v)

    a._write(launch)
