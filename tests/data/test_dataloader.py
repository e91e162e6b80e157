"""DataLoader: order, shuffling, batching, workers (threads and processes), errors, seeding,
cleanup, and parity with torch.utils.data.DataLoader on the same data and order."""

import gc
import multiprocessing
import threading
import time
import warnings

import numpy as np
import pytest

import ember
from ember.data import (
    BatchSampler,
    DataLoader,
    IterableDataset,
    SequentialSampler,
    TensorDataset,
    get_worker_info,
)

from . import _datasets as D

torch = pytest.importorskip("torch")
tdata = torch.utils.data

TorchRangeStream = D.make_range_stream(tdata)  # the same stream for torch's loader
TorchRangeStream.__qualname__ = TorchRangeStream.__name__ = "TorchRangeStream"

# (num_workers, worker_type): in-process, threads, processes
WORKERS = [(0, None), (2, "thread"), (2, "process")]
WORKER_IDS = ["main", "threads", "processes"]


def loader(ds, workers, **kw):
    num, kind = workers
    if num:
        kw.setdefault("worker_type", kind)
    return DataLoader(ds, num_workers=num, **kw)


def plain(batch):
    if isinstance(batch, (ember.Tensor, torch.Tensor)):
        return batch.tolist()
    if isinstance(batch, (list, tuple)):
        return [plain(b) for b in batch]
    if isinstance(batch, dict):
        return {k: plain(v) for k, v in batch.items()}
    return batch


def data_threads():
    return [t for t in threading.enumerate() if t.name.startswith("ember-data-worker")]


@pytest.fixture(autouse=True)
def no_leaks():
    """Every test must leave no worker threads or processes behind."""
    yield
    if data_threads() or multiprocessing.active_children():
        gc.collect()
    deadline = time.monotonic() + 3
    while (data_threads() or multiprocessing.active_children()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not data_threads(), data_threads()
    assert not multiprocessing.active_children(), multiprocessing.active_children()


@pytest.mark.parametrize("workers", WORKERS, ids=WORKER_IDS)
def test_batches_come_in_sampler_order(workers):
    # slow early samples make later batches finish first in the workers
    ds = D.Squares(23, slow={0: 0.05, 5: 0.03})
    batches = list(loader(ds, workers, batch_size=4))
    assert [b[0].tolist() for b in batches] == [
        list(range(i, min(i + 4, 23))) for i in range(0, 23, 4)
    ]
    assert batches[1][1].dtype == ember.float32 and batches[1][1].shape == (4, 3)
    assert batches[1][1].numpy()[:, 0].tolist() == [16.0, 25.0, 36.0, 49.0]
    assert np.array_equal(
        batches[-1][1].numpy(), np.array([[i * i] * 3 for i in (20, 21, 22)], np.float32)
    )


@pytest.mark.parametrize("workers", WORKERS, ids=WORKER_IDS)
def test_matches_torch_dataloader(workers):
    ds = D.Squares(10)
    order = [7, 3, 9, 0, 1, 8, 2, 6, 5, 4]
    for kw in [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None)]:
        ours = [plain(b) for b in loader(ds, workers, sampler=order, **kw)]
        theirs = [plain(b) for b in tdata.DataLoader(ds, sampler=order, **kw)]
        assert ours == theirs, kw
    bs = [[1, 2], [9], [0, 3, 4]]
    assert [plain(b) for b in loader(ds, workers, batch_sampler=bs)] == [
        plain(b) for b in tdata.DataLoader(ds, batch_sampler=bs)
    ]


@pytest.mark.parametrize("workers", WORKERS, ids=WORKER_IDS)
def test_iterable_dataset_sharded_no_duplicates_matches_torch(workers):
    ours = [b.tolist() for b in loader(D.EmberRangeStream(0, 13), workers, batch_size=2)]
    flat = [x for b in ours for x in b]
    assert sorted(flat) == list(range(13)) and len(flat) == 13
    theirs = [
        b.tolist()
        for b in tdata.DataLoader(TorchRangeStream(0, 13), batch_size=2, num_workers=workers[0])
    ]
    assert ours == theirs  # same interleaving of the workers' shards


