"""GPU memory statistics on CuPy's memory pool, with the peak that CuPy does not keep.

CuPy allocates device memory from ``cupy.get_default_memory_pool()``: ``used_bytes()`` is
what live arrays hold on the current GPU (``memory_allocated``), ``total_bytes()`` that plus
the freed blocks the pool keeps for reuse (``memory_reserved``), ``free_all_blocks()`` hands
the cached blocks back to the driver (``empty_cache``).

CuPy keeps no high-water mark, so the peak is ember's own bookkeeping: when CuPy loads, ember
sets CuPy's allocator (``cupy.cuda.set_allocator``, process-wide) to ``_Tracker``, a thin
callable around the same pool's ``malloc`` that keeps the largest ``used_bytes()`` per GPU.
Every CuPy allocation goes through it, whichever thread or library makes it, at the cost of one
Python call per allocation (frees cost nothing: usage only falls then, so the peak cannot
change). CuPy's ``MemoryHook`` would also see every allocation but is registered per thread, so
allocations in DataLoader threads would be missed.

CuPy's ``used_bytes()`` adds up every chunk in use (a loop over the pool's live blocks), so
asking it at each allocation made an allocation's cost grow with the number of live arrays.
The tracker asks it only when a new peak is possible: it keeps a bound, the last exact reading
plus every block allocated since (frees are not seen, so the bound only overestimates), and
reads ``used_bytes()`` when the bound passes the peak. In a training loop whose usage repeats,
that is about once per peak's worth of allocated bytes, and the peak stays exact.

If code sets its own allocator after ember loaded CuPy, the current figures still come from the
default pool but the peak stops moving; ``attach`` again to resume.

``scratch`` hands out transient buffers for an op's intermediate data (the convolutions'
padded copies and patch matrices) with the policy of each device: reused per thread on the
host, fresh from CuPy's pool on a GPU.
"""

from __future__ import annotations

import threading

import numpy as np

from .. import _caches

_tracker = None
_local = threading.local()


class _Tracker:
    """CuPy allocator: the pool's ``malloc`` plus a per-GPU peak of ``used_bytes()``."""

    __slots__ = ("pool", "peak", "bound")

    def __init__(self, pool) -> None:
        self.pool = pool
        self.peak: dict[int, int] = {}
        self.bound: dict[int, int] = {}  # per GPU: bytes in use are at most this

    def __call__(self, size: int):
        mem = self.pool.malloc(size)
        dev = mem.device_id
        bound = self.bound.get(dev, 0) + mem.mem.size  # the block as the pool rounded it
        if bound > self.peak.get(dev, 0):
            bound = self.pool.used_bytes()  # the current device's pool: where mem was allocated
            if bound > self.peak.get(dev, 0):
                self.peak[dev] = bound
        self.bound[dev] = bound
        return mem


def attach(cp) -> None:
    """Route ``cp``'s allocations through a fresh tracker of its default pool."""
    global _tracker
    _tracker = _Tracker(cp.get_default_memory_pool())
    cp.cuda.set_allocator(_tracker)


def detach() -> None:
    """Give CuPy its default pool's allocator back (used when a stand-in is uninstalled)."""
    global _tracker
    from . import cuda

    if _tracker is not None and cuda._cupy is not None:
        cuda._cupy.cuda.set_allocator(_tracker.pool.malloc)
    _tracker = None


def _pool_on(device):
    """``(cupy, pool, gpu_index)`` for a device argument (None: the current GPU)."""
    from . import cuda

    cp = cuda.xp()
    return cp, cp.get_default_memory_pool(), cuda.resolve(cuda._index(device))


def memory_allocated(device=None) -> int:
    """Bytes held by live arrays on a GPU (CuPy pool's ``used_bytes``)."""
    cp, pool, index = _pool_on(device)
    with cp.cuda.Device(index):
        return int(pool.used_bytes())


def memory_reserved(device=None) -> int:
    """Bytes the pool holds on a GPU, in use or cached for reuse (``total_bytes``)."""
    cp, pool, index = _pool_on(device)
    with cp.cuda.Device(index):
        return int(pool.total_bytes())


def max_memory_allocated(device=None) -> int:
    """The most bytes live arrays held on a GPU since start or ``reset_peak_memory_stats``."""
    now = memory_allocated(device)
    _, _, index = _pool_on(device)
    return max(now, _tracker.peak.get(index, 0) if _tracker is not None else 0)


def reset_peak_memory_stats(device=None) -> None:
    """Start the peak afresh from the current usage."""
    now = memory_allocated(device)
    _, _, index = _pool_on(device)
    if _tracker is not None:
        _tracker.peak[index] = _tracker.bound[index] = now


def empty_cache() -> None:
    """Return the pool's cached (unused) blocks to the driver; live arrays are untouched."""
    from . import cuda

    if cuda._cupy is not None:
        cuda._cupy.get_default_memory_pool().free_all_blocks()


# -- transient buffers -----------------------------------------------------------------------


def scratch(xp, slot: str, shape: tuple, dtype):
    """A buffer of ``shape`` for data an op uses and drops before it returns (its caller must
    be done with it before the next request for ``slot``).

    On the CPU it is a per-thread buffer per ``(slot, dtype)``, reused from call to call and
    kept at the largest size seen: a fresh 150 MB patch matrix costs ~20 ms of page faults on
    every call, more than filling it. On a GPU it is a fresh array: CuPy's pool already recycles
    device memory, and a CUDA graph must own the buffers it captured (a buffer kept here and
    replaced by a larger one later would be freed under the graph).

    >>> scratch(np, "doc", (2, 3), np.float32).shape
    (2, 3)
    """
    if xp is not np:
        return xp.empty(shape, dtype=dtype)
    size = 1
    for s in shape:
        size *= s
    bufs = getattr(_local, "bufs", None)
    if bufs is None:
        bufs = _local.bufs = {}
    key = (slot, np.dtype(dtype).str)
    buf = bufs.get(key)
    if buf is None or buf.size < size:
        buf = bufs[key] = np.empty(max(size, 1), dtype=dtype)
    return buf[:size].reshape(shape)


# Host convolutions gather their patch matrix a block of images at a time into scratch of about
# HOST_BLOCK_BYTES (then one GEMM per block, written straight into the output); a batch under
# twice that is one block. Measured on 2 cores (64x64x32x32, 3x3: 151 MB of patches): forward
# blocks of one image (2.4 MB) ran ~12% faster than the whole batch on a quiet machine but 3x
# slower with another process busy on a core (each multithreaded GEMM waits for a descheduled
# BLAS thread); 16-32 MiB blocks kept the forward's pace, but forward + backward ran 10-30%
# slower on a busy machine than one block (the weight gradient gathers the patches again
# instead of reusing the forward's). So blocking only caps the scratch of large batches.
HOST_BLOCK_BYTES = 128 << 20


def block_bytes(xp) -> int | None:
    """Scratch bytes per block of a batched computation, or None for the whole batch at once:
    ``HOST_BLOCK_BYTES`` on the host, None on a GPU (one launch per op beats many small ones,
    and CuPy's pool recycles the memory).

    >>> block_bytes(np) == HOST_BLOCK_BYTES
    True
    """
    return HOST_BLOCK_BYTES if xp is np else None


def release_scratch() -> None:
    """Free this thread's scratch buffers.

    >>> release_scratch()
    """
    _local.bufs = {}


_caches.register(
    "scratch buffers (calling thread)", release_scratch, lambda: len(getattr(_local, "bufs", ()))
)
