"""NumPy's OpenBLAS reached directly: products split over numba's threads, one BLAS thread each.

On the CPU ember's parallel work is numba's: its kernels split their loops over numba's threads
(``prange``), and large matrix products are split the same way, each thread calling OpenBLAS's
``gemm`` on its rows (``matmul``). OpenBLAS itself then runs one thread per call: its own
threads spin for a while after each call, and on two cores a numba loop right after a product
took 7.5-20 ms instead of 34-75 us while OpenBLAS's idle thread held the second core. One pool
of threads for all of a step's parallel work is PyTorch's way too (its intra-op pool).

``active()`` says whether ember works this way: numba can be imported (and kernels are on),
NumPy's BLAS is an OpenBLAS whose thread count and ``cblas_?gemm`` ember can reach, and more than
one thread is asked for (``ember.set_num_threads``, default one per core unless
``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` say otherwise). Then, from the first call of
``active()``, NumPy's OpenBLAS runs one thread (for the whole process: OpenBLAS has no
per-thread setting) and numba runs ``ember.get_num_threads()``. Otherwise nothing is changed and
``matmul`` is ``np.matmul``.

Measured on the 2-core development machine (float32, best of repeats), one product split in two
against OpenBLAS's own two threads: 4096x288 @ 288x32 644 against 677-700 us, 1024x576 @ 576x64
605 against 584-600 us, 512^3 1.82 against 1.88 ms; a split costs about 4 us (numba's OpenMP
layer) where a hand-off between Python threads cost 90-320 us on this virtual machine.

>>> import numpy as np
>>> a = np.arange(6.0).reshape(2, 3)
>>> bool((matmul(a, a.T) == a @ a.T).all())
True
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from .. import _config
from . import jit as _jit

# Products with fewer multiply-adds than this stay one NumPy call (a split costs ~4 us; a
# 64x64x64 product takes ~10 us on one core).
MIN_SPLIT_WORK = 1 << 20

FLOATS = {np.dtype(np.float32): "s", np.dtype(np.float64): "d"}  # the dtypes it splits
_ZERO = {d: d.type(0) for d in FLOATS}  # beta, typed: it picks the kernel's signature
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112


class _Library:
    """OpenBLAS's thread setter and ``cblas_?gemm`` in the library NumPy loaded."""

    def __init__(self) -> None:
        self.set_threads = None
        self.gemm: dict = {}
        paths = []
        try:
            with open("/proc/self/maps") as f:
                paths = sorted({ln.split()[-1] for ln in f if "openblas" in ln.lower()})
        except OSError:
            pass
        for path in paths:
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for prefix, suffix, index in (
                ("scipy_", "64_", ctypes.c_int64),
                ("", "64_", ctypes.c_int64),
                ("scipy_", "", ctypes.c_int),
                ("", "", ctypes.c_int),
            ):
                setter = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}", None)
                sgemm = getattr(lib, f"{prefix}cblas_sgemm{suffix}", None)
                dgemm = getattr(lib, f"{prefix}cblas_dgemm{suffix}", None)
                if setter is None or sgemm is None or dgemm is None:
                    continue
                setter.argtypes, setter.restype = (ctypes.c_int,), None
                gemm = {}
                for letter, real in (("s", ctypes.c_float), ("d", ctypes.c_double)):
                    # a prototype class per dtype: numba tells function pointers by class
                    proto = ctypes.CFUNCTYPE(
                        None, *(ctypes.c_int,) * 3, *(index,) * 3,
                        real, ctypes.c_void_p, index, ctypes.c_void_p, index,
                        real, ctypes.c_void_p, index,
                    )  # fmt: skip
                    gemm[letter] = proto((f"{prefix}cblas_{letter}gemm{suffix}", lib))
                self.set_threads, self.gemm = setter, gemm
                return


_library: _Library | None = None
# what was last applied: ember's thread count and whether numba kernels were on (None: never),
# and the thread count ember gave OpenBLAS (None: left as it started)
_state: dict = {"key": None, "blas": None}
_lock = threading.Lock()


def library() -> _Library:
    """NumPy's OpenBLAS as ember reaches it (found once)."""
    global _library
    if _library is None:
        _library = _Library()
    return _library


def _apply(n: int, kernels: bool) -> None:
    """OpenBLAS on one thread where numba's ``n`` threads split the products, else on ``n``."""
    lib = library()
    if lib.set_threads is None:
        return
    split = n > 1 and kernels
    blas = 1 if split else n
    if _state["blas"] is not None or blas != _config.blas_threads():
        lib.set_threads(blas)
        _state["blas"] = blas
    if split:
        import numba

        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))


def active() -> bool:
    """Whether products are split over numba's threads with OpenBLAS on one thread (the
    module's notes); applies the thread counts when ``ember.get_num_threads()`` changed.

    >>> isinstance(active(), bool)
    True
    """
    n = _config.get_num_threads()
    key = (n, _jit.enabled())
    if _state["key"] != key:
        with _lock:
            _apply(*key)
            _state["key"] = key
    return n > 1 and key[1] and library().set_threads is not None and _kernels() is not None


