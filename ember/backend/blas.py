"""NumPy's OpenBLAS reached directly: products split over numba's threads, one BLAS thread each.

On the CPU ember's parallel work is numba's: its kernels split their loops over numba's threads
(``prange``), and large matrix products are split the same way, each thread calling OpenBLAS's
``gemm`` on its block: rows, columns or whole matrices of a stack, or a block of the inner
dimension whose parts are summed after (``matmul``). OpenBLAS itself then runs one thread per
call: its own threads spin for a while after each call, and on two cores a numba loop right
after a product took 7.5-20 ms instead of 34-75 us while OpenBLAS's idle thread held the second
core. One pool of threads for all of a step's parallel
work is PyTorch's way too (its intra-op pool).

``active()`` says whether ember works this way: numba can be imported (and kernels are on),
NumPy's BLAS is an OpenBLAS whose thread count and ``cblas_?gemm`` ember can reach, and more than
one thread is asked for (``ember.set_num_threads``, default one per core unless
``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` say otherwise). Then, from the first call of
``active()``, NumPy's OpenBLAS runs one thread (for the whole process: OpenBLAS has no
per-thread setting) and numba runs ``ember.get_num_threads()``. Otherwise nothing is changed and
``matmul`` is ``np.matmul``.

Measured on the 2-core development machine (float32, best of repeats), one product split in two
against OpenBLAS's own two threads: 4096x288 @ 288x32 644 against 677-700 us, 1024x576 @ 576x64
605 against 584-600 us, 512^3 1.82 against 1.88 ms; the two-layer net's 64x1000 @ 1000x100
100-120 against 88-98 us (OpenBLAS's own split of a short product is better). A split costs
about 4 us in numba's OpenMP layer, 12 us with this module's checks, where a hand-off between
Python threads cost 90-320 us on this virtual machine. Until the kernel is compiled (in the
background, a few seconds the first time) products run unsplit on one thread.

>>> import numpy as np
>>> a = np.arange(6.0).reshape(2, 3)
>>> bool((matmul(a, a.T) == a @ a.T).all())
True
"""

from __future__ import annotations

import ctypes
import threading

import ml_dtypes
import numpy as np

from .. import _config
from . import jit as _jit

# Products with fewer multiply-adds than this stay one NumPy call (a split costs ~4 us; a
# 64x64x64 product takes ~10 us on one core).
MIN_SPLIT_WORK = 1 << 20

# A product whose inner dimension is ``INNER`` times as long as its other two or more is split
# along it, each thread's part summed into the result, where the parts take at most
# ``MAX_PARTIALS`` bytes: a convolution's weight gradient (25x50176 @ 50176x6: 418-527 against
# 495-598 us split by rows; 150x6400 @ 6400x16 about even). Shorter ones gained nothing (the
# two-layer net's 64x1000 @ 1000x100: 150-196 against 158-193 us).
INNER = 16
MAX_PARTIALS = 1 << 20

FLOATS = {np.dtype(np.float32): "s", np.dtype(np.float64): "d"}  # the dtypes it splits
_BF16 = np.dtype(ml_dtypes.bfloat16)


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
# the thread count ember gave OpenBLAS (None: left as it started), and numba's thread count
# (numba's setting holds for the thread that made it and the threads numba starts from it)
_state: dict = {"key": None, "blas": None, "numba": None}
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
    if n <= 1 or not key[1] or library().set_threads is None or _kernels() is None:
        return False
    if _state["numba"] != n:  # numba is imported once the kernels are compiled
        import numba

        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
        _state["numba"] = n
    return True


def one_thread() -> bool:
    """Whether one BLAS call runs on one thread: ember set it so (``active()``, or
    ``ember.set_num_threads(1)``), or OpenBLAS started with one thread.

    >>> isinstance(one_thread(), bool)
    True
    """
    active()
    blas = _state["blas"]
    return blas == 1 if blas is not None else _config.blas_threads() == 1


