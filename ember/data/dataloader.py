"""DataLoader: batches from a dataset, in the sampler's order, optionally from background workers.

Workers are threads by default (``worker_type='thread'``: no pickling, and NumPy releases the
GIL while it copies) or processes (``worker_type='process'``, or whenever a
``multiprocessing_context`` is given). Each worker keeps up to ``prefetch_factor`` batches in
flight, so a training loop that is slower than the pipeline never waits for data.

With a GPU, ``pin_memory=True`` copies each batch into page-locked host memory (buffers reused
per shape and dtype; thread workers pin their own batches), and ``device='cuda'`` (ember's
addition to PyTorch's arguments) also moves each batch onto the GPU: the copy of the next batch
is queued on a side stream while the current one is in use (see ``ember.data._pin``).
Without a GPU, ``pin_memory=True`` does nothing (with PyTorch's warning).

>>> import ember
>>> from ember.data import DataLoader, TensorDataset
>>> ds = TensorDataset(ember.arange(10).float(), ember.arange(10))
>>> [y.tolist() for _, y in DataLoader(ds, batch_size=4)]
[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
>>> g = ember.Generator().manual_seed(0)
>>> loader = DataLoader(ds, batch_size=4, shuffle=True, drop_last=True, generator=g)
>>> len(loader), [x.shape for x, _ in loader]
(2, [ember.Size([4]), ember.Size([4])])
"""

from __future__ import annotations

import itertools
import math
import os
import queue
import time
import warnings
import weakref
from collections.abc import Callable, Iterable

from .. import random as _random
from .._errors import EmberError
from ._fetch import make_fetcher
from ._pools import ProcessPool, ThreadPool
from ._worker import POLL_S, ExceptionWrapper, IterableStop, ResumeIteration
from .collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader"]

_LOCKED = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class _InfiniteConstantSampler(Sampler):
    """``None`` forever: the index sampler of an iterable-style dataset."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterate over ``dataset`` in batches, with PyTorch's ``DataLoader`` arguments.

    ``batch_size=None`` turns automatic batching off (each sample goes through ``collate_fn``,
    by default ``default_convert``, alone). ``shuffle=True`` draws a new order each epoch from
    ``generator`` (default: ember's default generator). ``num_workers > 0`` loads in the
    background; ``worker_type`` is ``'thread'`` (default) or ``'process'``. Batches come back in
    the sampler's order. A worker's exception is re-raised here naming the worker and with its
    traceback; a dead worker process or a ``timeout`` (seconds per batch) raises an error instead
    of hanging.

    ``pin_memory=True`` returns batches in page-locked memory (``t.is_pinned()``), so host-to-GPU
    copies of them are asynchronous; without a GPU it does nothing (PyTorch's warning says so).
    ``pin_memory_device`` is accepted for PyTorch compatibility. ``device`` (ember only; e.g.
    ``'cuda'``) moves every batch's tensors there, one batch ahead: the copy of batch *k + 1*
    runs on a side stream (from pinned memory when ``pin_memory=True``) while batch *k* is
    computed, and the current stream waits for a batch's copy before it is used.

    >>> import ember
    >>> from ember.data import DataLoader
    >>> next(iter(DataLoader([{"x": 1.0}, {"x": 2.0}], batch_size=2)))
    {'x': tensor([1., 2.], dtype=ember.float64)}
    """

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable | None = None,
        batch_sampler: Sampler | Iterable | None = None,
        num_workers: int = 0,
        collate_fn: Callable | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
        worker_type: str | None = None,
        device=None,
    ) -> None:
        object.__setattr__(self, "_initialized", False)
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and timeout:
            raise ValueError(
                f"timeout option needs num_workers > 0 (got timeout={timeout} with num_workers=0)"
            )
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let "
                "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        worker_type = _resolve_worker_type(worker_type, multiprocessing_context, num_workers)

        iterable = isinstance(dataset, IterableDataset)
        if iterable:
            if shuffle not in (False, None):
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler "
                    f"option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        if sampler is None:
            if iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.device = _resolve_device(device)
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = _resolve_context(multiprocessing_context)
        self.in_order = in_order
        self.worker_type = worker_type
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        self._iterable = iterable
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None
        self._IterableDataset_len_called = None
        self._initialized = True
        if worker_type == "process":
            _check_worker_number(num_workers)

    def __setattr__(self, attr, val) -> None:
        if attr in _LOCKED and self.__dict__.get("_initialized"):
            raise ValueError(
                f"{attr} attribute should not be set after {type(self).__name__} is initialized"
            )
        object.__setattr__(self, attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        if self.num_workers == 0:
            it = _SingleProcessIter(self)
        elif not self.persistent_workers:
            it = _WorkerIter(self)
        else:
            if self._iterator is None or self._iterator._pool.closed:
                self._iterator = _WorkerIter(self)
            else:
                self._iterator._reset(self)
            it = self._iterator
        if self.device is not None:
            from ._pin import DevicePrefetcher

            return DevicePrefetcher(it, self.device, pin=it._pin_wanted)
        return it

    def __len__(self) -> int:
        if self._iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)


