"""Optimized graphs compute what unoptimized ones do: every op case of the op tables (values and
symbolic gradients, through the whole pipeline), and compiled training steps against eager."""

import numpy as np
import pytest

import ember
from ember import static
from ember.backend import jit as _jit
from ember.static import passes
from ember.static.executor import Plan
from tests.ops.harness import XFAIL, _build, _first, all_cases

# Every case a graph can be built for: not data-dependent (declared on the case) and not a
# known failure of the define-and-run check (harness.XFAIL).
CASES = [c for c in all_cases() if not c.data_dependent and ("static", c.id) not in XFAIL]


@pytest.fixture
def jit_off():
    prev = _jit.set_mode("off")
    yield
    _jit.set_mode(prev)


def _run(g, feeds):
    return Plan(g, g.outputs).run(feeds, [])[0]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_optimized_graph_equals_unoptimized(case, jit_off):
    arrays = case.arrays()
    g, phs, out = _build(case, arrays, case.grad)
    out = _first(out)
    fetch = [out._data]
    if out.requires_grad:
        w = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(out._data.dtype)
        with g.as_default():
            loss = (out * ember.tensor(w)).sum()
        diff = [p for p in phs if p.requires_grad]
        fetch += [gr._data for gr in static.gradients(loss, diff) if gr is not None]
    g.outputs = fetch
    g.validate()
    opt = passes.optimize(g)
    opt.validate()
    feeds = [np.asarray(a, dtype=p._data.dtype) for a, p in zip(arrays, phs)]
    want = _run(g, feeds)
    got = _run(opt, feeds)
    for a, b in zip(got, want):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype
        if b.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, equal_nan=True)
        else:
            np.testing.assert_array_equal(a, b)


# -- compiled training steps -------------------------------------------------------------------

MODES = ["off"] + (["sync"] if _jit.available() else [])


def _mlp():
    nn = ember.nn
    return nn.Sequential(nn.Linear(20, 8), nn.ReLU(), nn.Linear(8, 3))


def _convnet():
    nn = ember.nn
    return nn.Sequential(
        nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(3 * 4 * 4, 10), nn.Sigmoid(), nn.Linear(10, 4),
    )  # fmt: skip


OPTIMIZERS = {
    "adam": lambda ps: ember.optim.Adam(ps, lr=1e-2),
    "adamw_amsgrad": lambda ps: ember.optim.AdamW(ps, lr=1e-2, weight_decay=0.1, amsgrad=True),
    "adam_wd": lambda ps: ember.optim.Adam(ps, lr=1e-2, weight_decay=0.01),
    "sgd_nesterov": lambda ps: ember.optim.SGD(
        ps, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3
    ),
    "sgd_dampening": lambda ps: ember.optim.SGD(ps, lr=0.05, momentum=0.5, dampening=0.3),
    "sgd": lambda ps: ember.optim.SGD(ps, lr=0.05),
}


def _train(model_fn, opt_name, data, compiled: bool, steps: int = 4):
    ember.manual_seed(0)
    model = model_fn()
    opt = OPTIMIZERS[opt_name](model.parameters())
    x, y = data
    loss_fn = ember.nn.functional.mse_loss if y.dtype.is_floating_point else None
    loss_fn = loss_fn or ember.nn.functional.cross_entropy

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    fn = ember.compile(step) if compiled else step
    losses = [float(fn(x, y).item()) for _ in range(steps)]
    return losses, [p.detach().numpy().copy() for p in model.parameters()], fn


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("opt_name", list(OPTIMIZERS))
def test_compiled_mlp_step_equals_eager(opt_name, mode):
    rng = np.random.default_rng(0)
    data = (
        ember.tensor(rng.standard_normal((6, 20)).astype(np.float32)),
        ember.tensor(rng.standard_normal((6, 3)).astype(np.float32)),
    )
    prev = _jit.set_mode(mode)
    try:
        le, pe, _ = _train(_mlp, opt_name, data, compiled=False)
        lc, pc, fn = _train(_mlp, opt_name, data, compiled=True)
    finally:
        _jit.set_mode(prev)
    text = str(fn.optimized_graph)  # the rule is ember ops, fused with the rest
    assert "FusedElementwise" in text and "Update" not in text
    np.testing.assert_allclose(lc, le, rtol=1e-5)
    for a, b in zip(pc, pe):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_compiled_convnet_step_equals_eager(mode):
    rng = np.random.default_rng(0)
    data = (
        ember.tensor(rng.standard_normal((5, 1, 8, 8)).astype(np.float32)),
        ember.tensor(rng.integers(0, 4, 5)),
    )
    prev = _jit.set_mode(mode)
    try:
        le, pe, _ = _train(_convnet, "sgd_nesterov", data, compiled=False)
        lc, pc, fn = _train(_convnet, "sgd_nesterov", data, compiled=True)
    finally:
        _jit.set_mode(prev)
    assert "FusedElementwise" in str(fn.optimized_graph)
    assert len(fn.optimized_graph.nodes) < len(fn.graph.nodes)
    np.testing.assert_allclose(lc, le, rtol=1e-5)
    for a, b in zip(pc, pe):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
