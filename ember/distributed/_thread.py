"""The communication thread: asynchronous all-reduces that move while the caller computes.

Open MPI has no progress thread: a non-blocking ``Iallreduce`` moves only while this process
is inside an MPI call (measured at 2 ranks, 14.7 MB in 5 buffers: started, then 40 ms of
matmuls, then ``Waitall``: 76 ms, the sum; testing it every millisecond made it 319 ms), and its
algorithm took twice the blocking one's time (42 ms against 20 ms). So, as gloo does, each
process group gets one thread of its own, with its own duplicate of the group's communicator,
that runs the blocking ``Allreduce`` of each job in the order they were submitted (the same
order on every rank, so the collectives pair up). mpi4py releases the GIL inside MPI calls, so
the caller's backward runs meanwhile (the same 40 ms of matmuls with the thread's all-reduces
in flight: ~48 ms).

It needs ``MPI_THREAD_MULTIPLE`` (the caller's own collectives run on the group's communicator
at the same time); ``available`` says whether MPI gave it, else callers keep the non-blocking
path. A job's end is a ``threading.Event``, so waiting for it costs no CPU (a blocking MPI
call spins), and the waiting side enforces the group's timeout (``Work.wait`` raises
``DistributedError`` naming the collective).

>>> from ember.distributed import _thread
>>> job = _thread.Job(lambda comm: None)
>>> job.run(None); job.done.is_set()
True
"""

from __future__ import annotations

import collections
import threading
import time

from . import _mpi


class Job:
    """``fn(comm)`` to run on a group's communication thread; ``done`` is set once it ran,
    ``error`` holds what it raised."""

    __slots__ = ("fn", "done", "error")

    def __init__(self, fn) -> None:
        self.fn = fn
        self.done = threading.Event()
        self.error = None

    def run(self, comm) -> None:
        try:
            self.fn(comm)
        except BaseException as e:  # noqa: BLE001  (handed to the waiting thread)
            self.error = e
        finally:
            self.done.set()


class CommThread:
    """One process group's communication thread and its duplicate communicator."""

    def __init__(self, comm, name: str) -> None:
        self.comm = comm  # the group's second communicator (``ProcessGroup.async_comm``)
        self.jobs: collections.deque = collections.deque()
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._run, name=f"ember-comm-{name}", daemon=True)
        self.thread.start()

    def submit(self, job: Job) -> Job:
        with self.cond:
            self.jobs.append(job)
            self.cond.notify()
        return job

    def _run(self) -> None:
        while True:
            with self.cond:
                while not self.jobs:
                    self.cond.wait()
                job = self.jobs.popleft()
            if job is None:
                return
            if MEET:
                _meet(self.comm)
            job.run(self.comm)

    def close(self, timeout: float) -> bool:
        """Finish the jobs queued and end the thread; False if it is still inside MPI after
        ``timeout`` seconds (a collective a peer never joined: it is left behind, a daemon)."""
        self.submit(None)
        self.thread.join(timeout)
        return not self.thread.is_alive()


MEET = True
_MEET_SLEEP_S = (2e-5, 2e-4)  # the first and the longest sleep between tests


def _meet(comm) -> None:
    """Wait, sleeping, until every rank of ``comm`` has reached this job (a polled
    ``Ibarrier``): the blocking call after it then spins only while data moves, not while a
    peer is still computing its gradients (that spinning takes the CPU the peer needs)."""
    req = comm.Ibarrier()
    sleep, longest = _MEET_SLEEP_S
    while not req.Test():
        time.sleep(sleep)
        sleep = min(2 * sleep, longest)


_AVAILABLE = None


def available() -> bool:
    """Whether MPI runs with ``MPI_THREAD_MULTIPLE`` (mpi4py asks for it by default)."""
    global _AVAILABLE
    if _AVAILABLE is None:
        MPI = _mpi.mpi()
        _AVAILABLE = MPI.Query_thread() >= MPI.THREAD_MULTIPLE
    return _AVAILABLE


def of(pg) -> CommThread | None:
    """``pg``'s communication thread (started on first use), or None where MPI gives no
    ``MPI_THREAD_MULTIPLE`` or the group has one rank."""
    if not available() or pg.size() == 1:
        return None
    t = pg._comm_thread
    if t is None:
        t = pg._comm_thread = CommThread(pg.async_comm, pg.name)
    return t


__all__ = ["CommThread", "Job", "available", "of"]
