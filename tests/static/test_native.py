"""ember.static.native: a compiled plan's runs of steps as one numba call give the steps' bits."""

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.backend import jit as _jit
from ember.static import executor, native
from tests.static._steps import train_step

pytestmark = pytest.mark.skipif(not _jit.available(), reason="numba is not installed")


@pytest.fixture
def sync(monkeypatch):
    """Kernels compiled in the caller, and a run asked for on its first call."""
    prev = _jit.set_mode("sync")
    monkeypatch.setattr(native, "ASK_AFTER", 1)
    yield
    _jit.set_mode(prev)


def _plan(fn):
    return (fn._latest.runner or fn._latest).plan


def _results(f, args, calls, runs: bool, monkeypatch):
    """The outputs of ``calls`` calls of ``ember.compile(f)``, as arrays, and its plan, with
    the numba runs on or off."""
    with monkeypatch.context() as m:
        if not runs:
            m.setattr(executor, "_native_runs", lambda plan, steps: {})
        c = ember.compile(f)
        outs = [[np.array(o.numpy()) for o in _tuple(c(*args()))] for _ in range(calls)]
    return outs, _plan(c)


def _tuple(out):
    return out if isinstance(out, tuple) else (out,)


def _same_bits(a, b):
    for xs, ys in zip(a, b):
        for x, y in zip(xs, ys):
            assert x.dtype == y.dtype and x.shape == y.shape
            bits = x.reshape(-1).view(np.uint8), y.reshape(-1).view(np.uint8)
            np.testing.assert_array_equal(*bits)