@pytest.mark.parametrize("workers", WORKERS[1:], ids=WORKER_IDS[1:])
def test_iterable_dataset_drop_last_and_unbatched(workers):
    out = [
        b.tolist() for b in loader(D.EmberRangeStream(0, 7), workers, batch_size=2, drop_last=True)
    ]
    assert out == [[0, 1], [4, 5], [2, 3]]  # shards 0..3 and 4..6: [6] dropped
    theirs = tdata.DataLoader(TorchRangeStream(0, 7), batch_size=2, drop_last=True, num_workers=2)
    assert out == [b.tolist() for b in theirs]
    single = [int(x) for x in loader(D.EmberRangeStream(0, 5), workers, batch_size=None)]
    assert sorted(single) == list(range(5))


def test_iterable_len_and_overrun_warning():
    dl = DataLoader(D.EmberRangeStream(0, 10), batch_size=3)
    assert len(dl) == 4
    assert len(DataLoader(D.EmberRangeStream(0, 10), batch_size=3, drop_last=True)) == 3

    class Liar(IterableDataset):
        def __iter__(self):
            return iter(range(5))

        def __len__(self):
            return 2

    dl = DataLoader(Liar(), batch_size=None)
    assert len(dl) == 2
    with pytest.warns(UserWarning, match="was reported to be 2"):
        list(dl)


def test_len_drop_last_and_batch_size_none():
    ds = TensorDataset(ember.arange(10))
    assert len(DataLoader(ds, batch_size=3)) == 4
    assert len(DataLoader(ds, batch_size=3, drop_last=True)) == 3
    assert [len(b[0]) for b in DataLoader(ds, batch_size=3, drop_last=True)] == [3, 3, 3]
    unbatched = list(DataLoader(ds, batch_size=None))
    assert len(unbatched) == 10 and unbatched[4][0].shape == () and unbatched[4][0].item() == 4
    assert len(DataLoader(ds, batch_sampler=[[0, 1], [2]])) == 2


@pytest.mark.parametrize("wrap", ["plain", "subset", "subset_of_subset"])
def test_tensor_dataset_fast_path_equals_generic_collate(wrap):
    ds = TensorDataset(ember.randn(10, 2, 3), ember.arange(10), ember.arange(10) > 4)
    if wrap != "plain":
        ds = ember.data.Subset(ds, [9, 8, 7, 6, 5, 4, 3, 2, 1, 0])
    if wrap == "subset_of_subset":
        ds = ember.data.random_split(ds, [6, 4], generator=ember.Generator().manual_seed(0))[0]
    order = [5, 0, 4, 4, 2, -1, 1]
    fast = list(DataLoader(ds, batch_size=3, sampler=order))
    slow = list(
        DataLoader(
            ds, batch_size=3, sampler=order, collate_fn=lambda b: ember.data.default_collate(b)
        )
    )
    assert len(fast) == len(slow) == 3
    for f, g in zip(fast, slow):
        assert isinstance(f, list) and len(f) == 3
        for a, b in zip(f, g):
            assert a.dtype == b.dtype and a.shape == b.shape
            assert np.array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("workers", WORKERS, ids=WORKER_IDS)
def test_shuffle_reproducible_with_generator_and_manual_seed(workers):
    ds = D.Squares(17)

    def epoch(**kw):
        return [
            x for b in loader(ds, workers, batch_size=5, shuffle=True, **kw) for x in b[0].tolist()
        ]

    a = epoch(generator=ember.Generator().manual_seed(7))
    assert sorted(a) == list(range(17)) and a != list(range(17))
    assert epoch(generator=ember.Generator().manual_seed(7)) == a
    assert epoch(generator=ember.Generator().manual_seed(8)) != a
    ember.manual_seed(3)
    b = epoch()
    ember.manual_seed(3)
    assert epoch() == b
    # the same generator seed gives the same order whatever the workers
    assert epoch(generator=ember.Generator().manual_seed(7)) == [
        x
        for b in DataLoader(
            ds, batch_size=5, shuffle=True, generator=ember.Generator().manual_seed(7)
        )
        for x in b[0].tolist()
    ]