def _resolve_device(device):
    """``device`` as an ``ember.device``, or None for "leave batches where they are"."""
    if device is None:
        return None
    from ..backend import Device

    dev = Device(device)
    return None if dev.type == "cpu" else dev


def _pin_wanted(loader: DataLoader) -> bool:
    """Whether batches can be pinned: ``pin_memory`` and a GPU; warns once when there is none."""
    if not loader.pin_memory:
        return False
    from ._pin import available

    if available():
        return True
    if not loader.__dict__.get("_warned_no_pin"):
        loader._warned_no_pin = True  # once per loader, not per epoch
        warnings.warn(
            "'pin_memory' argument is set as true but no accelerator is found, then device "
            "pinned memory won't be used.",
            stacklevel=5,
        )
    return False


def _resolve_worker_type(worker_type, context, num_workers) -> str:
    if context is not None and num_workers == 0:
        raise ValueError(
            "multiprocessing_context can only be used with multi-process loading "
            f"(num_workers > 0), but got num_workers={num_workers}"
        )
    if worker_type is None:
        return "process" if context is not None else "thread"
    if worker_type not in ("thread", "process"):
        raise ValueError(f"worker_type should be 'thread' or 'process', but got {worker_type!r}")
    if worker_type == "thread" and context is not None:
        raise ValueError("multiprocessing_context option needs worker_type='process'")
    return worker_type


def _resolve_context(context):
    if context is None:
        return None
    import multiprocessing

    if isinstance(context, str):
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise ValueError(
                f"multiprocessing_context option should specify a valid start method in "
                f"{methods!r}, but got multiprocessing_context={context!r}"
            )
        return multiprocessing.get_context(context)
    if not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError(
            "multiprocessing_context option should be a valid context object or a string "
            f"specifying the start method, but got multiprocessing_context={context}"
        )
    return context


def _check_worker_number(num_workers: int) -> None:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count()
    if cpus is not None and num_workers > cpus:
        warnings.warn(
            f"This DataLoader will create {num_workers} worker processes in total. Our suggested "
            f"max number of worker in current system is {cpus}, which is smaller than what this "
            "DataLoader is going to create. Please be aware that excessive worker creation might "
            "get DataLoader running slow or even freeze, lower the worker number to avoid "
            "potential slowness/freeze if necessary.",
            stacklevel=3,
        )


class _BaseIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._len_called = loader._IterableDataset_len_called
        self._sampler_iter = iter(self._index_sampler)
        # Drawn even without workers, so the generator advances the same way either way.
        self._base_seed = int(_random.rng(loader.generator).integers(0, 2**63 - 1))
        self._num_yielded = 0
        self._pin_wanted = _pin_wanted(loader)
        self._pin = self._pin_wanted and loader.device is None  # else the prefetcher pins

    def __iter__(self):
        return self

    def _reset(self, loader: DataLoader) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._len_called = loader._IterableDataset_len_called

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if self._iterable and self._len_called is not None and self._num_yielded > self._len_called:
            msg = (
                f"Length of IterableDataset {self._dataset} was reported to be "
                f"{self._len_called} (when accessing len(dataloader)), but {self._num_yielded} "
                "samples have been fetched. "
            )
            if self._num_workers > 0:
                msg += (
                    "For multi-worker data loading, this could be caused by not properly "
                    "configuring the IterableDataset replica at each worker "
                    "(see ember.data.get_worker_info)."
                )
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._fetcher = make_fetcher(
            self._iterable, self._dataset, self._auto_collation, self._collate_fn, self._drop_last
        )

    def _next_data(self):
        index = next(self._sampler_iter)  # may raise StopIteration
        data = self._fetcher.fetch(index)  # may raise StopIteration
        if self._pin:
            from ._pin import pin

            data = pin(data)
        return data


