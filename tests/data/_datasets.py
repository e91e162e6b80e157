"""Datasets for the DataLoader tests, at module level so process workers (any start method) can
unpickle them. Each is written against a module ``lib`` (``ember.data`` or ``torch.utils.data``)
so the same dataset can feed both loaders in the parity tests. No torch import here: spawned
workers import this module, and should start fast."""

from __future__ import annotations

import os
import random
import signal
import time

import numpy as np

import ember
import ember.data as edata


class Squares(edata.Dataset):
    """``i -> (i, i*i as float32 array)``, optionally slower for some indices."""

    def __init__(self, n: int, slow: dict | None = None) -> None:
        self.n, self.slow = n, slow or {}

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if i in self.slow:
            time.sleep(self.slow[i])
        return i, np.full(3, i * i, dtype=np.float32)


class _FailsAt(edata.Dataset):
    """``n`` samples ``i -> i``, except that loading index ``bad`` fails (how: the subclass)."""

    def __init__(self, n: int, bad: int) -> None:
        self.n, self.bad = n, bad

    def __len__(self) -> int:
        return self.n


class Raising(_FailsAt):
    """Raises ValueError at ``bad``."""

    def __getitem__(self, i):
        if i == self.bad:
            raise ValueError(f"bad sample {i}")
        return i


class Unpicklable(edata.Dataset):
    """Samples are lambdas, which cannot cross a process boundary."""

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i):
        return lambda: i


class Killing(_FailsAt):
    """The worker process that loads ``bad`` kills itself with SIGKILL."""

    def __getitem__(self, i):
        if i == self.bad:
            os.kill(os.getpid(), signal.SIGKILL)
        return i


class Sleepy(edata.Dataset):
    def __init__(self, n: int, seconds: float) -> None:
        self.n, self.seconds = n, seconds

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        time.sleep(self.seconds)
        return i


class SeedProbe(edata.Dataset):
    """Reports the worker's id, seed and first draws from the global and per-worker generators."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, i):
        info = edata.get_worker_info()
        if info is None:
            return (-1, 0, 0.0, 0.0, 0.0, os.getpid())
        if info.rng is not None:  # thread workers: per-worker generators
            r = info.rng.random.random()
            n = float(info.rng.numpy.random())
            e = float(ember.rand(1, generator=info.rng.ember).item())
        else:
            r, n, e = random.random(), float(np.random.rand()), float(ember.rand(1).item())
        return (info.id, info.seed, r, n, e, os.getpid())


def make_range_stream(lib):
    """An IterableDataset over ``range(start, end)`` that shards itself across workers."""
    base = lib.IterableDataset
    get_info = lib.get_worker_info

    class RangeStream(base):
        def __init__(self, start: int, end: int) -> None:
            self.start, self.end = start, end

        def __iter__(self):
            info = get_info()
            if info is None:
                return iter(range(self.start, self.end))
            per = -(-(self.end - self.start) // info.num_workers)
            lo = self.start + info.id * per
            return iter(range(lo, min(lo + per, self.end)))

        def __len__(self) -> int:
            return self.end - self.start

    return RangeStream


EmberRangeStream = make_range_stream(edata)
EmberRangeStream.__qualname__ = EmberRangeStream.__name__ = "EmberRangeStream"


class Unsharded(edata.IterableDataset):
    """Every worker yields the whole range (so with 2 workers each item comes twice)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self):
        return iter(range(self.n))


def record_worker(worker_id: int) -> None:
    """A worker_init_fn that leaves a mark readable through get_worker_info()."""
    info = edata.get_worker_info()
    info.dataset.inited = getattr(info.dataset, "inited", ()) + (worker_id,)


class InitProbe(edata.Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i):
        info = edata.get_worker_info()
        return (info.id, tuple(getattr(self, "inited", ())))


class PidProbe(edata.Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i):
        return (i, os.getpid())
