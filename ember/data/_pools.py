"""The two kinds of DataLoader workers behind one small interface.

A pool starts ``num_workers`` workers running ``_worker.worker_loop``, each with its own index
queue and one shared result queue. The loader's iterator talks to it only through
``put`` / ``get`` / ``dead`` / ``stop`` / ``shutdown``. A pool never refers back to the
iterator, so the iterator can be garbage-collected (and its finalizer can shut the pool down).
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import threading
import time

from ._worker import ResumeIteration, worker_loop


def _worker_kwargs(args: dict, results, done, index_queue, worker_id: int, method: str) -> dict:
    """The keyword arguments of ``worker_loop`` for one worker."""
    return dict(
        args,
        index_queue=index_queue,
        result_queue=results,
        done_event=done,
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
                kwargs=_worker_kwargs(args, self.results, self.done, q, i, "thread"),
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


class _ResultPipe:
    """A process worker's end of its own result pipe (only that worker holds the write end).

    One pipe per worker, instead of one queue shared by all of them, is what makes a worker's
    death visible at any point of a send: the loader reads end-of-file on that worker's pipe,
    even halfway through a message, where a shared queue would leave it waiting for the rest
    of the message forever (and a lock the dead worker held would block its siblings).

    A feeder thread sends (as ``multiprocessing.Queue``'s does), so the worker goes on loading
    its next batch while the loader has yet to read this one. ``close`` waits for what is
    queued to be sent; after ``cancel_join_thread`` it drops it instead.
    """

    def __init__(self, conn) -> None:
        self.conn = conn
        self.pending = None  # queue.Queue, made in the worker (a Queue can't be pickled)
        self.feeder = None
        self.cancelled = False

    def __getstate__(self):
        return {"conn": self.conn}

    def __setstate__(self, state) -> None:
        self.__init__(state["conn"])

    def put(self, item) -> None:
        if self.feeder is None:
            self.pending = queue.Queue()
            self.feeder = threading.Thread(target=self._feed, name="ember-data-feeder", daemon=True)
            self.feeder.start()
        self.pending.put(item)

    def _feed(self) -> None:
        while True:
            item = self.pending.get()
            if item is None or self.cancelled:
                return
            try:
                self.conn.send(item)
            except OSError:  # the loader has gone (closed its end): nobody reads
                return

    def cancel_join_thread(self) -> None:
        self.cancelled = True

    def close(self) -> None:
        if self.feeder is not None:
            self.pending.put(None)
            if not self.cancelled:
                self.feeder.join()
        self.conn.close()


class _Flag:
    """A lock-free shared flag with ``Event``'s ``set`` / ``is_set``.

    A ``multiprocessing.Event`` takes a lock in ``is_set``: a worker killed inside it would
    leave the lock held and the loader's ``set`` blocked forever. One shared byte can't.
    """

    def __init__(self, value) -> None:
        self.value = value

    def set(self) -> None:
        self.value.value = 1

    def is_set(self) -> bool:
        return bool(self.value.value)


class ProcessPool(_Pool):
    """Worker processes from a multiprocessing context (any start method).

    Each worker sends its results through its own pipe (see ``_ResultPipe``); ``get`` waits on
    all of them at once, and a pipe at end-of-file means its worker has exited (or died).
    """

    def __init__(self, num_workers: int, args: dict, context=None) -> None:
        import multiprocessing

        ctx = context if context is not None else multiprocessing.get_context()
        self.done = _Flag(ctx.RawValue("b", 0))
        self.index_queues = []
        self.workers = []
        self.readers: list = []  # per worker; None once its pipe is at end-of-file
        self.closed = False
        self.pid = os.getpid()
        try:
            for i in range(num_workers):
                q = ctx.Queue()
                q.cancel_join_thread()  # our puts must never block this process's exit
                reader, writer = ctx.Pipe(duplex=False)
                kwargs = _worker_kwargs(
                    args, _ResultPipe(writer), self.done, q, i, "multiprocessing"
                )
                p = ctx.Process(
                    target=worker_loop,
                    kwargs=kwargs,
                    name=f"ember-data-worker-{i}",
                    daemon=True,
                )
                self.index_queues.append(q)
                self.readers.append(reader)
                try:
                    p.start()
                finally:
                    # The worker holds the only write end now (workers started later don't
                    # inherit it), so its exit shows here as end-of-file.
                    writer.close()
                    del kwargs
                self.workers.append(p)
        except Exception:
            self.shutdown()
            raise

    def get(self, timeout: float):
        """The next ``(idx, data)`` from any worker; ``queue.Empty`` if none comes in time."""
        from multiprocessing.connection import wait

        deadline = time.monotonic() + timeout
        while True:
            open_readers = [r for r in self.readers if r is not None]
            ready = wait(open_readers, max(0.0, deadline - time.monotonic()))
            for reader in ready:
                i = self.readers.index(reader)
                try:
                    idx, data = reader.recv()
                except (EOFError, OSError):  # the worker exited, maybe halfway through a send
                    self.readers[i] = None
                    reader.close()
                    self.workers[i].join(timeout=1.0)  # reap it, so dead() sees its exit code
                    raise queue.Empty from None  # the caller checks dead() at once
                if not isinstance(idx, ResumeIteration):
                    data = pickle.loads(data)
                return idx, data
            if time.monotonic() >= deadline or not open_readers:
                raise queue.Empty

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
        if os.getpid() != self.pid:
            # A copy of this pool in a forked child (a worker of a later loader), run by the
            # garbage collector there: the workers belong to the process that started them.
            return
        try:
            self.done.set()
            for p, q in zip(self.workers, self.index_queues):
                if p.is_alive():
                    q.put(None)
            # A worker blocked sending a result nobody will read gets a broken pipe and exits.
            for i, reader in enumerate(self.readers):
                if reader is not None:
                    reader.close()
                    self.readers[i] = None
            deadline = time.monotonic() + 0.5
            for p in self.workers:
                p.join(timeout=max(0.0, deadline - time.monotonic()))
        finally:
            for p in self.workers:  # still busy in user code: nobody needs that result
                if p.is_alive():
                    p.terminate()
            for p in self.workers:
                p.join(timeout=1.0)
                if p.is_alive():  # ignores SIGTERM (a handler of the user's): no orphans
                    p.kill()
                    p.join(timeout=1.0)
            for q in self.index_queues:
                q.close()