class _WorkerIter(_BaseIter):
    """Hands indices to workers round-robin, keeps ``prefetch_factor * num_workers`` batches in
    flight, and returns results in order (or as they come with ``in_order=False``)."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._prefetch = loader.prefetch_factor
        self._in_order = loader.in_order
        self._persistent = loader.persistent_workers
        if not self._prefetch:
            raise ValueError("prefetch_factor must be positive when num_workers > 0")
        args = dict(
            iterable=self._iterable,
            dataset=self._dataset,
            auto_collation=self._auto_collation,
            collate_fn=self._collate_fn,
            drop_last=self._drop_last,
            base_seed=self._base_seed,
            init_fn=loader.worker_init_fn,
            num_workers=self._num_workers,
        )
        if loader.worker_type == "thread":
            # thread workers pin their own batches (off the main thread); processes can't
            # hand pinned memory over, so their batches are pinned here on arrival
            self._pool = ThreadPool(self._num_workers, dict(args, pin=self._pin_wanted))
            self._pin = False
        else:
            self._pool = ProcessPool(self._num_workers, args, loader.multiprocessing_context)
        # Shut the workers down when this iterator is dropped (or at interpreter exit).
        self._finalizer = weakref.finalize(self, self._pool.shutdown)
        self._start_epoch(first=True)

    def _reset(self, loader: DataLoader) -> None:
        super()._reset(loader)
        self._start_epoch(first=False)

    def _start_epoch(self, first: bool) -> None:
        n = self._num_workers
        self._send_idx = 0  # index of the next task to send
        self._rcvd_idx = 0  # index of the next task to return
        self._task_info: dict = {}  # idx -> (worker_id,) or (worker_id, data)
        self._active = [True] * n
        self._worker_tasks = [0] * n
        self._worker_cycle = itertools.cycle(range(n))
        if not first:  # persistent workers: start a new epoch, dropping results of the last one
            for i in range(n):
                self._pool.put(i, ResumeIteration())
            acks = 0
            while acks < n:
                idx, _ = self._get_data()
                acks += isinstance(idx, ResumeIteration)
        for _ in range(self._prefetch * n):
            self._try_put_index()

    def _try_put_index(self) -> None:
        max_tasks = self._prefetch * self._num_workers
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next active worker, if any
            worker_id = next(self._worker_cycle)
            if self._active[worker_id] and (
                self._in_order or self._worker_tasks[worker_id] < max_tasks // sum(self._active)
            ):
                break
        else:
            return
        self._pool.put(worker_id, (self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._worker_tasks[worker_id] += 1
        self._send_idx += 1

    def _get_data(self):
        """The next result from any worker; raises on timeout or a dead worker."""
        deadline = time.monotonic() + self._timeout if self._timeout else None
        while True:
            wait = (
                POLL_S if deadline is None else max(0.0, min(POLL_S, deadline - time.monotonic()))
            )
            try:
                return self._pool.get(wait)
            except queue.Empty:
                pass
            dead = [
                text + self._lost_text(i)
                for i, active in enumerate(self._active)
                if active
                for text in self._pool.dead([i])
            ]
            if dead:
                self._shutdown()
                raise EmberError(f"DataLoader {'; '.join(dead)}")
            if deadline is not None and time.monotonic() >= deadline:
                raise EmberError(
                    f"DataLoader timed out after {self._timeout} seconds waiting for batch "
                    f"{self._rcvd_idx} from worker {self._task_info.get(self._rcvd_idx, ('?',))[0]}"
                )

    def _lost_text(self, worker_id: int) -> str:
        """The batches a dead worker took with it, for its error message."""
        lost = [i for i, info in sorted(self._task_info.items()) if info == (worker_id,)]
        if not lost:
            return ""
        shown = ", ".join(map(str, lost[:8])) + (", ..." if len(lost) > 8 else "")
        return f" while loading batch{'es' if len(lost) > 1 else ''} {shown}"

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:  # skip tasks of workers that have ended
                info = self._task_info.get(self._rcvd_idx)
                if info and (len(info) == 2 or self._active[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:  # already here
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process(data, worker_id)
            if self._pool.closed:
                raise EmberError("DataLoader: this iterator's workers have been shut down")
            idx, data = self._get_data()
            if isinstance(idx, ResumeIteration):
                continue  # a stray acknowledgement
            if isinstance(data, IterableStop):
                self._active[data.worker_id] = False
                if not self._persistent:
                    self._pool.stop(data.worker_id)
                self._try_put_index()
                continue
            if idx == self._rcvd_idx:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process(data, worker_id)
            if not self._in_order:
                worker_id = self._task_info.pop(idx)[0]
                return self._process(data, worker_id)
            self._task_info[idx] += (data,)

    def _process(self, data, worker_id: int):
        self._worker_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        if self._pin:
            from ._pin import pin

            data = pin(data)
        return data

    def _shutdown(self) -> None:
        self._finalizer()  # runs pool.shutdown once
