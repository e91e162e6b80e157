"""ember.compile on cuda: CUDA-graph capture and replay (ember/static/cuda_graph.py).

Without a GPU these run on the strict fake CuPy (``tests/_fakecupy``), whose stream capture
is CuPy's: a capture records the launches and runs nothing (host transfers and syncs raise while
it captures), and ``Graph.launch()`` replays them into the same buffers, so the graph's fixed
addresses (static inputs, outputs and gradients) behave as on a GPU. That checks ember's
capture code itself: warm-up, static buffers, hyperparameters written to the device before each
launch, guards that recapture, stores after a replay, the fallbacks and their warnings. The
kernels themselves (fused elementwise programs, cuBLAS through ctypes) need a GPU: the tests
marked ``gpu`` at the end run there.
"""

import re
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.backend.kernels import cublas as _cublas
from ember.static import cuda_graph

CUDA = ember.cuda.is_available()


@pytest.fixture
def gpu(fake_cuda, monkeypatch):
    captured = []
    stream_cls, graph_cls = fake_cuda.cuda.Stream, fake_cuda.cuda.Graph
    end_capture, launch = stream_cls.end_capture, graph_cls.launch

    def end_and_keep(self):
        g = end_capture(self)
        g.launches = 0
        captured.append(g)
        return g

    def count_launch(self, stream=None):
        self.launches += 1
        return launch(self, stream)

    monkeypatch.setattr(stream_cls, "end_capture", end_and_keep)
    monkeypatch.setattr(graph_cls, "launch", count_launch)
    fake_cuda.graphs = captured
    return fake_cuda


def _net(seed=0, device="cuda"):
    ember.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))
    return model.to(device)


def _data(n=4, device="cuda"):
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((n, 6)).astype(np.float32)).to(device)
    y = ember.tensor(rng.standard_normal((n, 3)).astype(np.float32)).to(device)
    return x, y


def _step_fn(model, opt, loss_fn=F.mse_loss):
    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def _params(model):
    return [p.detach().cpu().numpy().copy() for p in model.parameters()]


OPTIMIZERS = {
    "adam": lambda ps: ember.optim.Adam(ps, lr=1e-2),
    "adamw-amsgrad": lambda ps: ember.optim.AdamW(ps, lr=1e-2, weight_decay=0.1, amsgrad=True),
    "adam-wd-maximize": lambda ps: ember.optim.Adam(ps, lr=1e-2, weight_decay=0.1, maximize=True),
    "sgd": lambda ps: ember.optim.SGD(ps, lr=0.1),
    "sgd-nesterov": lambda ps: ember.optim.SGD(
        ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01
    ),
    "sgd-dampening": lambda ps: ember.optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.5),
    "rmsprop-centered": lambda ps: ember.optim.RMSprop(ps, lr=1e-2, centered=True, momentum=0.5),
    "nadam": lambda ps: ember.optim.NAdam(ps, lr=1e-2),
    "radam": lambda ps: ember.optim.RAdam(ps, lr=1e-2),
    "rprop": lambda ps: ember.optim.Rprop(ps, lr=1e-2),
}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_replayed_steps_match_eager(gpu, name):
    make = OPTIMIZERS[name]
    x, y = _data()
    m_eager, m_graph = _net(), _net()
    o_eager, o_graph = make(m_eager.parameters()), make(m_graph.parameters())
    eager = _step_fn(m_eager, o_eager)
    compiled = ember.compile(_step_fn(m_graph, o_graph))
    for i in range(5):
        le, lc = eager(x, y), compiled(x, y)
        assert lc.device == ember.device("cuda")
        np.testing.assert_allclose(lc.item(), le.item(), rtol=1e-6, err_msg=f"step {i}")
    for a, b in zip(_params(m_eager), _params(m_graph)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7)
    runner = compiled._latest.runner
    assert runner is not None and runner.captures == 1 and runner.disabled is None
    # every optimizer's rule is ember ops, captured with the step: calls 2-5 launch the graph
    # (the capture's own launch, then 3 replays); SGD with momentum traces again at its
    # second step (its first copies the gradient), so its graph launches from call 3 on
    momentum = name.startswith("sgd-")
    assert gpu.graphs[0].launches == (3 if momentum else 4)
    st = o_graph.state[next(iter(m_graph.parameters()))]
    if "step" in st:
        assert st["step"].device == ember.device("cuda") and st["step"].item() == 5