def test_each_epoch_reshuffles():
    dl = DataLoader(TensorDataset(ember.arange(20)), batch_size=20, shuffle=True)
    first, second = (next(iter(dl))[0].tolist() for _ in range(2))
    assert first != second and sorted(first) == sorted(second)


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_worker_error_names_worker_and_keeps_traceback(kind):
    dl = DataLoader(D.Raising(8, bad=5), batch_size=2, num_workers=2, worker_type=kind)
    it = iter(dl)
    assert next(it).tolist() == [0, 1] and next(it).tolist() == [2, 3]
    with pytest.raises(ValueError) as info:
        next(it)
    msg = str(info.value)
    assert f"in DataLoader worker {kind} 0" in msg  # batch 2 went to worker 0
    assert "Traceback (most recent call last)" in msg and "bad sample 5" in msg
    assert "__getitem__" in msg and "_datasets.py" in msg
    assert next(it).tolist() == [6, 7]  # the loader carries on, as PyTorch's does
    del it


def test_unpicklable_batch_from_process_worker_is_an_error_not_a_hang():
    dl = DataLoader(
        D.Unpicklable(), batch_size=None, num_workers=1, worker_type="process", timeout=10
    )
    with pytest.raises(RuntimeError, match="in DataLoader worker process 0"):
        next(iter(dl))


