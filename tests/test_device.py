"""Devices: parsing, equality, CUDA queries, and a clear error when CUDA is missing.

The ``fake_cuda`` tests run ember's cuda code paths on the fake CuPy of ``tests/_fakecupy``
(NumPy underneath, two "GPUs"): they check plumbing (where data lives, what errors say, what
gets seeded and counted), not GPU numerics, which need a real GPU.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

import ember

NO_GPU = not ember.cuda.is_available()


def test_device_parsing():
    assert repr(ember.device("cpu")) == "device(type='cpu')"
    assert repr(ember.device("cuda")) == "device(type='cuda')"
    assert repr(ember.device("cuda:1")) == "device(type='cuda', index=1)"
    assert repr(ember.device("cuda", 0)) == "device(type='cuda', index=0)"
    assert repr(ember.device(1)) == "device(type='cuda', index=1)"
    assert str(ember.device("cuda:1")) == "cuda:1" and str(ember.device("cpu")) == "cpu"
    d = ember.device("cuda:1")
    assert d.type == "cuda" and d.index == 1
    assert ember.device(d) is d
    assert ember.device("cpu").index is None
    assert ember.device("cpu:0").type == "cpu"


def test_device_equality_and_hash():
    assert ember.device("cpu") == ember.device("cpu")
    assert ember.device("cuda") == ember.device("cuda:0")
    assert ember.device("cuda:0") != ember.device("cuda:1")
    assert ember.device("cpu") != ember.device("cuda")
    assert ember.device("cpu") == "cpu"  # ember compares with strings too
    assert len({ember.device("cuda"), ember.device("cuda:0")}) == 1


@pytest.mark.parametrize(
    "spec, match",
    [
        ("tpu", "unknown device type 'tpu'"),
        ("cuda:x", "bad device index in 'cuda:x'"),
        ("cpu:1", "cpu has only index 0"),
        (1.5, "expected a string like 'cpu' or 'cuda:0', got 1.5"),
    ],
)
def test_device_errors(spec, match):
    with pytest.raises(ember.DeviceError, match=match):
        ember.device(spec)


def test_cuda_queries():
    assert isinstance(ember.cuda.is_available(), bool)
    assert isinstance(ember.cuda.device_count(), int)
    if NO_GPU:
        assert ember.cuda.device_count() == 0


def test_cpu_tensor_device():
    x = ember.ones(2)
    assert x.device == ember.device("cpu") and not x.is_cuda and x.get_device() == -1
    assert x.device.xp.__name__ == "numpy"


@pytest.mark.skipif(not NO_GPU, reason="a GPU is present")
@pytest.mark.parametrize(
    "expr",
    [
        "ember.zeros(2, device='cuda')",
        "ember.ones(2, device=ember.device('cuda:0'))",
        "ember.tensor([1.0], device='cuda')",
        "ember.arange(3, device='cuda')",
        "ember.rand(2, device='cuda')",
        "ember.randn(2, device='cuda')",
        "ember.eye(2, device='cuda')",
        "ember.zeros_like(ember.ones(2), device='cuda')",
        "ember.ones(2).cuda()",
        "ember.ones(2).to('cuda:1')",
        "ember.ones(2).to(device='cuda', dtype=ember.float16)",
        "ember.ones(2).type(ember.cuda.FloatTensor)",
        "ember.cuda.FloatTensor([1.0])",
        "ember.cuda.current_device()",
        "ember.cuda.synchronize()",
        "ember.device('cuda').xp",
    ],
)
def test_cuda_without_gpu_is_a_clear_error(expr):
    with pytest.raises(ember.DeviceError, match=r"cuda is not available: CuPy could not be loaded"):
        eval(expr, {"ember": ember})


@pytest.mark.skipif(not NO_GPU, reason="a GPU is present")
def test_cuda_error_says_how_to_fix():
    with pytest.raises(ember.DeviceError, match=r"install ember\[cuda12\] or ember\[cuda13\]"):
        ember.zeros(1, device="cuda")
    ember.cuda.manual_seed(0)  # a no-op without a GPU
    ember.cuda.manual_seed_all(0)


@pytest.mark.skipif(NO_GPU, reason="needs a GPU")
def test_cuda_roundtrip():
    x = ember.arange(6.0).reshape(2, 3)
    g = x.cuda()
    assert g.is_cuda and g.device == ember.device("cuda:0") and g.get_device() == 0
    assert "device='cuda:0'" in repr(g)
    assert g.cpu().tolist() == x.tolist()
    assert ember.zeros(2, device="cuda").device.type == "cuda"
    assert ember.rand(2, device="cuda").is_cuda
    assert ember.eye(2, device="cuda").cpu().tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert isinstance(ember.ones(1, device="cuda"), ember.cuda.FloatTensor)
    w = ember.ones(2, requires_grad=True)
    (w.cuda() * 2).sum().backward()
    assert w.grad.device.type == "cpu" and w.grad.tolist() == [2.0, 2.0]


# -- on the fake GPU (plumbing) -------------------------------------------------------------------


def test_fake_queries(fake_cuda):
    cuda = ember.cuda
    assert cuda.is_available() and cuda.is_initialized() and cuda.device_count() == 2
    assert cuda.current_device() == 0
    cuda.set_device("cuda:1")
    assert cuda.current_device() == 1
    cuda.set_device(0)
    with cuda.device(1):
        assert cuda.current_device() == 1 and ember.zeros(1, device="cuda").device.index == 1
    assert cuda.current_device() == 0
    assert cuda.get_device_name() == "Fake GPU (tests/_fakecupy)"
    props = cuda.get_device_properties(ember.device("cuda:1"))
    assert (props.major, props.minor, props.multi_processor_count) == (9, 0, 132)
    assert cuda.get_device_capability() == (9, 0)
    free, total = cuda.mem_get_info()
    assert 0 < free <= total
    cuda.synchronize()
    cuda.synchronize("cuda:1")
    assert fake_cuda._state["syncs"] == 2
    with pytest.raises(ember.DeviceError, match=r"cuda:5 does not exist: 2 GPU\(s\) visible"):
        cuda.set_device(5)
    with pytest.raises(ember.DeviceError, match="expected a cuda device, got cpu"):
        cuda.synchronize("cpu")


def _is_gpu_array(t, index=0):
    from tests._fakecupy import ndarray

    return type(t._data) is ndarray and t._data.device.id == index


def test_fake_moves(fake_cuda):
    x = ember.arange(6.0).reshape(2, 3)
    g = x.cuda()
    assert g.is_cuda and g.device == ember.device("cuda:0") and g.get_device() == 0
    assert _is_gpu_array(g) and "device='cuda:0'" in repr(g)
    assert g.cpu().tolist() == x.tolist() and type(g.cpu()._data) is np.ndarray
    assert g.cuda() is g and g.to("cuda:0") is g and x.cpu() is x
    h = g.to("cuda:1")
    assert _is_gpu_array(h, 1) and h.cpu().tolist() == x.tolist()
    assert _is_gpu_array(x.cuda(1), 1) and _is_gpu_array(x.to(ember.device("cuda", 1)), 1)
    y = x.to("cuda", ember.float64)
    assert y.dtype == ember.float64 and y.is_cuda
    assert x.to(g).is_cuda and x.type(ember.cuda.FloatTensor).is_cuda
    assert isinstance(g, ember.cuda.FloatTensor) and not isinstance(x, ember.cuda.FloatTensor)
    with pytest.raises(ember.EmberError, match="can't convert a cuda:0 tensor to numpy"):
        g.numpy()
    assert np.asarray(g).tolist() == x.tolist()  # __array__ copies to the host
    ember.cuda.set_device(1)
    assert x.cuda().device.index == 1 and x.to("cuda").device.index == 1  # 'cuda': the current
    assert x.to("cuda:0").device.index == 0


CREATE = [
    "ember.zeros(2, 3, device=d)",
    "ember.ones(2, device=d)",
    "ember.empty(2, device=d)",
    "ember.full((2,), 1.5, device=d)",
    "ember.tensor([1.0, 2.0], device=d)",
    "ember.as_tensor([1, 2], device=d)",
    "ember.arange(3, device=d)",
    "ember.linspace(0, 1, 5, device=d)",
    "ember.eye(2, device=d)",
    "ember.rand(2, device=d)",
    "ember.randn(2, 2, device=d)",
    "ember.randint(0, 5, (3,), device=d)",
    "ember.randperm(4, device=d)",
    "ember.zeros_like(ember.ones(2), device=d)",
    "ember.rand_like(ember.ones(2), device=d)",
    "ember.ones(2).new_zeros(3, device=d)",
    "ember.Tensor([1.0], device=d)",
    "ember.cuda.FloatTensor([1.0]).to(d)",
]


@pytest.mark.parametrize("expr", CREATE)
def test_fake_creation_with_device(fake_cuda, expr):
    for d in ("cuda:1", ember.device("cuda", 1)):
        t = eval(expr, {"ember": ember, "d": d})
        assert _is_gpu_array(t, 1), expr
    cpu = eval(expr, {"ember": ember, "d": "cpu"})
    assert type(cpu._data) is np.ndarray and cpu.dtype == t.dtype and cpu.shape == t.shape


def test_fake_mixing_devices_names_both(fake_cuda):
    a, g = ember.ones(2), ember.ones(2, device="cuda")
    msg = r"expected all tensors on the same device, but found cpu and cuda:0"
    with pytest.raises(ember.DeviceError, match=msg):
        a + g
    with pytest.raises(ember.DeviceError, match=msg):
        ember.mm(ember.ones(2, 2, device="cuda"), ember.ones(2, 2))
    with pytest.raises(ember.DeviceError, match="found cuda:0 and cuda:1"):
        g * ember.ones(2, device="cuda:1")
    with pytest.raises(ember.DeviceError, match="found cpu and cuda:0"):
        ember.cat([a, g])


def test_fake_grad_flows_back_across_devices(fake_cuda):
    w = ember.ones(2, requires_grad=True)
    (w.cuda() * 2).sum().backward()
    assert w.grad.device.type == "cpu" and w.grad.tolist() == [2.0, 2.0]
    v = ember.ones(2, device="cuda", requires_grad=True)
    (v * v).sum().backward()
    assert _is_gpu_array(v.grad) and v.grad.cpu().tolist() == [2.0, 2.0]


def test_fake_ops_on_a_second_gpu_under_its_device(fake_cuda):
    h = ember.ones(2, device="cuda:1")
    with ember.cuda.device(1):
        y = (h * 3).exp().sum()
    assert _is_gpu_array(y, 1) and y.item() == pytest.approx(2 * np.exp(3.0), rel=1e-6)


def test_fake_a_second_gpu_trains_while_the_first_is_current(fake_cuda):
    """As in PyTorch, ops, in-place writes and optimizer steps run on their tensors' GPU
    whichever is current (the fake, like CuPy without peer access, refuses the other GPU's
    memory): a model built with default device cuda:1 trains as one on the CPU does."""
    assert ember.cuda.current_device() == 0
    results = []
    for device in ("cpu", "cuda:1"):
        ember.manual_seed(0)
        ember.set_default_device(device)
        try:
            model = ember.nn.Sequential(
                ember.nn.Linear(3, 4), ember.nn.ReLU(), ember.nn.Linear(4, 2)
            )
            opt = ember.optim.Adam(model.parameters(), lr=0.1)
            x = ember.ones(5, 3)
            x.add_(1).mul_(0.5)
            w = ember.zeros(2)
            w.fill_(0.25)
            w.copy_(ember.tensor([0.5, 1.5]))
            for _ in range(3):
                opt.zero_grad()
                loss = (model(x) * w).sum()
                loss.backward()
                opt.step()
        finally:
            ember.set_default_device(None)
        assert str(loss.device) == device
        results.append([p.detach().cpu().numpy() for p in model.parameters()])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_fake_random_is_drawn_on_the_gpu(fake_cuda, monkeypatch):
    def no_host_draws(*a, **k):
        raise AssertionError("drew on the host")

    ember.manual_seed(3)
    a = ember.rand(4, device="cuda")
    monkeypatch.setattr(ember.random, "rng", no_host_draws)
    ember.manual_seed(3)
    b = ember.rand(4, device="cuda")
    assert _is_gpu_array(a) and a.cpu().tolist() == b.cpu().tolist()  # manual_seed seeds the GPU
    x = ember.ones(200, 10, device="cuda", dtype=ember.float16)
    kept = ember.nn.functional.dropout(x, 0.25)  # the mask is drawn on the GPU too
    assert _is_gpu_array(kept) and kept.dtype == ember.float16
    assert set(np.unique(kept.cpu().numpy()).tolist()) == {0.0, np.float16(1 / 0.75)}
    monkeypatch.undo()
    ember.manual_seed(3)
    assert a.cpu().tolist() != ember.rand(4).tolist()  # the GPU has its own generator
    for dt in (ember.float16, ember.float64):
        assert ember.randn(3, dtype=dt, device="cuda").dtype == dt
    assert sorted(ember.randperm(5, device="cuda").cpu().tolist()) == [0, 1, 2, 3, 4]
    r = ember.randint(2, 4, (50,), device="cuda").cpu()
    assert r.dtype == ember.int64 and set(r.tolist()) <= {2, 3}


def test_fake_cuda_seeds(fake_cuda):
    ember.cuda.manual_seed(7)  # the current GPU only
    a0 = ember.rand(3, device="cuda:0").cpu().tolist()
    a1 = ember.rand(3, device="cuda:1").cpu().tolist()
    ember.cuda.manual_seed(7)
    assert ember.rand(3, device="cuda:0").cpu().tolist() == a0
    assert ember.rand(3, device="cuda:1").cpu().tolist() != a1  # not reseeded
    assert ember.cuda.initial_seed() == 7
    ember.cuda.manual_seed_all(5)
    b0, b1 = (ember.rand(3, device=f"cuda:{i}").cpu().tolist() for i in (0, 1))
    ember.manual_seed(5)  # seeds every GPU too
    assert ember.rand(3, device="cuda:0").cpu().tolist() == b0
    assert ember.rand(3, device="cuda:1").cpu().tolist() == b1


def test_fake_generators(fake_cuda):
    g = ember.Generator(device="cuda").manual_seed(1)
    a = ember.rand(3, generator=g, device="cuda")
    g.manual_seed(1)
    assert _is_gpu_array(a) and ember.rand(3, generator=g, device="cuda").cpu().tolist() == (
        a.cpu().tolist()
    )
    with pytest.raises(ember.DeviceError, match="a generator on cuda:0 cannot draw .* cuda:1"):
        ember.rand(3, generator=g, device="cuda:1")
    c = ember.Generator().manual_seed(1)  # a CPU generator: drawn on the host, copied over
    x = ember.rand(3, generator=c, device="cuda")
    assert (
        _is_gpu_array(x) and x.cpu().tolist() == ember.rand(3, generator=c.manual_seed(1)).tolist()
    )


def test_fake_memory_statistics(fake_cuda):
    cuda = ember.cuda
    base = cuda.memory_allocated()
    cuda.reset_peak_memory_stats()
    x = ember.zeros(1024, 1024, device="cuda")  # 4 MiB
    assert cuda.memory_allocated() - base >= 4 * 2**20
    assert cuda.memory_allocated("cuda:1") == 0
    y = x * 2
    peak = cuda.max_memory_allocated()
    assert peak >= base + 8 * 2**20
    del x, y
    assert cuda.memory_allocated() == base and cuda.max_memory_allocated() == peak
    assert cuda.memory_reserved() >= peak
    cuda.empty_cache()
    assert cuda.memory_reserved() == cuda.memory_allocated()
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == base
    with cuda.device(1):
        z = ember.ones(256, device="cuda")
        assert cuda.max_memory_allocated() >= 1024 and cuda.max_memory_allocated(0) == base
    del z


def test_peak_is_exact_while_used_bytes_is_read_only_when_a_peak_is_possible(
    fake_cuda, monkeypatch
):
    """CuPy's ``used_bytes()`` walks every live block, so the allocator hook reads it only when
    its bound (last reading + blocks allocated since) passes the peak; the peak still matches
    one taken at every allocation, through frees, repeats and a reset."""
    from ember.backend import memory

    tracker = memory._tracker
    pool = fake_cuda.get_default_memory_pool()
    reads = []

    class Counted:  # the pool as the tracker sees it, counting its readings
        malloc = staticmethod(pool.malloc)

        def used_bytes(self):
            reads.append(1)
            return pool.used_bytes()

    monkeypatch.setattr(tracker, "pool", Counted())
    rng = np.random.default_rng(0)
    params = fake_cuda.empty(20000, np.float32)  # what stays allocated (weights, moments)
    ember.cuda.reset_peak_memory_stats()
    live, exact, allocations = [], pool.used_bytes(), 0
    reads.clear()
    for step in range(40):  # a training loop: the same allocations each step, freed after
        for n in (300, 5000, 70, 5000, 128):
            live.append(fake_cuda.empty(int(n * (1 + 0.1 * (step == 25))), np.float32))
            allocations += 1
            exact = max(exact, pool.used_bytes())
        live.clear()
        if step == 30:
            ember.cuda.reset_peak_memory_stats()
            exact = pool.used_bytes()
        assert ember.cuda.max_memory_allocated() == exact
    assert len(reads) <= 2 * 40 < allocations  # at most two a step, not five
    for _ in range(200):  # random lifetimes
        if live and rng.random() < 0.4:
            live.pop(int(rng.integers(len(live))))
        else:
            live.append(fake_cuda.empty(int(rng.integers(1, 3000)), np.float32))
            exact = max(exact, pool.used_bytes())
        assert ember.cuda.max_memory_allocated() == exact
    del params


def test_fake_streams_and_events(fake_cuda):
    s = ember.cuda.Stream()
    with ember.cuda.stream(s):
        y = ember.ones(2, device="cuda") + 1
    s.synchronize()
    assert s.query() and y.cpu().tolist() == [2.0, 2.0]
    start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
    start.record()
    end.record(s)
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0 and end.query()
    ember.cuda.current_stream().wait_stream(s)
    s.record_event().wait()


def _state(t):
    return {"w": t, "b": t[:1] + 1, "n": 3}


def test_fake_checkpoint_map_location(fake_cuda, tmp_path):
    path = tmp_path / "ckpt.safetensors"
    w = ember.arange(4.0, device="cuda:1", requires_grad=True)
    ember.save({"w": w, "b": ember.ones(2), "n": 3}, path)
    out = ember.load(path)  # back where they were saved from
    assert _is_gpu_array(out["w"], 1) and out["w"].requires_grad and out["n"] == 3
    assert type(out["b"]._data) is np.ndarray
    assert out["w"].cpu().tolist() == [0.0, 1.0, 2.0, 3.0]
    cpu = ember.load(path, map_location="cpu")
    assert type(cpu["w"]._data) is np.ndarray and cpu["w"].requires_grad
    every = ember.load(path, map_location="cuda")
    assert _is_gpu_array(every["w"], 0) and _is_gpu_array(every["b"], 0)
    table = ember.load(path, map_location={"cuda:1": "cuda:0"})
    assert _is_gpu_array(table["w"], 0) and type(table["b"]._data) is np.ndarray
    seen = []

    def fn(t, loc):
        seen.append(loc)
        return t.to("cuda:0") if loc == "cuda:1" else None

    called = ember.load(path, map_location=fn)
    assert sorted(seen) == ["cpu", "cuda:1"] and _is_gpu_array(called["w"], 0)
    assert ember.load(path, map_location=lambda t, loc: "cpu")["w"].device.type == "cpu"
    buf = io.BytesIO()
    ember.save(ember.nn.Linear(2, 2).cuda().state_dict(), buf)
    buf.seek(0)
    sd = ember.load(buf, map_location=ember.device("cpu"))
    assert all(type(t._data) is np.ndarray for t in sd.values())


def test_checkpoint_from_a_gpu_without_one(fake_cuda, tmp_path):
    path = tmp_path / "gpu.safetensors"
    ember.save({"w": ember.ones(2, device="cuda")}, path)
    ember.backend.cuda.uninstall((None, None, "ImportError: no cupy", False))
    with pytest.raises(ember.DeviceError, match="saved on cuda:0, but cuda is not available"):
        ember.load(path)
    assert ember.load(path, map_location="cpu")["w"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("opt", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_fake_optimizer_step_on_cuda(fake_cuda, opt):
    def run(device):
        ember.manual_seed(0)
        w = ember.randn(3, 2).to(device).requires_grad_()
        kwargs = {"momentum": 0.9} if opt == "SGD" else {}
        o = getattr(ember.optim, opt)([w], lr=0.1, **kwargs)
        for _ in range(3):
            o.zero_grad()
            (w * w).sum().backward()
            o.step()
        return w, o

    w, o = run("cuda")
    assert _is_gpu_array(w)
    for st in o.state.values():
        for v in st.values():
            if isinstance(v, ember.Tensor) and v.ndim:
                assert _is_gpu_array(v), opt
    np.testing.assert_allclose(w.detach().cpu().numpy(), run("cpu")[0].detach().numpy())


def _train(device):
    ember.manual_seed(0)
    model = ember.nn.Sequential(
        ember.nn.Linear(4, 8), ember.nn.ReLU(), ember.nn.Dropout(0.0), ember.nn.Linear(8, 3)
    ).to(device)
    opt = ember.optim.Adam(model.parameters(), lr=0.01)
    x = ember.tensor(np.random.default_rng(0).standard_normal((16, 4)).astype("float32"))
    y = ember.tensor(np.arange(16) % 3)
    x, y = x.to(device), y.to(device)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = ember.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model


def test_fake_training_matches_cpu(fake_cuda):
    losses, model = _train("cuda")
    assert all(_is_gpu_array(p) for p in model.parameters())
    cpu_losses, cpu_model = _train("cpu")
    np.testing.assert_allclose(losses, cpu_losses, rtol=1e-6)
    for p, q in zip(model.parameters(), cpu_model.parameters()):
        np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().numpy(), rtol=1e-5)


def test_fake_refuses_implicit_host_copies_as_cupy_does(fake_cuda):
    x = ember.ones(3, device="cuda")._data
    for convert in (np.asarray, np.array, np.ascontiguousarray, lambda a: np.array([a, a])):
        with pytest.raises(TypeError, match="Implicit conversion to a NumPy array"):
            convert(x)
    assert np.array_equal(x.get(), np.ones(3, np.float32))


def test_tensor_from_gpu_data_stays_on_its_gpu(fake_cuda):
    raw = fake_cuda.arange(3, dtype=np.float32)
    t = ember.tensor(raw)
    assert t.device == ember.device("cuda:0") and t._data is not raw
    assert t.tolist() == [0.0, 1.0, 2.0]
    shared = ember.as_tensor(raw)
    assert shared._data is raw
    copy = ember.tensor(t, dtype=ember.float64)
    assert copy.device.type == "cuda" and copy.dtype is ember.float64
    host = ember.tensor(t, device="cpu")
    assert host.device.type == "cpu" and host.tolist() == [0.0, 1.0, 2.0]
    assert ember.as_tensor(raw, device="cpu").device.type == "cpu"


def test_gradchecks_on_the_device(device):
    x = ember.randn(2, 3, dtype=ember.float64, device=device, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: (a * a.sin()).sum(1), (x,))
    assert ember.autograd.gradcheck(lambda a: a.tanh(), (x,), fast_mode=True)
    assert ember.autograd.gradgradcheck(lambda a: (a * a * a).sum(), (x,))


def test_weighted_sampler_takes_device_weights(device):
    weights = ember.tensor([0.0, 1.0, 0.0, 3.0], device=device)
    drawn = list(ember.utils.data.WeightedRandomSampler(weights, 50))
    assert set(drawn) <= {1, 3} and 3 in drawn
