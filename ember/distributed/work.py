"""``Work``: a collective started with ``async_op=True``, finished by ``wait()``.

>>> from ember.distributed.work import Work
>>> Work([], lambda: None, "nothing", 1.0).wait()
True
"""

from __future__ import annotations

from collections.abc import Callable

from . import _mpi


class Work:
    """An MPI request (or several) and what to do once it completes (copy a staged buffer
    back, divide an average, bump the tensors' versions). ``wait()`` polls it under the
    group's timeout and raises ``DistributedError`` naming the collective when it runs out.
    """

    def __init__(
        self,
        requests: list,
        finish: Callable[[], object],
        what: str,
        timeout: float,
        statuses: list | None = None,
    ) -> None:
        self._requests = requests
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
            _mpi.wait_all(self._requests, self._what, limit, self._statuses)
            self._complete()
        return True

    def is_completed(self) -> bool:
        """Whether it has completed (finishing it when it just has); never blocks."""
        if not self._done and _mpi.test_all(self._requests, self._statuses):
            self._complete()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed()

    def result(self):
        """What the collective returned (``recv``'s sender rank), after ``wait()``."""
        self.wait()
        return self._result

    def _complete(self) -> None:
        self._done = True
        self._result = self._finish()

    def __repr__(self) -> str:
        return f"<Work {self._what}: {'done' if self._done else 'pending'}>"


__all__ = ["Work"]
