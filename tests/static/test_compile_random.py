"""Random creation under ``ember.compile``: every draw is a side-effect op, so a compiled
function draws fresh numbers on every call, and after the same seed it gives the numbers
eager code gives (the graph runs the ops in the order the eager code drew them)."""

import os
import tempfile

import numpy as np
import pytest

import ember
from ember import static
from ember.ops.random import Random

# on a GPU these steps run without a CUDA graph (cuRAND draws are not captured), with a warning
pytestmark = pytest.mark.filterwarnings("ignore:ember.compile.*without a CUDA graph")


def _np(t) -> np.ndarray:
    return t.detach().cpu().numpy()


def _draws(x):
    """Every random creation function, on ``x``'s device."""
    d = x.device
    return (
        x + ember.randn(3, device=d),
        ember.rand(2, 2, device=d),
        ember.randint(0, 100, (4,), device=d),
        ember.randperm(5, device=d),
        ember.rand_like(x),
        ember.randn_like(x, dtype=ember.float64),
        ember.randint_like(x, 10),
        ember.normal(1.0, 2.0, (3,), device=d),
    )


@pytest.mark.parametrize("optimize", [True, False])
def test_compiled_draws_are_fresh_each_call_and_match_eager(device, optimize):
    f = ember.compile(_draws, optimize=optimize)
    x = ember.zeros(3, device=device)
    ember.manual_seed(5)
    eager = [_np(t) for t in _draws(x)]
    ember.manual_seed(5)
    first = [_np(t) for t in f(x)]  # traces, then runs the graph: same numbers as eager
    for a, b in zip(first, eager):
        np.testing.assert_array_equal(a, b)
    second = [_np(t) for t in f(x)]
    assert f.traces == 1
    for a, b in zip(first, second):
        assert not np.array_equal(a, b)  # not frozen at trace time
    ember.manual_seed(5)
    again = [_np(t) for t in f(x)]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    ops = [n.op for n in f.optimized_graph.nodes if isinstance(n.op, Random)]
    assert len(ops) == 8


def test_the_sequence_of_calls_matches_eager(device):
    def step(x):
        return x * ember.rand_like(x) + ember.randn(2, device=x.device)

    f = ember.compile(step)
    x = ember.ones(2, device=device)
    ember.manual_seed(1)
    eager = [_np(step(x)) for _ in range(3)]
    ember.manual_seed(1)
    compiled = [_np(f(x)) for _ in range(3)]
    np.testing.assert_array_equal(np.stack(eager), np.stack(compiled))


def test_passes_keep_equal_draws_apart_and_unused_draws_drawn(device):
    @ember.compile
    def f(x):
        ember.randn(4, device=x.device)  # unused: still drawn, as in eager mode
        return ember.randn(3, device=x.device) - ember.randn(3, device=x.device)

    def eager(x):
        ember.randn(4, device=x.device)
        return ember.randn(3, device=x.device) - ember.randn(3, device=x.device)

    x = ember.zeros(1, device=device)
    ember.manual_seed(2)
    got = _np(f(x))
    assert (got != 0).all()  # CSE did not merge the two draws
    ember.manual_seed(2)
    np.testing.assert_array_equal(got, _np(eager(x)))  # DCE kept the unused one


def test_a_function_of_no_tensors_draws_on_its_device(device):
    f = ember.compile(lambda: ember.randn(3, device=device) + 1)
    a, b = f(), f()
    assert a.device.type == ember.device(device).type and f.traces == 1
    assert a.cpu().tolist() != b.cpu().tolist()


def test_a_generator_draws_per_call_and_reseeds():
    g = ember.Generator().manual_seed(4)
    f = ember.compile(lambda x: x + ember.randn(3, generator=g))
    x = ember.zeros(3)
    a, b = f(x).tolist(), f(x).tolist()
    assert a != b
    g.manual_seed(4)
    assert f(x).tolist() == a
    ember.manual_seed(0)  # the default generator is not the one drawn from
    assert f(x).tolist() == b


def test_results_compose_with_other_ops_on_the_device(device):
    @ember.compile
    def f(x):
        noise = ember.randn(*x.shape, device=x.device)
        return (x + 0.1 * noise).relu().sum(), noise.std()

    x = ember.ones(64, 64, device=device)
    s1, sd1 = f(x)
    s2, _ = f(x)
    assert s1.device.type == ember.device(device).type
    assert float(s1.item()) != float(s2.item())
    assert abs(float(sd1.item()) - 1.0) < 0.05


def test_a_saved_graph_draws_per_run():
    f = ember.compile(lambda x: x + ember.rand(4))
    x = ember.zeros(4)
    f(x)
    path = os.path.join(tempfile.mkdtemp(), "g")
    static.save(f, path)
    g = static.load(path)
    a, b = g(x).tolist(), g(x).tolist()
    assert a != b and all(0 <= v < 1 for v in a + b)


def test_training_step_with_noise_compiles_and_trains():
    """A compiled step with input noise (a common augmentation) sees new noise every call."""
    lin = ember.nn.Linear(4, 1)
    opt = ember.optim.SGD(lin.parameters(), lr=0.1)
    x, y = ember.randn(32, 4), ember.randn(32, 1)
    seen = []

    @ember.compile
    def step(x, y):
        noisy = x + 0.01 * ember.randn_like(x)
        loss = ((lin(noisy) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    for _ in range(4):
        seen.append(float(step(x, y).item()))
    assert step.traces == 1 and len(set(seen)) == 4 and seen[-1] < seen[0]


def test_like_forms_on_a_placeholder_draw_per_session_run():
    """In a graph being defined, ``rand_like(placeholder)`` is a node (drawn per run, at the
    fed size), also with another dtype; draws on no symbolic input run now (constants)."""
    g = static.Graph()
    with g.as_default():
        x = static.placeholder((None, 3))
        noisy = x + ember.randn_like(x)
        u = ember.rand_like(x, dtype=ember.float64)
        with static.Session() as sess:
            a, ua = sess.run([noisy, u], {x: np.zeros((2, 3), np.float32)})
            b, ub = sess.run([noisy, u], {x: np.zeros((4, 3), np.float32)})
    assert a.shape == (2, 3) and b.shape == (4, 3) and ua.dtype == np.float64
    assert not np.array_equal(a, b[:2]) and not np.array_equal(ua, ub[:2])
    assert ((ub >= 0) & (ub < 1)).all()