def test_killed_worker_process_gives_clear_error_quickly():
    dl = DataLoader(
        D.Killing(12, bad=4), batch_size=2, num_workers=2, worker_type="process", timeout=20
    )
    start = time.monotonic()
    with pytest.raises(
        RuntimeError,
        match=r"worker process 0 \(pid \d+\) exited unexpectedly: killed by signal SIGKILL",
    ):
        for _ in dl:
            pass
    assert time.monotonic() - start < 5


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_worker_thread_that_exits_gives_clear_error():
    class Exits(ember.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            if i == 1:
                raise SystemExit
            return i

    with pytest.raises(RuntimeError, match="DataLoader worker thread 1 exited unexpectedly"):
        list(DataLoader(Exits(), batch_size=None, num_workers=2, timeout=20))


def test_timeout_raises_clear_error():
    dl = DataLoader(D.Sleepy(4, 0.6), batch_size=None, num_workers=1, timeout=0.05)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.05 seconds"):
        next(iter(dl))
    assert time.monotonic() - start < 0.5  # neither the sample nor the shutdown waited for


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_worker_seeds_distinct_and_reproducible(kind):
    def run(seed):
        ember.manual_seed(seed)
        dl = DataLoader(D.SeedProbe(), batch_size=None, num_workers=2, worker_type=kind)
        return {row[0]: row[1:5] for row in dl}

    a, b, c = run(0), run(0), run(1)
    assert sorted(a) == [0, 1]
    assert a == b  # reproducible from the base seed
    assert a[0] != a[1] and all(x != y for x, y in zip(a[0], a[1]))  # distinct per worker
    assert a != c
    g = ember.Generator().manual_seed(0)
    dl = DataLoader(D.SeedProbe(), batch_size=None, num_workers=2, worker_type=kind, generator=g)
    assert {row[0]: row[1:5] for row in dl} != {}


def test_thread_workers_leave_global_generators_alone():
    ember.manual_seed(5)
    np.random.seed(5)
    expected_np = np.random.RandomState(5).rand()
    list(DataLoader(D.SeedProbe(), batch_size=None, num_workers=2))
    assert np.random.rand() == expected_np


def test_worker_init_fn_runs_in_every_worker():
    seen = []
    lock = threading.Lock()

    def init(worker_id):
        with lock:
            seen.append((worker_id, get_worker_info().id, get_worker_info().num_workers))

    list(DataLoader(range(6), num_workers=3, worker_init_fn=init))
    assert sorted(seen) == [(0, 0, 3), (1, 1, 3), (2, 2, 3)]
    rows = list(
        DataLoader(
            D.InitProbe(),
            batch_size=None,
            num_workers=2,
            worker_type="process",
            worker_init_fn=D.record_worker,
        )
    )
    assert sorted({(r[0], tuple(r[1])) for r in rows}) == [(0, (0,)), (1, (1,))]


def test_worker_init_fn_error_surfaces():
    def bad_init(worker_id):
        raise KeyError("no config")

    with pytest.raises(KeyError, match="in DataLoader worker thread"):
        list(DataLoader(range(4), num_workers=2, worker_init_fn=bad_init))


def test_get_worker_info_in_threads():
    assert get_worker_info() is None
    infos = list(DataLoader(D.SeedProbe(), batch_size=None, num_workers=2))
    assert {row[0] for row in infos} == {0, 1}
    assert get_worker_info() is None


def test_spawn_context_works():
    dl = DataLoader(D.Squares(5), batch_size=2, num_workers=1, multiprocessing_context="spawn")
    assert dl.worker_type == "process"
    assert [b[0].tolist() for b in dl] == [[0, 1], [2, 3], [4]]


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_persistent_workers_reused_across_epochs(kind):
    dl = DataLoader(
        D.PidProbe(), batch_size=2, num_workers=2, worker_type=kind, persistent_workers=True
    )
    first = [plain(b) for b in dl]
    it = dl._iterator
    # abandon an epoch half-way: the next one must still be complete and in order
    next(iter(dl))
    second = [plain(b) for b in dl]
    assert dl._iterator is it
    assert [b[0] for b in first] == [b[0] for b in second] == [[0, 1], [2, 3]]
    assert sorted({p for b in first for p in b[1]}) == sorted({p for b in second for p in b[1]})
    stream = DataLoader(
        D.EmberRangeStream(0, 6),
        batch_size=2,
        num_workers=2,
        worker_type=kind,
        persistent_workers=True,
    )
    assert [plain(b) for b in stream] == [plain(b) for b in stream] == [[0, 1], [3, 4], [2], [5]]
    del dl, it, stream


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_workers_shut_down_on_break_and_error(kind):
    dl = DataLoader(D.Squares(40), batch_size=2, num_workers=2, worker_type=kind)
    for i, _ in enumerate(dl):
        if i == 1:
            break
    dl2 = DataLoader(D.Raising(10, bad=0), batch_size=2, num_workers=2, worker_type=kind)
    with pytest.raises(ValueError):
        for _ in dl2:
            pass
    # the no_leaks fixture checks that nothing is left


def test_prefetch_keeps_bounded_number_of_batches_in_flight():
    started = []

    class Counting(ember.data.Dataset):
        def __len__(self):
            return 100

        def __getitem__(self, i):
            started.append(i)
            return i

    def settle(n):
        deadline = time.monotonic() + 5
        while len(started) < n and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.05)  # room for any extra (wrong) fetch to show up
        return len(started)

    it = iter(DataLoader(Counting(), batch_size=None, num_workers=2, prefetch_factor=3))
    assert settle(6) == 6  # prefetch_factor * num_workers, fetched in the background
    assert next(it) == 0
    assert settle(7) == 7  # one result taken, one more task handed out
    del it


def test_out_of_order_mode_returns_every_batch():
    ds = D.Squares(12, slow={0: 0.1})
    got = [
        x
        for b in DataLoader(ds, batch_size=2, num_workers=2, in_order=False)
        for x in b[0].tolist()
    ]
    assert sorted(got) == list(range(12))


