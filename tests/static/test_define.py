"""Define-and-run: placeholders, Variables, gradients, group, Session."""

import numpy as np
import pytest

import ember
from ember import static


def _two_layer(batch=None):
    g = static.Graph("net")
    with g.as_default():
        x = static.placeholder((batch, 6), name="x")
        y = static.placeholder((batch, 3), name="y")
        ember.manual_seed(0)
        w1 = static.Variable(ember.randn(6, 5), name="w1")
        w2 = static.Variable(ember.randn(5, 3), name="w2")
        h = (x @ w1).clamp(min=0)
        loss = ((h @ w2 - y) ** 2).sum(dim=1).mean()
        gw1, gw2 = static.gradients(loss, [w1, w2])
        step = static.group(w1.assign(w1 - 0.01 * gw1), w2.assign(w2 - 0.01 * gw2))
        init = static.global_variables_initializer()
    return g, (x, y, w1, w2, loss, gw1, gw2, step, init)


def _eager_step(w1, w2, x, y):
    w1 = ember.tensor(w1, requires_grad=True)
    w2 = ember.tensor(w2, requires_grad=True)
    loss = (((ember.tensor(x) @ w1).clamp(min=0) @ w2 - ember.tensor(y)) ** 2).sum(dim=1).mean()
    loss.backward()
    return loss.item(), w1.grad.numpy(), w2.grad.numpy()