def one_thread() -> bool:
    """Whether one BLAS call runs on one thread: ember set it so (``active()``, or
    ``ember.set_num_threads(1)``), or OpenBLAS started with one thread.

    >>> isinstance(one_thread(), bool)
    True
    """
    active()
    blas = _state["blas"]
    return blas == 1 if blas is not None else _config.blas_threads() == 1


def _kernels():
    return _jit.module("blas_split", SOURCE)


SOURCE = """
import ctypes

import numba
from numba import njit, prange, types
from numba.core.typing.ctypes_utils import make_function_type

from ember.backend import blas as _blas

I = types.int64
P = types.intp


def _sig(fn):
    g = make_function_type(fn)
    real = g.sig.args[6]
    i32 = types.int32
    return types.void(g, i32, i32, I, I, I, real, P, I, P, I, P, I, I, I, I, I, I, I)


@njit([_sig(f) for f in _blas.library().gemm.values()], cache=True, nogil=True, parallel=True)
def gemm(fn, ta, tb, m, n, k, beta, a, lda, b, ldb, c, ldc, batch, sa, sb, sc, size, parts):
    # C[i] = op(A[i]) @ op(B[i]) (+ beta C[i]) for i < batch, row-major, pointers and byte
    # strides; the work is split into ``parts``: whole matrices when there are enough of them,
    # else row blocks of each
    one = beta * 0 + 1
    if batch >= parts:
        for p in prange(parts):
            for i in range(batch * p // parts, batch * (p + 1) // parts):
                fn(101, ta, tb, m, n, k, one, a + i * sa, lda, b + i * sb, ldb, beta,
                   c + i * sc, ldc)
        return
    for p in prange(parts):
        r0 = m * p // parts
        r1 = m * (p + 1) // parts
        step = lda * size if ta == 111 else size  # the next row of op(A)
        for i in range(batch):
            fn(101, ta, tb, r1 - r0, n, k, one, a + i * sa + r0 * step, lda, b + i * sb, ldb,
               beta, c + i * sc + r0 * ldc * size, ldc)


kernel = gemm
"""


def _layout(x):
    """(transpose flag, leading dimension) of the last two axes of ``x`` for cblas, or None
    where neither axis has unit stride (a copy is NumPy's business then)."""
    size = x.itemsize
    s0, s1 = x.strides[-2], x.strides[-1]
    r, c = x.shape[-2], x.shape[-1]
    if (s1 == size or c == 1) and s0 % size == 0 and s0 // size >= max(1, c):
        return _NO_TRANS, s0 // size
    if (s0 == size or r == 1) and s1 % size == 0 and s1 // size >= max(1, r):
        return _TRANS, s1 // size
    return None


def _stride(x) -> int | None:
    """The byte step between the matrices of a stack (0 for one matrix; None for stacks of
    more than one axis, left to NumPy)."""
    if x.ndim == 2:
        return 0
    return x.strides[0] if x.ndim == 3 and x.strides[0] > 0 else None


def matmul(a, b, out=None):
    """``np.matmul(a, b, out=out)``, split over numba's threads where ``active()`` and the
    product has at least ``MIN_SPLIT_WORK`` multiply-adds: float32 or float64 host arrays of one
    dtype, 2-D or stacks (``b`` 2-D or a stack of ``a``'s length), each matrix with one unit
    stride. Anything else is ``np.matmul``.

    >>> import numpy as np
    >>> a = np.ones((3, 4, 5), np.float32)
    >>> matmul(a, np.ones((5, 2), np.float32)).shape
    (3, 4, 2)
    """
    if (
        type(a) is not np.ndarray
        or type(b) is not np.ndarray
        or a.ndim < 2
        or b.ndim < 2
        or a.dtype != b.dtype
        or a.dtype not in FLOATS
        or b.ndim > a.ndim
        or (b.ndim > 2 and b.shape[:-2] != a.shape[:-2])
        or a.shape[-1] != b.shape[-2]
    ):
        return np.matmul(a, b, out=out)
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = 1
    for s in a.shape[:-2]:
        batch *= s
    if batch * m * k * n < MIN_SPLIT_WORK or m * n == 0 or not active():
        return np.matmul(a, b, out=out)
    if out is None:
        out = np.empty(a.shape[:-2] + (m, n), a.dtype)
    elif out.shape != a.shape[:-2] + (m, n) or out.dtype != a.dtype:
        return np.matmul(a, b, out=out)
    la, lb, lc = _layout(a), _layout(b), _layout(out)
    sa, sb, sc = _stride(a), _stride(b), _stride(out)
    if la is None or lb is None or lc is None or lc[0] != _NO_TRANS or None in (sa, sb, sc):
        return np.matmul(a, b, out=out)
    parts = min(_config.get_num_threads(), max(batch, m))
    fn = library().gemm[FLOATS[a.dtype]]
    _kernels().gemm(
        fn, la[0], lb[0], m, n, k, _ZERO[a.dtype],
        a.ctypes.data, la[1], b.ctypes.data, lb[1], out.ctypes.data, lc[1],
        batch, sa, sb, sc, a.itemsize, parts,
    )  # fmt: skip
    return out