@pytest.mark.skipif(ember.cuda.is_available(), reason="pins for real with a GPU")
def test_pin_memory_is_a_noop_with_a_warning_on_cpu():
    with pytest.warns(UserWarning, match="no accelerator is found"):
        out = list(DataLoader(TensorDataset(ember.arange(4)), batch_size=2, pin_memory=True))
    assert [b[0].tolist() for b in out] == [[0, 1], [2, 3]]
    assert not out[0][0].is_pinned()


def test_unsharded_iterable_duplicates_like_torch():
    ours = sorted(
        int(x) for b in DataLoader(D.Unsharded(3), batch_size=None, num_workers=2) for x in [b]
    )
    assert ours == [0, 0, 1, 1, 2, 2]


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(num_workers=-1), ValueError, "num_workers option should be non-negative"),
        (dict(timeout=-1), ValueError, "timeout option should be non-negative"),
        (dict(timeout=1), ValueError, "timeout option needs num_workers > 0"),
        (dict(prefetch_factor=2), ValueError, "prefetch_factor option could only be specified"),
        (
            dict(num_workers=1, prefetch_factor=-1),
            ValueError,
            "prefetch_factor option should be non-negative",
        ),
        (
            dict(persistent_workers=True),
            ValueError,
            "persistent_workers option needs num_workers > 0",
        ),
        (
            dict(sampler=[0, 1], shuffle=True),
            ValueError,
            "sampler option is mutually exclusive with shuffle",
        ),
        (
            dict(batch_sampler=[[0]], batch_size=2),
            ValueError,
            "batch_sampler option is mutually exclusive",
        ),
        (
            dict(batch_sampler=[[0]], drop_last=True),
            ValueError,
            "batch_sampler option is mutually exclusive",
        ),
        (
            dict(batch_sampler=[[0]], shuffle=True),
            ValueError,
            "batch_sampler option is mutually exclusive",
        ),
        (
            dict(batch_size=None, drop_last=True),
            ValueError,
            "batch_size=None option disables auto-batching",
        ),
        (dict(batch_size=0), ValueError, "batch_size should be a positive integer"),
        (
            dict(num_workers=1, worker_type="fiber"),
            ValueError,
            "worker_type should be 'thread' or 'process'",
        ),
        (
            dict(num_workers=1, worker_type="thread", multiprocessing_context="spawn"),
            ValueError,
            "needs worker_type='process'",
        ),
        (
            dict(multiprocessing_context="spawn"),
            ValueError,
            "multiprocessing_context can only be used",
        ),
        (dict(num_workers=1, multiprocessing_context="nope"), ValueError, "valid start method"),
        (dict(num_workers=1, multiprocessing_context=3), TypeError, "valid context object"),
    ],
)
def test_invalid_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        DataLoader(range(4), **kwargs)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(shuffle=True), "expected unspecified shuffle option"),
        (dict(sampler=[0]), "expected unspecified sampler option"),
        (dict(batch_sampler=[[0]]), "expected unspecified batch_sampler option"),
    ],
)
def test_iterable_dataset_rejects_samplers_like_torch(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DataLoader(D.EmberRangeStream(0, 3), **kwargs)
    with pytest.raises(ValueError, match=match):
        tdata.DataLoader(TorchRangeStream(0, 3), **kwargs)


def test_attributes_locked_after_init_and_defaults():
    dl = DataLoader(range(5), batch_size=2, num_workers=1)
    with pytest.raises(ValueError, match="batch_size attribute should not be set"):
        dl.batch_size = 3
    assert dl.prefetch_factor == 2 and dl.worker_type == "thread" and dl.timeout == 0
    dl.num_workers = 0  # allowed, as in PyTorch
    assert isinstance(dl.sampler, SequentialSampler) and isinstance(dl.batch_sampler, BatchSampler)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DataLoader(range(5), num_workers=1, worker_type="process")  # no over-subscription warning


def test_import_paths():
    import ember.utils.data as utils_data
    from ember.utils.data import DataLoader as UtilsLoader

    assert UtilsLoader is DataLoader and utils_data.default_collate is ember.data.default_collate
    assert ember.utils.data.TensorDataset is TensorDataset