def kernel_threads() -> int:
    """How many of numba's threads ember's own parallel kernels split their work over:
    ``ember.get_num_threads()`` with numba kernels on, else 1. Applies the thread counts as
    ``active()`` does, without waiting for this module's product kernels to compile (a kernel
    that decides once, as compiled graphs' fused kernels do, would stay serial).

    >>> kernel_threads() >= 1
    True
    """
    active()
    return _config.get_num_threads() if _jit.enabled() else 1


def image_blocks(n: int, image_bytes: int, budget: int) -> tuple[int, int]:
    """``(images per block, runs of blocks)`` for a kernel that works through ``n`` images a
    block at a time on numba's threads: blocks of about ``budget`` bytes of an image's scratch
    (``image_bytes`` each; one image at least), and one run of blocks per thread
    (``kernel_threads``) while the blocks go round.

    >>> image_blocks(64, 1 << 20, 2 << 20)[0]
    2
    """
    threads = kernel_threads()
    group = max(1, min(-(-n // threads), budget // max(1, image_bytes)))
    return group, min(threads, -(-n // group))


def numba_gemms() -> list:
    """``[(numba's type of cblas_?gemm, numba's float type)]``: the signature parts of kernels
    that call OpenBLAS from numba's threads (``ember.ops._winograd``'s), float32 then float64;
    empty without an OpenBLAS ember reaches. Imports numba.

    >>> isinstance(numba_gemms(), list)
    True
    """
    from numba import types
    from numba.core.typing.ctypes_utils import make_function_type

    gemm = library().gemm
    return [
        (make_function_type(gemm[k]), t)
        for k, t in (("s", types.float32), ("d", types.float64))
        if k in gemm
    ]


def _kernels():
    return _jit.module("blas_split", SOURCE)


SOURCE = """
from numba import njit, prange, types
from numba.core.typing.ctypes_utils import make_function_type

from ember.backend import blas as _blas


def _sig(fn):
    g = make_function_type(fn)
    a = types.Array(g.sig.args[6], 3, "A", readonly=True)
    return types.boolean(g, a, a, types.Array(g.sig.args[6], 3, "A"), types.int64)


@njit(cache=True, nogil=True)
def _layout(x, size):
    # cblas's view of the matrices of a 3-D stack x: (transpose flag, leading dimension, bytes
    # from a row to the next, bytes from a column to the next); flag 0 for a layout it cannot take
    rows, cols = x.shape[1], x.shape[2]
    if x.strides[2] == size or cols == 1:
        return 111, x.strides[1] // size, x.strides[1], size
    if x.strides[1] == size or rows == 1:
        return 112, x.strides[2] // size, size, x.strides[2]
    return 0, 0, 0, 0


@njit([_sig(f) for f in _blas.library().gemm.values()], cache=True, nogil=True, parallel=True)
def gemm(fn, a, b, c, parts):
    # c[i] = a[i] @ b[i or 0] for the stacks a (S, M, K), b (S or 1, K, N), c (S, M, N), each
    # matrix with one unit stride (c: its columns), split into ``parts`` over numba's threads:
    # whole matrices when there are as many, else row blocks of each (M >= N) or column blocks.
    # False (nothing done) for a layout cblas cannot take.
    size = a.itemsize
    batch, m, k = a.shape
    n = b.shape[2]
    if c.strides[2] != size and n > 1:
        return False
    ldc = c.strides[1] // size
    ta, lda, row_a, _ = _layout(a, size)
    tb, ldb, _, col_b = _layout(b, size)
    if ta == 0 or tb == 0 or min(lda, ldb, ldc) < 1:
        return False
    if min(a.strides[0], b.strides[0], c.strides[0]) < 0:
        return False
    pa, pb, pc = a.ctypes.data, b.ctypes.data, c.ctypes.data
    sa, sc = a.strides[0], c.strides[0]
    sb = b.strides[0] if b.shape[0] > 1 else 0
    one = a.dtype.type(1)
    zero = a.dtype.type(0)
    if batch >= parts:
        for p in prange(parts):
            for i in range(batch * p // parts, batch * (p + 1) // parts):
                fn(101, ta, tb, m, n, k, one, pa + i * sa, lda, pb + i * sb, ldb, zero,
                   pc + i * sc, ldc)
    elif m >= n:
        for p in prange(parts):
            r0 = m * p // parts
            r1 = m * (p + 1) // parts
            for i in range(batch):
                fn(101, ta, tb, r1 - r0, n, k, one, pa + i * sa + r0 * row_a, lda,
                   pb + i * sb, ldb, zero, pc + i * sc + r0 * ldc * size, ldc)
    else:
        for p in prange(parts):
            c0 = n * p // parts
            c1 = n * (p + 1) // parts
            for i in range(batch):
                fn(101, ta, tb, m, c1 - c0, k, one, pa + i * sa, lda,
                   pb + i * sb + c0 * col_b, ldb, zero, pc + i * sc + c0 * size, ldc)
    return True


@njit([_sig(f) for f in _blas.library().gemm.values()], cache=True, nogil=True, parallel=True)
def gemm_inner(fn, a, b, partial, parts):
    # partial[p] = a[0][:, k0:k1] @ b[0][k0:k1, :] for ``parts`` blocks of the inner dimension
    # over numba's threads (the caller adds them up): for products whose inner dimension is
    # long and whose result is small (a convolution's weight gradient). False (nothing done)
    # for a layout cblas cannot take.
    size = a.itemsize
    m, k = a.shape[1], a.shape[2]
    n = b.shape[2]
    ta, lda, _, step_a = _layout(a, size)
    tb, ldb, step_b, _ = _layout(b, size)
    if ta == 0 or tb == 0 or min(lda, ldb) < 1:
        return False
    pa, pb, pc = a.ctypes.data, b.ctypes.data, partial.ctypes.data
    one = a.dtype.type(1)
    zero = a.dtype.type(0)
    for p in prange(parts):
        k0 = k * p // parts
        k1 = k * (p + 1) // parts
        fn(101, ta, tb, m, n, k1 - k0, one, pa + k0 * step_a, lda, pb + k0 * step_b, ldb, zero,
           pc + p * m * n * size, n)
    return True


kernel = gemm
"""


def _bf16_pair(a, b) -> bool:
    return type(a) is np.ndarray and type(b) is np.ndarray and a.dtype == b.dtype == _BF16


def _bfloat16(a, b, out):
    """``matmul`` of two bfloat16 host arrays on exact float32 copies (the answer in float32, as
    NumPy's own bfloat16 product gives it, or written into ``out``)."""
    r = matmul(a.astype(np.float32), b.astype(np.float32))
    if out is None:
        return r
    out[...] = r
    return out


def _folded(a):
    """``(rows, order)``: an N-D host array's rows as one (rows, K) matrix without a copy, its
    leading dimensions taken in ``order`` (by stride, largest first: a sequence-first view of
    batch-first memory, as attention's projections get, folds too); None where they do not
    step through memory as one."""
    if type(a) is not np.ndarray:
        return None
    lead = a.ndim - 1
    order = tuple(sorted(range(lead), key=lambda i: -a.strides[i]))
    need = a.strides[order[-1]]
    for i in reversed(order):
        if a.shape[i] != 1 and a.strides[i] != need:
            return None
        need *= a.shape[i]
    if order != tuple(range(lead)):
        a = a.transpose(order + (lead,))
    return a.reshape(-1, a.shape[-1]), order


def split_of(a_shape: tuple, n: int, itemsize: int) -> tuple[str, int] | None:
    """How ``matmul`` splits a float product of an ``a_shape`` stack (2-D or 3-D) by a K x ``n``
    matrix over numba's threads: ``("inner", parts)`` (blocks of the inner dimension, summed
    after), ``("gemm", parts)`` (matrices, rows or columns), or None (one ``np.matmul``: small
    products, or ``active()`` is off). Compiled plans' numba loops split by the same rule.

    >>> split_of((8, 8), 8, 4) is None
    True
    """
    m, k = a_shape[-2], a_shape[-1]
    if m * k * n * (a_shape[0] if len(a_shape) == 3 else 1) < MIN_SPLIT_WORK or not active():
        return None
    threads = _config.get_num_threads()
    if len(a_shape) == 2 and k >= INNER * max(m, n) and m * n * threads * itemsize <= MAX_PARTIALS:
        return "inner", threads
    return "gemm", min(threads, max(a_shape[0] if len(a_shape) == 3 else 1, m, n))


def matmul(a, b, out=None):
    """``np.matmul(a, b, out=out)``, split over numba's threads where ``active()`` and the
    product has at least ``MIN_SPLIT_WORK`` multiply-adds: float32 or float64 host arrays of one
    dtype, 2-D or 3-D stacks (``b`` 2-D or a stack of ``a``'s length), each matrix with one unit
    stride. A 2-D product whose inner dimension is by far the longest is split along it (the
    threads' parts summed: ``INNER``, ``MAX_PARTIALS``), others by matrices, rows or columns.
    An N-D stack times one matrix is one product of all the stack's rows where they step
    through memory as one, in some order of its leading dimensions (``_folded``; the result in
    the stack's memory order): attention's (L, N, E) views of batch-first memory times a weight
    took 9.9 ms as 128 products of 16 rows, 4.0 as one. Anything else is ``np.matmul``.

    bfloat16 (ml_dtypes) operands are widened to float32 first (exact) and multiplied by BLAS:
    NumPy's own bfloat16 product has no BLAS loop (1.6-1.9x the time on the digits model's
    products, 4096 x 288 x 64 and alike, on 2 cores) and answers in float32 too.

    >>> import numpy as np
    >>> a = np.ones((3, 4, 5), np.float32)
    >>> matmul(a, np.ones((5, 2), np.float32)).shape
    (3, 4, 2)
    """
    if b.ndim == 2 and a.ndim > 2 and (folded := _folded(a)) is not None:
        # a stack times one matrix: one product of all the stack's rows, in its memory's order
        rows, order = folded
        lead = a.ndim - 1
        back = tuple(np.argsort(order)) + (lead,)
        if out is None:
            flat = matmul(rows, b)
            return flat.reshape(tuple(a.shape[i] for i in order) + b.shape[-1:]).transpose(back)
        dst = out.transpose(order + (lead,))
        if dst.flags.c_contiguous:
            matmul(rows, b, dst.reshape(-1, b.shape[-1]))
            return out
    if (
        type(a) is not np.ndarray
        or type(b) is not np.ndarray
        or a.dtype != b.dtype
        or a.dtype not in FLOATS
        or not 2 <= b.ndim <= a.ndim <= 3
        or (b.ndim == 3 and b.shape[0] != a.shape[0])
        or a.shape[-1] != b.shape[-2]
    ):
        return _bfloat16(a, b, out) if _bf16_pair(a, b) else np.matmul(a, b, out=out)
    shape = a.shape[:-1] + b.shape[-1:]
    split = split_of(a.shape, b.shape[-1], a.itemsize)
    if split is None:
        return np.matmul(a, b, out=out)
    if out is None:
        out = np.empty(shape, a.dtype)
    elif out.shape != shape or out.dtype != a.dtype:
        return np.matmul(a, b, out=out)
    how, parts = split
    if how == "inner":
        m, n = shape
        partial = np.empty((parts, m, n), a.dtype)
        if _kernels().gemm_inner(library().gemm[FLOATS[a.dtype]], a[None], b[None], partial, parts):
            return np.sum(partial, axis=0, out=out)
        parts = min(parts, max(shape))
    a3 = a if a.ndim == 3 else a[None]
    if not _kernels().gemm(
        library().gemm[FLOATS[a.dtype]],
        a3,
        b if b.ndim == 3 else b[None],
        out if out.ndim == 3 else out[None],
        parts,
    ):
        return np.matmul(a, b, out=out)
    return out


def matmul_on(xp, a, b, out=None):
    """``xp.matmul(a, b, out=out)``: on the host ``matmul`` (split over numba's threads where
    that pays), on a device its own.

    >>> a = np.ones((2, 3))
    >>> matmul_on(np, a, a.T).tolist()
    [[3.0, 3.0], [3.0, 3.0]]
    """
    return matmul(a, b, out) if xp is np else xp.matmul(a, b, out=out)
