"""ember.compile: compiled training steps change models exactly as eager steps do."""

import copy

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember import static


def _pair(make):
    ember.manual_seed(0)
    a = make()
    ember.manual_seed(0)
    b = make()
    return a, b


def _host(t):
    return t.detach().cpu().numpy()


def _same_state(m1, m2, grads=True):
    for (name, t1), t2 in zip(m1.state_dict().items(), m2.state_dict().values()):
        assert t2.device == t1.device, name
        np.testing.assert_allclose(_host(t2), _host(t1), rtol=1e-5, atol=1e-6, err_msg=name)
    if grads:
        for p1, p2 in zip(m1.parameters(), m2.parameters()):
            assert (p1.grad is None) == (p2.grad is None)
            if p1.grad is not None:
                np.testing.assert_allclose(_host(p2.grad), _host(p1.grad), rtol=1e-5, atol=1e-6)


def _train_step(model, opt, x, y, loss_fn):
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    return loss


def _check_training(make, make_opt, batches, loss_fn, device="cpu", traces=1):
    m1, m2 = _pair(make)
    m1.to(device)
    m2.to(device)
    o1, o2 = make_opt(m1.parameters()), make_opt(m2.parameters())
    step = ember.compile(_train_step)
    for x, y in batches:
        x, y = x.to(device), y.to(device)
        want = _train_step(m1, o1, x, y, loss_fn)
        got = step(m2, o2, x, y, loss_fn)
        assert got.device == want.device == ember.device(device)
        np.testing.assert_allclose(_host(got), _host(want), rtol=1e-5)
        _same_state(m1, m2)
    assert step.traces == traces
    return step


def _batches(n, xshape, classes, rng=None):
    rng = rng or np.random.default_rng(0)
    return [
        (
            ember.tensor(rng.standard_normal(xshape).astype(np.float32)),
            ember.tensor(rng.integers(0, classes, xshape[0])),
        )
        for _ in range(n)
    ]


def test_mlp_adam_matches_eager(device):
    step = _check_training(
        lambda: nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)),
        lambda p: ember.optim.Adam(p, lr=0.01),
        _batches(4, (6, 8), 4),
        F.cross_entropy,
        device,
    )
    text = str(step.graph)
    # the rule is ember ops: no optimizer node; its hyperparameters are state read on each run
    assert "Update" not in text and '"lr"' in text and '"betas[0]"' in text
    assert "Assign(" in text


def test_cnn_batchnorm_sgd_momentum_matches_eager(device):
    _check_training(
        lambda: nn.Sequential(
            nn.Conv2d(3, 4, 3, padding=1),
            nn.BatchNorm2d(4),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(4 * 4 * 4, 5),
        ),
        lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-3),
        _batches(3, (4, 3, 8, 8), 5),
        F.cross_entropy,
        device,
        traces=2,  # SGD's first momentum step copies the gradient: the second step retraces
    )


def test_lstm_matches_eager(device):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(3, 5, batch_first=True)
            self.head = nn.Linear(5, 2)

        def forward(self, x):
            out, _ = self.lstm(x)
            return self.head(out[:, -1])

    rng = np.random.default_rng(1)
    batches = [
        (
            ember.tensor(rng.standard_normal((2, 4, 3)).astype(np.float32)),
            ember.tensor(rng.standard_normal((2, 2)).astype(np.float32)),
        )
        for _ in range(3)
    ]
    _check_training(Net, lambda p: ember.optim.Adam(p, lr=0.01), batches, F.mse_loss, device)


def test_gradient_accumulation_without_zero_grad(device):
    m1, m2 = _pair(lambda: nn.Linear(3, 2))
    m1.to(device)
    m2.to(device)

    def accumulate(model, x):
        model(x).sum().backward()

    step = ember.compile(accumulate)
    x = ember.ones(4, 3, device=device)
    for _ in range(3):  # the first call starts from .grad None, later ones add to it
        accumulate(m1, x)
        step(m2, x)
        _same_state(m1, m2)
    m1.zero_grad()
    m2.zero_grad()
    accumulate(m1, x)
    step(m2, x)
    _same_state(m1, m2)
    assert step.traces == 1


