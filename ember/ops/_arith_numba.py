"""numba kernels for large float32 / float64 ``Add``, ``Sub``, ``Mul``, ``Div`` and fills on the
CPU, on numba's threads.

NumPy runs an elementwise op on one core. On arrays of ``PARALLEL_MIN`` values or more (a
1000x100 weight and its gradient), a loop split over numba's threads is faster, where PyTorch
uses its two threads too. This 2-core CPU, float32, ``binary``/``fill`` with their checks /
NumPy / PyTorch (2 threads): 100,000 values, an in-place subtract 7.7 / 9.7 / 5.8 us, a multiply
by a number into a new array 7.5 / 9.5 / 8.3, a fill 5.4 / 7.0 / 4.0; 2^20 values 56 / 100 / 52,
54 / 95 / 49 and 33 / 72 / 30; 2^16 values about even with NumPy. They serve the ops' CPU overrides
(``ember.ops.elementwise.arithmetic``), the no-autograd in-place updates (``sub_``, ``x -= y``,
``zero_``: ``ember.functions.inplace``) and the gradient sum into an existing ``.grad``
(``ember.autograd.engine``).

Each kernel does one IEEE operation per value in the arrays' dtype, as NumPy's loop does, so
the results are the same bits. They take C-contiguous arrays of one dtype and shape, or one of
them 0-d (a number, converted to the array's dtype first, as NumPy converts a Python number) or
the shape of the other's last dimensions (a bias broadcast down its rows: a Transformer's
(2048, 1024) + (1024,) took 471 us in NumPy, 107 here); anything else gets None and the NumPy
body runs. numba is optional: without it, with
``EMBER_JIT=0`` or while the module compiles in the background, the answer is None too.

>>> a = np.ones(PARALLEL_MIN, np.float32)
>>> r = binary("sub", a, np.float32(0.25))
>>> r is None or float(r[0]) == 0.75
True
"""

from __future__ import annotations

import numpy as np

from ..backend import jit as _jit
from ..backend.arrays import writeable

OPS = {"add": "+", "sub": "-", "mul": "*", "div": "/"}


def _source() -> str:
    lines = [
        _jit.HEADER,
        "from numba import prange",
        "",
        'OPTS = dict(cache=True, nogil=True, parallel=True, error_model="numpy")',
        'FLOATS = ("float32", "float64")',
        "ARRAYS = [types.void(ro(t), ro(t), rw(t)) for t in FLOATS]",
        "FIRST = [types.void(ro(t), getattr(types, t), rw(t)) for t in FLOATS]",
        "SECOND = [types.void(getattr(types, t), ro(t), rw(t)) for t in FLOATS]",
        "FILL = [types.void(rw(t), getattr(types, t)) for t in FLOATS]",
        "ROWS = [types.void(ro(t, 2), ro(t), rw(t, 2)) for t in FLOATS]",
        "COLS = [types.void(ro(t), ro(t, 2), rw(t, 2)) for t in FLOATS]",
    ]
    for name, sym in OPS.items():
        lines += [
            "",
            "",
            "@njit(ARRAYS, **OPTS)",
            f"def {name}_aa(a, b, out):",
            "    for i in prange(out.size):",
            f"        out[i] = a[i] {sym} b[i]",
            "",
            "",
            "@njit(FIRST, **OPTS)",
            f"def {name}_as(a, s, out):",
            "    for i in prange(out.size):",
            f"        out[i] = a[i] {sym} s",
            "",
            "",
            "@njit(SECOND, **OPTS)",
            f"def {name}_sa(s, b, out):",
            "    for i in prange(out.size):",
            f"        out[i] = s {sym} b[i]",
            "",
            "",
            "@njit(ROWS, **OPTS)",  # a (M, N) array and one row of N (a bias) broadcast down it
            f"def {name}_ar(a, r, out):",
            "    for i in prange(out.shape[0]):",
            "        for j in range(out.shape[1]):",
            f"            out[i, j] = a[i, j] {sym} r[j]",
            "",
            "",
            "@njit(COLS, **OPTS)",
            f"def {name}_ra(r, b, out):",
            "    for i in prange(out.shape[0]):",
            "        for j in range(out.shape[1]):",
            f"            out[i, j] = r[j] {sym} b[i, j]",
        ]
    lines += [
        "",
        "",
        "@njit(FILL, **OPTS)",
        "def fill(out, s):",
        "    for i in prange(out.size):",
        "        out[i] = s",
        "",
        "",
        "kernel = fill  # the name ember.backend.jit loads a module by",
        "",
    ]
    return "\n".join(lines)