@pytest.mark.parametrize("batch", [None, 4])
def test_two_layer_net_trains_like_eager(batch):
    g, (x, y, w1, w2, loss, gw1, gw2, step, init) = _two_layer(batch)
    rng = np.random.default_rng(0)
    xs, ys = rng.standard_normal((4, 6)), rng.standard_normal((4, 3))
    with static.Session(g) as sess:
        sess.run(init)
        for _ in range(3):
            w1v, w2v = sess.run([w1, w2])
            want_loss, want_g1, want_g2 = _eager_step(
                w1v, w2v, xs.astype(np.float32), ys.astype(np.float32)
            )
            got_loss, got_g1, got_g2, _ = sess.run([loss, gw1, gw2, step], {x: xs, y: ys})
            np.testing.assert_allclose(got_loss, want_loss, rtol=1e-5)
            np.testing.assert_allclose(got_g1, want_g1, rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(got_g2, want_g2, rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(sess.run(w1), w1v - 0.01 * want_g1, rtol=1e-5, atol=1e-6)


def test_unknown_batch_runs_any_size():
    g, (x, y, w1, w2, loss, *_rest, init) = _two_layer(None)
    with static.Session(g) as sess:
        sess.run(init)
        for n in (1, 7):
            assert sess.run(loss, {x: np.ones((n, 6)), y: np.zeros((n, 3))}).shape == ()
    assert x.shape[1] == 6


def test_variables_assign_group_and_reads_before_assignment():
    g = static.Graph()
    with g.as_default():
        a = static.Variable(ember.tensor([1.0, 2.0]), name="a")
        b = static.Variable(ember.zeros(2), name="b")
        inc = a.assign_add(ember.ones(2))
        both = static.group(inc, b.assign(a * 10))
        dec = a.assign_sub(1.0)
        init = static.global_variables_initializer()
    with static.Session(g) as sess:
        assert sess.run(init) is None
        old, new = sess.run([a, inc])  # the read sees the value from before the assignment
        np.testing.assert_array_equal(old, [1.0, 2.0])
        np.testing.assert_array_equal(new, [2.0, 3.0])
        np.testing.assert_array_equal(sess.run(a), [2.0, 3.0])
        assert sess.run(both) is None
        np.testing.assert_array_equal(sess.run(b), [20.0, 30.0])  # b read a before its increment
        np.testing.assert_array_equal(sess.run(a), [3.0, 4.0])
        np.testing.assert_array_equal(sess.run(dec), [2.0, 3.0])
        out = sess.run({"a": a, "pair": (a, [b])})
        assert set(out) == {"a", "pair"} and isinstance(out["pair"], tuple)
    with static.Session(g) as other:  # each session keeps its own values
        with pytest.raises(ember.EmberError, match="variable 'a' .* before it was initialized"):
            other.run(a)


def test_assign_checks_shape_and_dtype():
    g = static.Graph()
    with g.as_default():
        v = static.Variable(ember.zeros(2, 3), name="v")
        with pytest.raises(ember.ShapeError, match=r"v.assign: value of shape \(3,\)"):
            v.assign(ember.zeros(3))
        with pytest.raises(static.TraceError, match="in-place op on Variable 'v'"):
            with ember.no_grad():
                v.add_(1)


def test_feed_validation_names_the_placeholder():
    g = static.Graph()
    with g.as_default():
        x = static.placeholder((None, 3), name="x")
        k = static.placeholder((2,), ember.int64, name="k")
        y = x.sum() + k.sum()
        y2 = x.sum()
    sess = static.Session(g)
    with pytest.raises(
        ember.ShapeError, match=r"'x' expects shape \(None, 3\) .* fed shape \(2, 4\)"
    ):
        sess.run(y, {x: np.ones((2, 4)), k: [1, 2]})
    with pytest.raises(
        ember.ShapeError, match=r"'k' expects shape \(2,\) but was fed shape \(3,\)"
    ):
        sess.run(y, {x: np.ones((2, 3)), k: [1, 2, 3]})
    with pytest.raises(
        ember.DTypeError, match="'k' expects dtype ember.int64 but was fed ember.float64"
    ):
        sess.run(y, {x: np.ones((2, 3)), k: np.array([1.5, 2.0])})
    with pytest.raises(ember.EmberError, match="must feed a value for placeholder 'k'"):
        sess.run(y, {x: np.ones((2, 3))})
    assert sess.run(y, {x: np.ones((2, 3)), k: [1, 2]}) == 9.0
    assert sess.run(y2, {x: np.ones((1, 3))}) == 3.0  # k is not needed


def test_fetch_from_another_graph_and_bad_fetches():
    g1, g2 = static.Graph("one"), static.Graph("two")
    with g1.as_default():
        a = static.placeholder((1,))
    with g2.as_default():
        b = static.placeholder((1,))
    with pytest.raises(static.TraceError, match="graph 'two' outside that graph"):
        static.Session(g1).run(b * 2, {b: [1.0]})
    with pytest.raises(ember.EmberError, match="fetches must be tensors"):
        static.Session(g1).run("a", {a: [1.0]})


def test_gradients_unconnected_and_integer_inputs_are_none():
    g = static.Graph()
    with g.as_default():
        x = static.placeholder((3,))
        z = static.placeholder((3,))
        i = static.placeholder((3,), ember.int64)
        y = (x * i).sum()
        gx, gz, gi = static.gradients(y, [x, z, i])
        (ggx,) = static.gradients(static.gradients((x**3).sum(), [x])[0].sum(), [x])
    assert gz is None and gi is None
    out = static.Session(g).run([gx, ggx], {x: [1.0, 2.0, 3.0], i: [4, 5, 6]})
    np.testing.assert_array_equal(out[0], [4.0, 5.0, 6.0])
    np.testing.assert_array_equal(out[1], [6.0, 12.0, 18.0])


def test_default_graph_and_eager_ops_stay_eager():
    x = static.placeholder((2,), name="x")  # no `with`: the default graph
    y = x * 2
    assert type(y._data).__name__ == "Symbol"
    e = ember.ones(2) * 3  # ordinary tensors still compute
    assert e.tolist() == [3.0, 3.0]
    e.add_(1)
    assert e.tolist() == [4.0, 4.0]
    assert static.get_default_graph() is x._data.graph
    np.testing.assert_array_equal(static.Session().run(y, {x: [1.0, 2.0]}), [2.0, 4.0])
    static.reset_default_graph()
    assert ember._config.state.tracer is None


def test_branching_on_a_placeholder_value_points_at_the_line():
    g = static.Graph()
    with g.as_default():
        x = static.placeholder(())
        with pytest.raises(static.TraceError, match=r"bool\(\) of a tensor .*test_define.py:\d+"):
            if x > 0:
                pass
        with pytest.raises(static.TraceError, match=r"tensor.item\(\)"):
            x.item()


def test_graph_on_a_device_matches_eager(device):
    rng = np.random.default_rng(0)
    xs, w0 = rng.standard_normal((4, 6)), rng.standard_normal((6, 5))
    g = static.Graph("on_device")
    with g.as_default():
        x = static.placeholder((None, 6), name="x", device=device)
        w = static.Variable(ember.tensor(w0, dtype=ember.float32, device=device), name="w")
        loss = (x @ w).tanh().sum()
        (gw,) = static.gradients(loss, [w])
        step = w.assign(w - 0.1 * gw)
        init = static.global_variables_initializer()
    eager_w = ember.tensor(w0, dtype=ember.float32, requires_grad=True)
    eager_loss = (ember.tensor(xs, dtype=ember.float32) @ eager_w).tanh().sum()
    eager_loss.backward()
    with static.Session(g) as sess:
        sess.run(init)
        feed = ember.tensor(xs, device=device)  # float64 tensor on the device: cast and kept
        got_loss, got_w = sess.run([loss, step], {x: feed})
        assert type(got_w) is np.ndarray  # fetched values come back to the host
        np.testing.assert_allclose(got_loss, eager_loss.item(), rtol=1e-5)
        want_w = (eager_w - 0.1 * eager_w.grad).detach().numpy()
        np.testing.assert_allclose(got_w, want_w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(sess.run(loss, {x: xs}), sess.run(loss, {x: feed}))


def test_mixing_devices_in_a_graph_names_both(fake_cuda):
    with static.Graph().as_default():
        x = static.placeholder((None, 6), name="x")
        w = static.Variable(ember.ones(6, 5, device="cuda"), name="w")
        with pytest.raises(ember.DeviceError, match=r"MatMul: .* found cpu and cuda:0"):
            x @ w