def _rand(*shape, seed=0, dtype=np.float32):
    return ember.tensor(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def _mm_chain(x, w, v):
    return ((x @ w.T) * 0.5 + 1.0) @ v


def _sums(x):
    y = x * x
    return y.sum(), (y + 1.0).sum(0), (y - x).sum((0, 1))


def _permuted(x, w):
    return (x.permute(2, 0, 1) * 2.0).permute(1, 2, 0) @ w


def _scalars(a, b):
    return (a + b) / (a - b) * a, a * 3.0


def _reshaped(x, w):  # a view of the run's own array, and a copy of a transposed one
    return (x * 2.0).reshape(6, 20) @ w, x.T.reshape(4, 30) * 3.0


def _inner(a, b):  # the inner dimension is split over the threads (blas.split_of: "inner")
    return (a @ b) * 2.0 + 1.0


CASES = {
    "matmul chain, small and split": (
        _mm_chain,
        lambda: (_rand(64, 1000), _rand(100, 1000, seed=1), _rand(100, 10, seed=2)),
    ),  # noqa: E501
    "sums: all, leading, pairwise tree": (_sums, lambda: (_rand(300, 47),)),
    "sums: short (under 8) and 3-D": (_sums, lambda: (_rand(2, 3, 1),)),
    "permute 3-D, then a product": (_permuted, lambda: (_rand(4, 5, 6), _rand(6, 3, seed=1))),
    "0-d arithmetic": (_scalars, lambda: (_rand(), _rand(seed=1))),
    "reshape: a view, a copy": (_reshaped, lambda: (_rand(12, 10), _rand(20, 3, seed=1))),
    "float64": (
        _mm_chain,
        lambda: tuple(
            _rand(*s, seed=i, dtype=np.float64) for i, s in enumerate(((8, 30), (20, 30), (20, 4)))
        ),
    ),  # noqa: E501
    "inner split": (_inner, lambda: (_rand(16, 8192), _rand(8192, 16, seed=1))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_runs_give_the_steps_bits(name, sync, monkeypatch):
    f, args = CASES[name]
    fast, plan = _results(f, args, 6, True, monkeypatch)
    slow, _ = _results(f, args, 6, False, monkeypatch)
    ready = [r for r in plan.native_runs() if r.fn is not None]
    assert ready, [(r.error, [type(n.op).__name__ for n in r.nodes]) for r in plan.native_runs()]
    _same_bits(fast, slow)


@pytest.mark.parametrize(
    "make_opt",
    [lambda p: ember.optim.Adam(p, lr=1e-3), lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9)],
    ids=["adam", "sgd-momentum"],
)  # noqa: E501
def test_a_training_step_as_one_run_keeps_the_steps_bits(make_opt, sync, monkeypatch):
    x, y = _rand(64, 100), _rand(64, 10, seed=1)
    results = []
    for runs in (True, False):
        ember.manual_seed(0)
        model = nn.Sequential(nn.Linear(100, 50), nn.ReLU(), nn.Linear(50, 10))
        opt = make_opt(model.parameters())
        with monkeypatch.context() as m:
            if not runs:
                m.setattr(executor, "_native_runs", lambda plan, steps: {})
            step = ember.compile(train_step)
            losses = [float(step(model, opt, x, y).item()) for _ in range(8)]
        if runs:
            ready = [r for r in _plan(step).native_runs() if r.fn is not None]
            assert ready and max(len(r.nodes) for r in ready) >= 10
        results.append((losses, [p.detach().numpy().copy() for p in model.parameters()]))
    (l1, p1), (l2, p2) = results
    assert l1 == l2
    for a, b in zip(p1, p2):
        np.testing.assert_array_equal(a, b)


def test_a_refused_input_sends_the_run_back_to_its_steps(sync, monkeypatch):
    c = ember.compile(_mm_chain)
    x, w, v = _rand(64, 100), _rand(30, 100, seed=1), _rand(30, 10, seed=2)
    for _ in range(6):
        c(x, w, v)
    (run,) = [r for r in _plan(c).native_runs() if r.fn is not None]
    wide = ember.tensor(np.asfortranarray(x.numpy()))  # the same values, numba's type differs
    out = c(wide, w, v)
    assert run.fn is None and "refused" in run.error
    np.testing.assert_array_equal(out.numpy(), _mm_chain(x, w, v).numpy())
    np.testing.assert_array_equal(c(x, w, v).numpy(), _mm_chain(x, w, v).numpy())


def test_runs_wait_for_ask_after_calls(monkeypatch):
    prev = _jit.set_mode("sync")
    try:
        monkeypatch.setattr(native, "ASK_AFTER", 5)
        c = ember.compile(_mm_chain)
        args = (_rand(8, 30), _rand(20, 30, seed=1), _rand(20, 4, seed=2))
        for _ in range(executor.GENERATE_AFTER + 3):
            c(*args)
        assert all(r.fn is None and r.kernel is None for r in _plan(c).native_runs())
        for _ in range(3):
            c(*args)
        assert any(r.fn is not None for r in _plan(c).native_runs())
    finally:
        _jit.set_mode(prev)


def test_pairwise_sum_is_numpys_for_every_length(sync):
    kernel = _jit.kernel(
        "run",
        native.HEADER
        + native.SUMS
        + "\n\n@njit(cache=True, nogil=True)\ndef kernel(x):\n    return sum_all(x)\n",
    )
    rng = np.random.default_rng(0)
    for n in [*range(1, 300), 640, 1000, 4097, 8192, 10001, 65536, 100003]:
        for dtype in (np.float32, np.float64):
            a = (rng.standard_normal(n) * 10).astype(dtype)
            assert kernel.fn(a) == a.sum(), (n, dtype)
    negative_zeros = -np.zeros(5, np.float32)
    assert str(kernel.fn(negative_zeros)) == str(negative_zeros.sum())


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_a_forked_child_runs_the_steps(sync):
    import multiprocessing as mp

    c = ember.compile(_mm_chain)
    args = (_rand(64, 1000), _rand(100, 1000, seed=1), _rand(100, 10, seed=2))
    for _ in range(6):
        c(*args)
    assert any(r.fn is not None for r in _plan(c).native_runs())
    expected = _mm_chain(*args).numpy()

    def child(q):
        runs = _plan(c).native_runs()
        out = c(*args).numpy()
        close = np.abs(out - expected).max() <= 1e-5 * np.abs(expected).max()  # NumPy's BLAS
        q.put((_jit.mode(), [r.fn is None for r in runs], bool(close)))

    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    mode, cleared, same = q.get(timeout=60)
    p.join(60)
    assert same and (mode != "off" or all(cleared)), (mode, cleared, same)


def test_an_operand_cblas_cannot_take_is_copied_first(sync):
    """A product whose operand has no unit stride (a strided view fed in): the run copies it
    (NumPy's own loop then differs in the last bits)."""
    c = ember.compile(_mm_chain)
    rng = np.random.default_rng(0)
    wide = rng.standard_normal((64, 400)).astype(np.float32)
    x = ember.from_numpy(wide[:, ::4])
    w, v = _rand(30, 100, seed=1), _rand(30, 10, seed=2)
    assert not x.numpy().flags.c_contiguous and not x.numpy().flags.f_contiguous
    for _ in range(6):
        out = c(x, w, v)
    assert any(r.fn is not None for r in _plan(c).native_runs())
    np.testing.assert_allclose(out.numpy(), _mm_chain(x, w, v).numpy(), rtol=1e-5, atol=1e-4)


def test_a_run_is_cut_before_it_holds_many_dead_inputs(sync, monkeypatch):
    """The caller holds a run's inputs until it returns: a run stops where the arrays made
    before it and dead within it pass ``HOLD_BYTES``."""

    def chain(x):
        ys = [x * float(i + 2) for i in range(6)]  # six 64 KiB arrays, each read once later
        total = x.sum(1, keepdim=True)  # no numba form: the runs part here
        for y in ys:
            total = total + y @ y.T
        return total

    x = _rand(64, 256)
    counts = []
    for cap in (1 << 30, 1 << 16):
        monkeypatch.setattr(native, "HOLD_BYTES", cap)
        c = ember.compile(chain)
        for _ in range(6):
            out = c(x)
        counts.append(len([r for r in _plan(c).native_runs() if r.fn is not None]))
        np.testing.assert_allclose(out.numpy(), chain(x).numpy(), rtol=1e-6)
    assert counts[0] == 2 and counts[1] > 2, counts


def test_a_type_error_from_inside_a_run_is_raised(sync, monkeypatch):
    """Only numba's refusal of the argument types sends a run back to its steps: an error from
    inside the run (which may have written state already) is raised, naming the node."""
    c = ember.compile(_mm_chain)
    args = (_rand(8, 30), _rand(20, 30, seed=1), _rand(20, 4, seed=2))
    for _ in range(6):
        c(*args)
    (run,) = [r for r in _plan(c).native_runs() if r.fn is not None]

    def broken(*a):
        raise TypeError("unsupported operand inside the run")

    monkeypatch.setattr(run, "fn", broken)
    with pytest.raises(Exception, match="unsupported operand inside the run"):
        c(*args)
    assert run.fn is broken