def test_new_gradients_keep_disjoint_pieces_of_one_array_as_eager_does(device):
    """A batch norm's weight and bias gradients come from one kernel's (2, C) array: the
    compiled step keeps them as its two rows, no copies, as eager backward does; updating one
    in place leaves the other; the running statistics are written in their buffers."""
    m1, m2 = _pair(lambda: nn.BatchNorm2d(4))
    m1.to(device)
    m2.to(device)
    x = ember.randn(3, 4, 5, 5).to(device)
    buffers = [b._data for b in m2.buffers()]

    def step(model):
        model.zero_grad()
        model(x).square().sum().backward()

    compiled = ember.compile(step)
    for _ in range(3):
        step(m1)
        compiled(m2)
        _same_state(m1, m2)
        for m in (m1, m2):
            w, b = m.weight.grad._data, m.bias.grad._data
            assert w.base is not None and w.base is b.base
    assert all(b._data is a for b, a in zip(m2.buffers(), buffers))  # the same arrays, updated
    bias = m2.bias.grad.clone()
    m2.weight.grad.add_(1)
    np.testing.assert_array_equal(m2.bias.grad.cpu().numpy(), bias.cpu().numpy())


@pytest.mark.fake_kernels  # a real GPU's fused updates write the parameters in place
@pytest.mark.parametrize("make_opt", ["sgd", "adam"])
def test_a_conv_net_step_stores_its_state_and_gradients_without_copies(
    device, make_opt, monkeypatch
):
    """Every state array (weights, momentum, running statistics, step counters, Adam's per
    parameter counts read again by the fused updates) is written in place by the step's own
    kernels and every new gradient is kept where backward wrote it: the stores at the end of a
    run copy nothing (on a GPU: none in the captured graph)."""
    from ember.static import trace
    from ember.static.executor import Plan

    copies = []
    run_steps, own = Plan.run_steps, trace.NewGrads.own

    def counted_run_steps(self, *args):
        outs, stores = run_steps(self, *args)
        for v, arr in stores:
            if isinstance(v.ref, trace.ArrayRef) and arr is not v.ref.array:
                copies.append(f"state {v.name}")
        return outs, stores

    def counted_own(self, arr):
        kept = own(self, arr)
        copies.extend(["gradient"] * (kept is not arr))
        return kept

    monkeypatch.setattr(Plan, "run_steps", counted_run_steps)
    monkeypatch.setattr(trace.NewGrads, "own", counted_own)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(), nn.Linear(128, 4)
    ).to(device)
    if make_opt == "sgd":
        opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    else:
        opt = ember.optim.Adam(model.parameters(), lr=0.1)
    x, y = ember.randn(2, 3, 4, 4).to(device), ember.tensor([0, 3]).to(device)
    m2 = copy.deepcopy(model)
    opt2 = type(opt)(m2.parameters(), **{k: v for k, v in opt.defaults.items() if k != "params"})

    def step(model, opt):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    compiled = ember.compile(step)
    compiled(model, opt)  # the optimizer's first step (SGD's: a trace of its own)
    step(m2, opt2)
    copies.clear()
    for _ in range(3):  # the last trace's run, then (on a GPU) its capture and a replay
        compiled(model, opt)
        step(m2, opt2)
    assert not copies, copies
    _same_state(m2, model)


def test_closure_globals_and_in_place_updates_of_arguments():
    m = nn.Linear(2, 2)
    counter = ember.zeros(())

    @ember.compile
    def f(x, buf):
        counter.add_(1)
        buf.mul_(2)
        return m(x).sum(), {"n": counter * 1, "k": 3}

    buf = ember.ones(2)
    x = ember.ones(1, 2)
    for i in range(1, 4):
        with ember.no_grad():
            want = m(x).sum()
        out, extra = f(x, buf)
        assert float(out) == pytest.approx(float(want))
        assert float(extra["n"]) == i and extra["k"] == 3
        assert buf.tolist() == [2.0**i, 2.0**i]
    assert float(counter) == 3


