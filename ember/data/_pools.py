"""The two kinds of DataLoader workers behind one small interface.

A pool starts ``num_workers`` workers running ``_worker.worker_loop``, each with its own index
queue and one shared result queue. The loader's iterator talks to it only through
``put`` / ``get`` / ``dead`` / ``stop`` / ``shutdown``. A pool never refers back to the
iterator, so the iterator can be garbage-collected (and its finalizer can shut the pool down).
"""

from __future__ import annotations

import pickle
import queue
import signal
import threading
import time

from ._worker import ResumeIteration, worker_loop


def _worker_kwargs(args: dict, pool, index_queue, worker_id: int, method: str) -> dict:
    """The keyword arguments of ``worker_loop`` for one worker of ``pool``."""
    return dict(
        args,
        index_queue=index_queue,
        result_queue=pool.results,
        done_event=pool.done,
        worker_id=worker_id,
        method=method,
    )


class _Pool:
    """What both pools share: one index queue per worker (``None`` tells a worker to stop)."""

    index_queues: list

    def put(self, worker_id: int, task) -> None:
        self.index_queues[worker_id].put(task)

    def stop(self, worker_id: int) -> None:
        self.index_queues[worker_id].put(None)


class ThreadPool(_Pool):
    """Worker threads (the default): no pickling, shared memory, the GIL released in NumPy."""

    def __init__(self, num_workers: int, args: dict) -> None:
        self.results: queue.Queue = queue.Queue()
        self.done = threading.Event()
        self.index_queues = [queue.Queue() for _ in range(num_workers)]
        self.workers = []
        for i, q in enumerate(self.index_queues):
            t = threading.Thread(
                target=worker_loop,
                kwargs=_worker_kwargs(args, self, q, i, "thread"),
                name=f"ember-data-worker-{i}",
                daemon=True,
            )
            t.start()
            self.workers.append(t)
        self.closed = False

    def get(self, timeout: float):
        return self.results.get(timeout=timeout)

    def dead(self, worker_ids) -> list[str]:
        """Descriptions of the given workers that are no longer running."""
        return [
            f"worker thread {i} exited unexpectedly"
            for i in worker_ids
            if not self.workers[i].is_alive()
        ]

    def shutdown(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.done.set()
        for q in self.index_queues:
            q.put(None)
        # Idle workers exit at once; one busy in user code finishes that item and then exits on
        # its own (threads can't be killed; they are daemons), so don't make the caller wait.
        deadline = time.monotonic() + 0.1
        current = threading.current_thread()
        for t in self.workers:
            if t is not current:
                t.join(timeout=max(0.0, deadline - time.monotonic()))


def _exit_text(code) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class ProcessPool(_Pool):
    """Worker processes from a multiprocessing context (any start method)."""

    def __init__(self, num_workers: int, args: dict, context=None) -> None:
        import multiprocessing

        ctx = context if context is not None else multiprocessing.get_context()
        self.results = ctx.Queue()
        self.done = ctx.Event()
        self.index_queues = []
        self.workers = []
        self.closed = False
        try:
            for i in range(num_workers):
                q = ctx.Queue()
                q.cancel_join_thread()  # our puts must never block this process's exit
                p = ctx.Process(
                    target=worker_loop,
                    kwargs=_worker_kwargs(args, self, q, i, "multiprocessing"),
                    name=f"ember-data-worker-{i}",
                    daemon=True,
                )
                p.start()
                self.index_queues.append(q)
                self.workers.append(p)
        except Exception:
            self.shutdown()
            raise

    def get(self, timeout: float):
        idx, data = self.results.get(timeout=timeout)
        if not isinstance(idx, ResumeIteration):
            data = pickle.loads(data)
        return idx, data

    def dead(self, worker_ids) -> list[str]:
        out = []
        for i in worker_ids:
            p = self.workers[i]
            if not p.is_alive():
                how = _exit_text(p.exitcode)
                out.append(f"worker process {i} (pid {p.pid}) exited unexpectedly: {how}")
        return out

    def shutdown(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.done.set()
            for p, q in zip(self.workers, self.index_queues):
                if p.is_alive():
                    q.put(None)
            deadline = time.monotonic() + 0.5
            for p in self.workers:
                p.join(timeout=max(0.0, deadline - time.monotonic()))
        finally:
            for p in self.workers:  # still busy in user code: nobody needs that result
                if p.is_alive():
                    p.terminate()
            for p in self.workers:
                p.join(timeout=1.0)
            for q in self.index_queues:
                q.close()
            self.results.cancel_join_thread()
            self.results.close()