@pytest.mark.fake_kernels
def test_one_launch_reductions_replay_in_a_graph(gpu):
    """Batch norm's statistics and sums and the NLL loss finish in one launch each (the last
    block merges, then zeroes its counter): captured once, every replay matches eager."""
    from ember.backend import kernels

    def net():
        ember.manual_seed(0)
        return nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))

    rng = np.random.default_rng(2)
    x = ember.tensor(rng.standard_normal((16, 6)).astype(np.float32)).to("cuda")
    t = ember.tensor(rng.integers(0, 3, 16)).to("cuda")
    m_eager, m_graph = net().to("cuda"), net().to("cuda")
    # SGD: the first layer's bias, which batch norm cancels, gets gradients of rounding noise only
    sgd = [ember.optim.SGD(m.parameters(), lr=0.1) for m in (m_eager, m_graph)]
    eager = _step_fn(m_eager, sgd[0], F.cross_entropy)
    compiled = ember.compile(_step_fn(m_graph, sgd[1], F.cross_entropy))
    for step in range(5):
        got, want = compiled(x, t).item(), eager(x, t).item()
        np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=f"step {step}")
    for (k, a), b in zip(m_eager.state_dict().items(), m_graph.state_dict().values()):
        np.testing.assert_allclose(b.cpu().numpy(), a.cpu().numpy(), 1e-5, 1e-6, err_msg=k)
    assert compiled._latest.runner.captures == 1 and gpu.graphs[0].launches == 4
    built = {k[:2] for k in kernels._cache}
    assert {("batchnorm", "moments"), ("batchnorm", "sums"), ("nll", "loss")} <= built


def test_hyperparameters_follow_the_host(gpu):
    x, y = _data()
    m_eager, m_graph = _net(), _net()
    o_eager = ember.optim.Adam(m_eager.parameters(), lr=1e-2)
    o_graph = ember.optim.Adam(m_graph.parameters(), lr=1e-2)
    s_eager = ember.optim.lr_scheduler.StepLR(o_eager, step_size=1, gamma=0.5)
    s_graph = ember.optim.lr_scheduler.StepLR(o_graph, step_size=1, gamma=0.5)
    eager, compiled = _step_fn(m_eager, o_eager), ember.compile(_step_fn(m_graph, o_graph))
    for _ in range(4):
        le, lc = eager(x, y), compiled(x, y)
        s_eager.step()
        s_graph.step()
        np.testing.assert_allclose(lc.item(), le.item(), rtol=1e-6)
    for a, b in zip(_params(m_eager), _params(m_graph)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7)


def test_default_mode_copies_outputs_reduce_overhead_does_not(gpu):
    x, y = _data()
    for mode, aliased in (("default", False), ("reduce-overhead", True)):
        model = _net()
        step = ember.compile(
            _step_fn(model, ember.optim.SGD(model.parameters(), lr=0.1)), mode=mode
        )
        losses = [step(x, y) for _ in range(4)]
        values = [float(v.item()) for v in losses]
        same = losses[2]._data is losses[3]._data
        assert same == aliased, mode
        if not aliased:
            assert values[1] > values[2] > values[3]


def test_gradients_after_a_replay_are_the_graphs(gpu):
    x, y = _data()
    model = _net()
    step = ember.compile(_step_fn(model, ember.optim.SGD(model.parameters(), lr=0.1)))
    ref = _net()
    ref_step = _step_fn(ref, ember.optim.SGD(ref.parameters(), lr=0.1))
    for _ in range(3):
        step(x, y)
        ref_step(x, y)
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.cpu().numpy(), q.grad.cpu().numpy(), rtol=1e-5)


def test_accumulating_gradients_without_zero_grad(gpu):
    x, y = _data()

    def acc_fn(model):
        def step(x, y):
            F.mse_loss(model(x), y).backward()

        return step

    model, ref = _net(), _net()
    step, ref_step = ember.compile(acc_fn(model)), acc_fn(ref)
    for _ in range(4):
        step(x, y)
        ref_step(x, y)
    assert step._latest.runner.captures == 1
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.cpu().numpy(), q.grad.cpu().numpy(), rtol=1e-5)


def test_arguments_are_copied_in_and_written_back(gpu):
    @ember.compile
    def f(x, y):
        x.add_(1.0)
        return x * y, x

    x = ember.zeros(3, device="cuda")
    y = ember.full((3,), 2.0, device="cuda")
    for i in range(1, 5):
        prod, same = f(x, y)
        assert x.tolist() == [float(i)] * 3
        assert prod.tolist() == [2.0 * i] * 3
        assert same.tolist() == x.tolist()
    other = ember.full((3,), 10.0, device="cuda")
    assert f(other, y)[0].tolist() == [22.0] * 3 and other.tolist() == [11.0] * 3


