"""``Work``: a collective started with ``async_op=True``, finished by ``wait()``.

>>> from ember.distributed.work import Work
>>> Work([], lambda: None, "nothing", 1.0).wait()
True
"""

from __future__ import annotations

from collections.abc import Callable

from . import _mpi


class Work:
    """An MPI request (or several), or a ``job`` on the group's communication thread
    (``_thread``), and what to do once it completes (copy a staged buffer back, divide an
    average, bump the tensors' versions). ``wait()`` polls the requests, or waits for the job
    without spinning, under the group's timeout and raises ``DistributedError`` naming the
    collective when it runs out (or when the job failed).
    """

    def __init__(
        self,
        requests: list,
        finish: Callable[[], object],
        what: str,
        timeout: float,
        statuses: list | None = None,
        job=None,
    ) -> None:
        self._requests = requests
        self._job = job
        self._finish = finish
        self._what = what
        self._timeout = timeout
        self._statuses = statuses
        self._done = False
        self._result = None

    def wait(self, timeout=None) -> bool:
        """Block until the collective completes (and its outputs are written); True."""
        if not self._done:
            limit = self._timeout if timeout is None else _mpi.seconds(timeout)
            if self._job is not None:
                self._wait_job(limit)
            else:
                _mpi.wait_all(self._requests, self._what, limit, self._statuses)
            self._complete()
        return True

    def is_completed(self) -> bool:
        """Whether it has completed (finishing it when it just has); never blocks."""
        if self._done:
            return True
        if self._job is not None:
            if self._job.done.is_set():
                self._wait_job(0.0)
                self._complete()
        elif _mpi.test_all(self._requests, self._statuses):
            self._complete()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed()

    def result(self):
        """What the collective returned (``recv``'s sender rank), after ``wait()``."""
        self.wait()
        return self._result

    def _wait_job(self, limit: float) -> None:
        job = self._job
        if not job.done.wait(limit):
            raise _mpi.DistributedError(f"{self._what}: timed out after {limit:g} s {_mpi._WHY}")
        if job.error is not None:
            e = job.error
            raise _mpi.DistributedError(f"{self._what}: {type(e).__name__}: {e}") from e

    def _complete(self) -> None:
        self._done = True
        self._result = self._finish()

    def __repr__(self) -> str:
        return f"<Work {self._what}: {'done' if self._done else 'pending'}>"


class StreamWork(Work):
    """A collective launched on a CUDA stream (the NCCL backend, ``_nccl``): ``wait()`` makes
    the caller's current stream wait for its end event and returns at once, without waiting for
    the host (PyTorch's NCCL ``Work.wait``), so a CUDA graph can capture it. ``keep`` holds the
    arrays the collective reads and writes until then.

    >>> StreamWork(None, 0, (), lambda: None, "nothing")  # doctest: +SKIP
    """

    def __init__(self, event, device: int, keep: tuple, finish, what: str) -> None:
        super().__init__([], finish, what, 0.0)
        self._event = event
        self._device = device
        self._keep = keep

    def wait(self, timeout=None) -> bool:
        """Order the current stream after the collective (no host wait); True."""
        if not self._done:
            from ..backend import cuda as _cuda

            cp = _cuda.xp()
            with cp.cuda.Device(self._device):
                cp.cuda.get_current_stream().wait_event(self._event)
            self._complete()
            self._keep = ()
        return True

    def is_completed(self) -> bool:
        """Whether the GPU has finished the collective (a query; never blocks)."""
        return self._done or bool(self._event.done)

    def synchronize(self) -> None:
        """Wait on the host until the collective has finished (PyTorch's ``Work.synchronize``)."""
        self.wait()
        self._event.synchronize()


__all__ = ["StreamWork", "Work"]
