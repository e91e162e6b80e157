"""What runs inside a DataLoader worker (a thread or a process): seeding, the fetch loop, errors.

Everything here is importable at module level and takes only picklable arguments, so process
workers work with every multiprocessing start method (fork, spawn, forkserver).
"""

from __future__ import annotations

import os
import pickle
import queue
import random
import sys
import threading
import traceback
from dataclasses import dataclass

import numpy as np

from ._fetch import make_fetcher

POLL_S = 0.1  # how often a waiting worker or loader looks at whether the other side is alive

_local = threading.local()


@dataclass(frozen=True)
class WorkerRNG:
    """Per-worker generators for thread workers (threads must not reseed the shared ones).

    ``random`` is a ``random.Random``, ``numpy`` a ``numpy.random.Generator`` and ``ember`` an
    ``ember.Generator`` (pass it as ``generator=`` to ember's random functions).
    """

    random: random.Random
    numpy: np.random.Generator
    ember: object


@dataclass(frozen=True)
class WorkerInfo:
    """Information about the DataLoader worker this code runs in (see ``get_worker_info``).

    ``seed`` is this worker's seed; ``dataset`` this worker's copy of the dataset (the same
    object for thread workers); ``rng`` per-worker generators for thread workers (``None`` in
    process workers, whose global ``random``, NumPy and ember generators are seeded instead);
    ``worker_method`` is ``"thread"`` or ``"multiprocessing"``.
    """

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: WorkerRNG | None = None
    worker_method: str = "thread"


def get_worker_info() -> WorkerInfo | None:
    """The current worker's ``WorkerInfo`` inside a DataLoader worker, else ``None``.

    >>> from ember.data import get_worker_info
    >>> get_worker_info() is None   # the main thread is not a worker
    True
    """
    return getattr(_local, "info", None)


@dataclass(frozen=True)
class ResumeIteration:
    """Sent to persistent workers at the start of each new epoch."""


@dataclass(frozen=True)
class IterableStop:
    """A worker's iterable dataset has run dry."""

    worker_id: int


class KeyErrorMessage(str):
    """A str whose repr is itself, so a re-raised KeyError prints its traceback text readably."""

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with its traceback text."""

    def __init__(self, where: str, exc_info=None) -> None:
        exc_type, exc, tb = exc_info or sys.exc_info()
        self.exc_type = exc_type
        self.where = where
        self.msg = "".join(traceback.format_exception(exc_type, exc, tb))

    def reraise(self):
        """Raise the worker's exception type (or RuntimeError) with the worker id and traceback."""
        name = getattr(self.exc_type, "__name__", "Exception")
        msg = f"Caught {name} {self.where}.\nOriginal {self.msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        if self.exc_type is None:
            raise RuntimeError(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exc


def worker_seed(base_seed: int, worker_id: int) -> tuple[int, np.random.SeedSequence]:
    """This worker's seed and SeedSequence, derived from the iterator's base seed."""
    ss = np.random.SeedSequence(base_seed, spawn_key=(worker_id,))
    return int(ss.generate_state(1, np.uint64)[0] >> np.uint64(1)), ss


def _seed_worker(base_seed: int, worker_id: int, method: str) -> tuple[int, WorkerRNG | None]:
    from .. import random as ember_random

    seed, ss = worker_seed(base_seed, worker_id)
    if method == "thread":
        # The main thread and the other workers share the global generators: give this worker
        # its own instead of reseeding theirs.
        gen = ember_random.Generator().manual_seed(seed)
        return seed, WorkerRNG(random.Random(seed), np.random.default_rng(ss), gen)
    random.seed(seed)
    np.random.seed(ss.generate_state(4))
    # The default generator only: ember.manual_seed would also seed CuPy, and touching CUDA in a
    # forked child fails.
    ember_random.default_generator.manual_seed(seed)
    return seed, None


class _ParentWatch:
    """Whether the process that started this worker process is still there."""

    def __init__(self, method: str) -> None:
        self.parent = os.getppid() if method != "thread" else None

    def alive(self) -> bool:
        return self.parent is None or os.getppid() == self.parent


def worker_loop(
    iterable: bool,
    dataset,
    index_queue,
    result_queue,
    done_event,
    auto_collation: bool,
    collate_fn,
    drop_last: bool,
    base_seed: int,
    init_fn,
    worker_id: int,
    num_workers: int,
    method: str,
    pin: bool = False,
) -> None:
    """Fetch ``(idx, index)`` tasks until told to stop (``None``) or the loader goes away.

    Puts ``(idx, batch)``, ``(idx, ExceptionWrapper)`` or ``(idx, IterableStop)`` on the result
    queue. Process workers send batches pickled (so an unpicklable batch is an error the loader
    sees, not a silent loss in the queue's feeder thread). ``pin`` (thread workers only): copy
    each batch into pinned memory here, off the loader's thread.
    """
    kind = "process" if method != "thread" else "thread"
    where = f"in DataLoader worker {kind} {worker_id}"
    seed, rng = _seed_worker(base_seed, worker_id, method)
    _local.info = WorkerInfo(worker_id, num_workers, seed, dataset, rng, method)
    init_error = None
    fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
    except Exception:
        init_error = ExceptionWrapper(where)
    watch = _ParentWatch(method)
    ended = False
    try:
        while watch.alive():
            try:
                task = index_queue.get(timeout=POLL_S)
            except queue.Empty:
                continue
            if task is None:
                break
            if isinstance(task, ResumeIteration):
                ended = False
                try:
                    fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                except Exception:
                    init_error = ExceptionWrapper(where)
                result_queue.put((task, None))
                continue
            if done_event.is_set() or ended:
                continue
            idx, index = task
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher.fetch(index)
                    if pin:
                        from ._pin import pin as pin_batch

                        data = pin_batch(data)
                except StopIteration:
                    if not iterable:
                        data = ExceptionWrapper(where)
                    else:
                        data, ended = IterableStop(worker_id), True
                except Exception:
                    data = ExceptionWrapper(where)
            if kind == "process":
                data = _pickled(data, where)
            result_queue.put((idx, data))
            del data, task, index
    except KeyboardInterrupt:
        pass
    finally:
        _local.info = None
        if kind == "process":
            if done_event.is_set():
                result_queue.cancel_join_thread()  # never block exit on results nobody reads
            result_queue.close()  # else: send what is queued first


def _pickled(data, where: str) -> bytes:
    try:
        return pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        wrapped = data if isinstance(data, ExceptionWrapper) else ExceptionWrapper(where)
        wrapped.exc_type = None  # its class may be what can't be pickled
        return pickle.dumps(wrapped, protocol=pickle.HIGHEST_PROTOCOL)