def test_dropout_runs_without_a_graph_with_one_warning(gpu):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 5), nn.Dropout(0.5), nn.Linear(5, 3)).to("cuda")
    step = ember.compile(_step_fn(model, ember.optim.SGD(model.parameters(), lr=0.1)))
    x, y = _data()
    with pytest.warns(
        RuntimeWarning,
        match="DropoutMask draws random numbers, and CuPy's generator cannot be captured",
    ):
        step(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            step(x, y)
    assert not gpu.graphs


def test_capture_failure_falls_back_once(gpu, monkeypatch):
    def broken(cp, stream, body):
        raise RuntimeError("cudaErrorStreamCaptureUnsupported: operation not permitted")

    monkeypatch.setattr(cuda_graph, "_capture", broken)
    x, y = _data()
    m_eager, m_graph = _net(), _net()
    o_eager = ember.optim.Adam(m_eager.parameters(), lr=1e-2)
    o_graph = ember.optim.Adam(m_graph.parameters(), lr=1e-2)
    eager, compiled = _step_fn(m_eager, o_eager), ember.compile(_step_fn(m_graph, o_graph))
    with pytest.warns(RuntimeWarning, match="capture failed: RuntimeError: cudaErrorStream"):
        for _ in range(4):
            np.testing.assert_allclose(compiled(x, y).item(), eager(x, y).item(), rtol=1e-6)
    p = next(iter(m_graph.parameters()))
    assert o_graph.state[p]["step"].item() == 4  # a failed capture runs nothing


def test_capture_failure_names_where_the_step_read_the_device(gpu, monkeypatch):
    """An op that copies device data to the host while the step is captured: the warning
    names CuPy's refusal and the ember frame that ran the op."""
    from ember.ops.elementwise import Relu

    relu = Relu.forward

    def reads_the_host(self, xp, x):
        float(x.sum())  # a device-to-host copy, refused while capturing
        return relu(self, xp, x)

    monkeypatch.setattr(Relu, "forward", reads_the_host)
    x, y = _data()
    model = _net()
    compiled = ember.compile(_step_fn(model, ember.optim.SGD(model.parameters(), lr=0.1)))
    with pytest.warns(RuntimeWarning) as caught:
        for _ in range(3):
            compiled(x, y)
    message = str(caught[0].message)
    assert "capture failed: RuntimeError: " in message, message
    assert re.search(r"\(op Relu, in ember/[a-z/_]+\.py:\d+\)$", message), message


class _AdamRuns:
    """An eager and a compiled Adam step on equal models, after 3 steps of each."""

    def __init__(self):
        self.x, self.y = _data()
        self.m_eager, self.m_graph = _net(), _net()
        self.o_eager = ember.optim.Adam(self.m_eager.parameters(), lr=1e-2)
        self.o_graph = ember.optim.Adam(self.m_graph.parameters(), lr=1e-2)
        self.eager = _step_fn(self.m_eager, self.o_eager)
        self.compiled = ember.compile(_step_fn(self.m_graph, self.o_graph))
        for _ in range(3):
            self.step_both()

    def step_both(self):
        return self.compiled(self.x, self.y), self.eager(self.x, self.y)

    def check_equal(self, steps=3):
        for _ in range(steps):
            lc, le = self.step_both()
            np.testing.assert_allclose(lc.item(), le.item(), rtol=1e-6)
        for a, b in zip(_params(self.m_eager), _params(self.m_graph)):
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7)


def test_loaded_optimizer_state_keeps_the_graph(gpu, capsys):
    """``load_state_dict`` copies into the state the graph reads: replays go on, and match."""
    r = _AdamRuns()
    r.o_eager.load_state_dict(r.o_eager.state_dict())
    r.o_graph.load_state_dict(r.o_graph.state_dict())
    r.check_equal()
    assert "retracing" not in capsys.readouterr().err
    assert r.compiled._latest.runner.captures == 1


def test_replaced_optimizer_state_retraces(gpu, capsys):
    """State replaced by other tensors (``opt.state.clear()`` starts over) is not what the
    graph reads: the next call traces again and captures a new graph."""
    r = _AdamRuns()
    r.o_eager.state.clear()
    r.o_graph.state.clear()
    r.check_equal(steps=4)
    assert "Adam's state was replaced" in capsys.readouterr().err
    assert r.compiled.traces == 2 and r.compiled._latest.runner.captures == 1


