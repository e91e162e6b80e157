"""Pinned memory and GPU prefetch in the DataLoader (ember/data/_pin.py).

On the CPU-only CI machine these run on the fake CuPy (``tests/_fakecupy``), which checks the
plumbing only: which buffers are pinned and reused, that batches land on the right device with
the right values, that the copy of batch k+1 is queued before batch k is handed out, and that
the current stream waits for each batch's copy event. Real asynchrony needs a GPU: the test at
the end runs there.
"""

import numpy as np
import pytest

import ember
from ember.data import DataLoader, TensorDataset, _pin

CUDA = ember.cuda.is_available()


@pytest.fixture
def gpu(fake_cuda, monkeypatch):
    """The fake CuPy, with a log of the stream calls the prefetcher makes."""
    log = []
    orig_set = fake_cuda.ndarray.set

    def set_(self, arr, stream=None):
        log.append(("set", stream))
        orig_set(self, arr, stream=stream)

    monkeypatch.setattr(fake_cuda.ndarray, "set", set_, raising=False)
    stream_cls = fake_cuda.cuda.Stream
    orig_wait = stream_cls.wait_event

    def wait_event(self, event):
        log.append(("wait", self, event))
        return orig_wait(self, event)

    monkeypatch.setattr(stream_cls, "wait_event", wait_event)
    _pin._ring.clear()
    monkeypatch.setattr(fake_cuda, "copy_log", log, raising=False)
    yield fake_cuda
    _pin._ring.clear()


def _ds(n=10):
    return TensorDataset(ember.arange(n).float().reshape(n, 1), ember.arange(n))


def test_pin_memory_copies_into_pinned_buffers(gpu):
    batches = list(DataLoader(_ds(), batch_size=4, pin_memory=True))
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert all(t.is_pinned() and t.device.type == "cpu" for b in batches for t in b)
    assert batches[0][0].dtype == ember.float32 and batches[0][1].dtype == ember.int64


@pytest.mark.parametrize("workers", [(0, None), (2, "thread"), (2, "process")])
def test_pin_memory_with_workers(gpu, workers):
    n, kind = workers
    loader = DataLoader(_ds(), batch_size=4, pin_memory=True, num_workers=n, worker_type=kind)
    batches = list(loader)
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert all(t.is_pinned() for b in batches for t in b)


def test_ring_reuses_buffers_nobody_holds(gpu):
    ring = _pin.PinnedRing(slots=2)
    a = ring.take((3,), np.float32)
    a_id = id(a)
    b = ring.take((3,), np.float32)
    assert b is not a  # a is still held
    del a
    c = ring.take((3,), np.float32)
    assert id(c) == a_id  # free again: reused
    assert ring.take((3,), np.int64) is not c  # other dtype, other buffer
    held = [ring.take((3,), np.float32) for _ in range(3)]  # beyond slots: fresh, not kept
    assert len({id(h) for h in held}) == 3


def test_steady_state_pins_into_the_same_few_buffers(gpu):
    seen = set()
    for x, _ in DataLoader(_ds(40), batch_size=4, pin_memory=True, drop_last=True):
        seen.add(id(_pin._root(x._data)))
        del x
    assert len(seen) <= 2


def test_tensor_pin_memory_and_is_pinned(gpu):
    t = ember.arange(6).reshape(2, 3)
    p = t.pin_memory()
    assert p is not t and p.is_pinned() and not t.is_pinned()
    assert p.tolist() == t.tolist() and p.dtype == t.dtype
    assert p.pin_memory() is p
    assert p[0].is_pinned()  # a view of pinned memory is pinned
    with pytest.raises(ember.DeviceError, match="only CPU tensors can be pinned"):
        t.to("cuda").pin_memory()
    assert not t.to("cuda").is_pinned()


def test_pin_keeps_structure(gpu):
    batch = {"x": ember.ones(2), "meta": ("a", 3), "ys": [ember.zeros(1)]}
    out = _pin.pin(batch)
    assert out["meta"] == ("a", 3)
    assert out["x"].is_pinned() and out["ys"][0].is_pinned()


@pytest.mark.parametrize("pin", [True, False])
def test_device_moves_batches_one_ahead(gpu, pin):
    loader = DataLoader(_ds(), batch_size=4, pin_memory=pin, device="cuda")
    assert len(loader) == 3
    it = iter(loader)
    sets = lambda: sum(1 for e in gpu.copy_log if e[0] == "set")  # noqa: E731
    x0, y0 = next(it)
    assert sets() == 4  # batch 0 and batch 1 (two tensors each) queued already
    assert x0.device == ember.device("cuda") and y0.device == ember.device("cuda")
    assert y0.tolist() == [0, 1, 2, 3] and x0.dtype == ember.float32
    rest = list(it)
    assert [b[1].tolist() for b in rest] == [[4, 5, 6, 7], [8, 9]]
    assert sets() == 6
    # the copies ran on the side stream; the current stream waited for each batch's event
    side = {id(e[1]) for e in gpu.copy_log if e[0] == "set"}
    assert len(side) == 1 and None not in side
    current = gpu.cuda.get_current_stream()
    assert sum(1 for e in gpu.copy_log if e[0] == "wait" and e[1] is current) == 3
    # and the side stream waited for the current one before each copy
    assert sum(1 for e in gpu.copy_log if e[0] == "wait" and id(e[1]) in side) == 3


def test_device_with_workers_and_second_gpu(gpu):
    loader = DataLoader(_ds(), batch_size=5, pin_memory=True, device="cuda:1", num_workers=2)
    out = list(loader)
    assert [b[1].tolist() for b in out] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    assert all(t.device == ember.device("cuda:1") for b in out for t in b)


def test_device_cpu_leaves_batches(gpu):
    out = list(DataLoader(_ds(4), batch_size=2, device="cpu"))
    assert all(t.device.type == "cpu" for b in out for t in b)


def test_device_leaves_non_tensors_and_device_tensors(gpu):
    on_gpu = ember.ones(2, device="cuda")
    data = [(on_gpu, "name", 3)]
    out = list(DataLoader(data, batch_size=None, device="cuda"))
    assert out[0][0]._data is on_gpu._data and list(out[0][1:]) == ["name", 3]


def test_empty_loader_with_device(gpu):
    assert list(DataLoader(_ds(0), batch_size=2, device="cuda")) == []


def test_device_without_gpu_names_the_problem():
    if CUDA:
        pytest.skip("a GPU is present")
    loader = DataLoader(_ds(), batch_size=2, device="cuda")
    with pytest.raises(ember.DeviceError, match="cuda is not available"):
        iter(loader)


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="needs a GPU")
def test_real_gpu_pinned_prefetch():
    import cupy

    ds = TensorDataset(ember.randn(64, 3, 8, 8), ember.arange(64))
    loader = DataLoader(ds, batch_size=16, pin_memory=True, device="cuda", num_workers=2)
    total = 0
    for x, y in loader:
        assert isinstance(x._data, cupy.ndarray)
        total += int((x * 0 + 1).sum().item())
        assert y.tolist() == sorted(y.tolist())
    assert total == 64 * 3 * 8 * 8
    assert ember.arange(4).pin_memory().is_pinned()