SOURCE = _source()

# From this many values the kernels run (the module's figures: about even with NumPy here, 20%
# faster at 100,000); below, NumPy's one-thread loop is as fast as a launch and the checks.
PARALLEL_MIN = 1 << 16

_nd = np.ndarray
_FLOATS = _jit.FLOAT_NP_DTYPES
_KERNELS = {(n, f): f"{n}_{f}" for n in OPS for f in ("aa", "as", "sa", "ar", "ra")}


def _module(dtype):
    return _jit.module("arith", SOURCE) if dtype in _FLOATS else None


def binary(name: str, a, b, out=None):
    """``a <op> b`` for ``name`` in ``OPS`` (into ``out`` when given) on numba's threads, or None
    where the kernels do not serve: fewer than ``PARALLEL_MIN`` values, not float32 / float64
    host arrays of one dtype, shapes that broadcast other than against a 0-d operand (or a
    Python number) or a row of the other's last dimensions (a bias), memory that is not
    C-contiguous, or numba not ready.

    >>> x = np.full(PARALLEL_MIN, 3.0)
    >>> r = binary("div", 1.5, x)
    >>> r is None or float(r[-1]) == 0.5
    True
    """
    ta, tb = type(a) is _nd, type(b) is _nd
    if ta and (not tb or a.size >= b.size):
        big = a
    elif tb:
        big = b
    else:
        return None
    dt = big.dtype
    if big.size < PARALLEL_MIN or not big.flags.c_contiguous:
        return None
    mod = _module(dt)
    if mod is None:
        return None
    if ta and tb and a.shape == b.shape:
        if a.dtype != b.dtype or not (a.flags.c_contiguous and b.flags.c_contiguous):
            return None
        form, args = "aa", (a.reshape(-1), b.reshape(-1))
    else:
        small = b if big is a else a
        if type(small) is _nd and small.ndim and small.shape == big.shape[-small.ndim :]:
            # one row broadcast down the other's rows (a bias): small's shape its last dims'
            if small.dtype != dt or not small.flags.c_contiguous:
                return None
            rows = big.reshape(-1, small.size)
            out = _output(out, big.shape, dt)
            if out is not None:
                pair = (rows, small.reshape(-1)) if big is a else (small.reshape(-1), rows)
                form = "ar" if big is a else "ra"
                getattr(mod, _KERNELS[name, form])(*pair, out.reshape(rows.shape))
            return out
        if type(small) is _nd:
            if small.ndim != 0 or small.dtype != dt:
                return None
            small = small[()]
        elif type(small) not in (float, int) or not -1e300 < small < 1e300:
            return None  # (a huge int: NumPy's own conversion rules and errors)
        small = dt.type(small)
        form, args = ("as", (a.reshape(-1), small)) if big is a else ("sa", (small, b.reshape(-1)))
    out = _output(out, big.shape, dt)
    if out is not None:
        getattr(mod, _KERNELS[name, form])(*args, out.reshape(-1))
    return out


def _output(out, shape, dt):
    """A new array for the result, or ``out`` where the kernels can write it (a C-contiguous,
    writeable host array of the result's shape and dtype); None otherwise (decline)."""
    if out is None:
        return np.empty(shape, dt)
    if type(out) is not _nd or out.shape != shape or out.dtype != dt:
        return None
    if not out.flags.c_contiguous or not writeable(out):
        return None
    return out


def fill(a, value) -> bool:
    """Fill the host array ``a`` with ``value`` (a Python number) on numba's threads; False
    (nothing written) where the kernel does not serve, as for ``binary``.

    >>> a = np.zeros(PARALLEL_MIN, np.float32)
    >>> fill(a, 2) in (True, False)
    True
    """
    if (
        type(a) is not _nd
        or a.size < PARALLEL_MIN
        or type(value) not in (float, int)
        or not a.flags.c_contiguous
        or not writeable(a)
    ):
        return False
    mod = _module(a.dtype)
    if mod is None:
        return False
    mod.fill(a.reshape(-1), a.dtype.type(value))
    return True