def test_switches(gpu):
    x, y = _data()
    model = _net()
    for kwargs in ({"cuda_graph": False}, {"mode": "max-autotune-no-cudagraphs"}):
        step = ember.compile(_step_fn(model, ember.optim.SGD(model.parameters(), lr=0.1)), **kwargs)
        step(x, y)
        assert step._latest.runner is None
    with pytest.raises(ValueError, match="unknown mode 'fast'"):
        ember.compile(lambda x: x, mode="fast")


def test_cpu_steps_have_no_runner():
    model = _net(device="cpu")
    step = ember.compile(_step_fn(model, ember.optim.SGD(model.parameters(), lr=0.1)))
    step(*_data(device="cpu"))
    assert step._latest.runner is None


# -- cuBLAS during capture --------------------------------------------------------------------


def test_gemm_plan_against_numpy():
    """The column-major GEMM arguments, run by a NumPy model of cuBLAS, give ``a @ b`` for
    C-contiguous and transposed operands."""
    rng = np.random.default_rng(0)

    def colmajor(buf, rows, cols, ld):
        return np.lib.stride_tricks.as_strided(buf, (rows, cols), (buf.itemsize, ld * buf.itemsize))

    def run(p, a, b):
        A = colmajor(b.ravel(order="K"), *((p.k, p.m) if p.transa else (p.m, p.k)), p.lda)
        B = colmajor(a.ravel(order="K"), *((p.n, p.k) if p.transb else (p.k, p.n)), p.ldb)
        A = A.T if p.transa else A
        B = B.T if p.transb else B
        return (A @ B).T  # C^T column-major is C row-major

    for ta in (False, True):
        for tb in (False, True):
            a = rng.standard_normal((5, 7) if not ta else (7, 5)).astype(np.float32)
            b = rng.standard_normal((7, 3) if not tb else (3, 7)).astype(np.float32)
            a, b = (a.T if ta else a), (b.T if tb else b)
            p = _cublas.gemm_plan(a.shape, a.strides, b.shape, b.strides, 4)
            assert (p.transa, p.transb) == (int(tb), int(ta))
            np.testing.assert_allclose(run(p, a, b), a @ b, rtol=1e-5)
    odd = np.ones((4, 6), np.float32)[:, ::2]
    assert _cublas.gemm_plan(odd.shape, odd.strides, (3, 2), (8, 4), 4) is None


# -- on a GPU ------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="needs a GPU")
@pytest.mark.parametrize("name", ["adam", "adamw-amsgrad", "sgd-nesterov"])
def test_gpu_graph_matches_eager(name):
    make = OPTIMIZERS[name]
    x, y = _data()
    m_eager, m_graph = _net(), _net()
    o_eager, o_graph = make(m_eager.parameters()), make(m_graph.parameters())
    eager, compiled = _step_fn(m_eager, o_eager), ember.compile(_step_fn(m_graph, o_graph))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for _ in range(6):
            np.testing.assert_allclose(compiled(x, y).item(), eager(x, y).item(), rtol=1e-4)
    runner = compiled._latest.runner
    replays = 4 if name.startswith("sgd-") else 5  # SGD's second step traces again
    assert runner.disabled is None and runner.captures == 1 and runner.replays == replays
    for a, b in zip(_params(m_eager), _params(m_graph)):
        np.testing.assert_allclose(b, a, rtol=1e-3, atol=1e-5)


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="needs a GPU")
@pytest.mark.parametrize(
    "sa, sb", [((5, 7), (7, 3)), ((2, 5, 7), (7, 3)), ((5, 7), (2, 7, 3)), ((2, 5, 7), (2, 7, 3))]
)
def test_gpu_capturable_matmul(sa, sb):
    import cupy as cp

    rng = np.random.default_rng(0)
    a = cp.asarray(rng.standard_normal(sa).astype(np.float32))
    b = cp.asarray(rng.standard_normal(sb).astype(np.float32))
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        c = _cublas.matmul(cp, a, b)
        ct = _cublas.matmul(cp, a.swapaxes(-1, -2).copy().swapaxes(-1, -2), b)
        g = s.end_capture()
        g.launch()
    s.synchronize()
    want = cp.asnumpy(a) @ cp.asnumpy(b)
    np.testing.assert_allclose(cp.asnumpy(c), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(cp.asnumpy(ct), want, rtol=1e-4, atol=1e-5)