def test_a_state_tensor_read_twice_by_one_op():
    """``w * w`` of a parameter the function reaches (an L2 penalty): both reads are the same
    state value, not the first read's stand-in captured as a second state array."""
    w = nn.Parameter(ember.tensor([1.0, -2.0, 3.0]))
    opt = ember.optim.SGD([w], lr=0.1)

    @ember.compile
    def step():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        opt.step()
        return loss

    want = np.array([1.0, -2.0, 3.0], np.float32)
    for _ in range(3):
        assert float(step()) == pytest.approx(float((want * want).sum()))
        want = want - 0.1 * 2 * want
        np.testing.assert_allclose(_host(w), want, rtol=1e-6)
    assert [v.name for v in step.graph.state if v.shape == (3,)] == [
        "opt.param_groups.0.0.grad",
        "opt.param_groups.0.0",
    ]


def test_backward_writes_the_grad_of_a_captured_leaf_and_of_an_argument():
    """A leaf that requires grad, reached as a global or passed as an argument (not through a
    module or optimizer), gets its ``.grad`` from a compiled ``backward`` as in eager mode:
    accumulated across calls, and started afresh after ``grad = None``."""
    w = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)

    def f(x):
        loss = (w * x * x).sum()
        loss.backward()
        return loss

    step = ember.compile(f)
    x = ember.tensor([1.0, -1.0, 2.0], requires_grad=True)
    xe = ember.tensor([1.0, -1.0, 2.0], requires_grad=True)
    we = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for i in range(3):
        if i == 2:
            w.grad = x.grad = we.grad = xe.grad = None
        step(x)
        (we * xe * xe).sum().backward()
        assert w.grad.tolist() == we.grad.tolist()
        assert x.grad.tolist() == xe.grad.tolist()
    assert step.traces == 1


def test_retrace_prints_the_changed_argument(capsys):
    @ember.compile
    def f(x, scale):
        return x * scale

    f(ember.ones(2), 2.0)
    f(ember.ones(2), 2.0)
    assert capsys.readouterr().err == ""
    assert f(ember.ones(2), 3.0).tolist() == [3.0, 3.0]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument 'scale' changed from 2.0 to 3.0" in err
    f(ember.ones(3), 3.0)
    assert "argument 'x' shape changed from (2,) to (3,)" in capsys.readouterr().err
    f(ember.ones(2), 2.0)  # cached
    assert capsys.readouterr().err == "" and f.traces == 3


def test_module_mode_switch_retraces(capsys):
    m = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    fast = ember.compile(m)
    x = ember.ones(2, 3)
    fast.eval()
    with ember.no_grad():
        np.testing.assert_allclose(fast(x).numpy(), m(x).numpy(), rtol=1e-6)
    fast.train()
    fast(x)
    assert "switched eval -> train" in capsys.readouterr().err


def test_branching_on_a_value_raises_at_the_line():
    @ember.compile
    def f(x):
        if x.sum() > 0:
            return x
        return -x

    x = ember.ones(2)
    with pytest.raises(
        static.TraceError,
        match=r"bool\(\) of a tensor .*test_compile.py:\d+ "
        r"\(if x.sum\(\) > 0:\)",
    ):
        f(x)
    assert x.tolist() == [1.0, 1.0]  # the argument got its data back

    @ember.compile
    def g(x):
        return x * x.max().item()

    with pytest.raises(static.TraceError, match=r"tensor.item\(\)"):
        g(x)


def test_loops_unroll_and_scheduler_changes_apply():
    w = nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([w], lr=0.5)
    sched = ember.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.1)

    @ember.compile
    def step(x):
        opt.zero_grad()
        y = x
        for _ in range(3):
            y = y * w
        y.sum().backward()
        opt.step()

    step(ember.ones(2))  # w -= 0.5 * 3
    sched.step()
    step(ember.ones(2))  # w -= 0.05 * 3 w^2
    np.testing.assert_allclose(w.detach().numpy(), [-0.5 - 0.05 * 3 * 0.25] * 2, rtol=1e-6)
    assert step.traces == 1
