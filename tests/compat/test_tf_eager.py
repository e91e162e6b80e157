"""TF2 eager: Variables, GradientTape and tf.function give what eager ember gives."""

import numpy as np
import pytest

import ember
import ember.compat.tf as tf
from ember import EmberError, ShapeError

N, D, H = 16, 30, 10
LR = 1e-4


@pytest.fixture
def data():
    rng = np.random.default_rng(1)
    return (
        rng.standard_normal((N, D)).astype(np.float32),
        rng.standard_normal((N, D)).astype(np.float32),
        rng.standard_normal((D, H)).astype(np.float32),
        rng.standard_normal((H, D)).astype(np.float32),
    )


def native(xs, ys, w1_0, w2_0, steps):
    x, y = ember.tensor(xs), ember.tensor(ys)
    w1 = ember.tensor(w1_0, requires_grad=True)
    w2 = ember.tensor(w2_0, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = ((x @ w1).clamp(min=0) @ w2 - y).pow(2).sum(dim=1).mean()
        loss.backward()
        with ember.no_grad():
            w1 -= LR * w1.grad
            w2 -= LR * w2.grad
        w1.grad = w2.grad = None
        losses.append(loss.item())
    return losses, w1.detach().numpy()


def test_variable_basics():
    v = tf.Variable([1.0, 2.0], name="v")
    assert v.name == "v:0" and v.dtype == tf.float32 and v.trainable
    assert isinstance(v, ember.Tensor) and tf.is_tensor(v)
    assert v.assign([3.0, 4.0]) is v
    assert v.numpy().tolist() == [3.0, 4.0]
    v.assign_sub([1.0, 1.0])
    v.assign_add(tf.constant([0.5, 0.5]))
    assert v.numpy().tolist() == [2.5, 3.5]
    arr = v.numpy()
    v.assign([0.0, 0.0])
    assert arr.tolist() == [2.5, 3.5]  # numpy() is a copy
    with pytest.raises(ShapeError, match=r"value of shape \(3,\) does not match the shape \(2,\)"):
        v.assign([1.0, 2.0, 3.0])
    i = tf.Variable(3)
    assert i.dtype == tf.int32 and not i.requires_grad
    i.assign_add(2)
    assert i.numpy() == 5
    f = tf.Variable(lambda: tf.zeros((2,)), trainable=False)
    assert not f.trainable
    w = v
    w += 1.0  # rebinds w to a tensor, as TensorFlow does; v is unchanged
    assert not isinstance(w, tf.Variable) and v.numpy().tolist() == [0.0, 0.0]
    src = np.ones(2, np.float32)
    c = tf.Variable(src)
    c.assign([5.0, 5.0])
    assert src.tolist() == [1.0, 1.0]  # the Variable holds a copy
    assert "tf.Variable 'Variable:0' shape=(2,) dtype=float32" in repr(c)
    assert (v.read_value() + 1).numpy().tolist() == [1.0, 1.0]


def test_ops_outside_tapes_record_nothing():
    v = tf.Variable([1.0, 2.0])
    y = v * 2
    assert not y.requires_grad
    assert y.numpy().tolist() == [2.0, 4.0]
    with tf.GradientTape() as tape:
        z = tf.reduce_sum(v * v)
        assert z.requires_grad
    assert tape.gradient(z, v).tolist() == [2.0, 4.0]
    assert z.numpy() == 5.0  # the non-persistent tape detached its target


def test_gradient_tape_loop_matches_native(data):
    xs, ys, w1_0, w2_0 = data
    w1, w2 = tf.Variable(w1_0), tf.Variable(w2_0)
    x, y = tf.constant(xs), tf.constant(ys)
    losses = []
    for _ in range(10):
        with tf.GradientTape() as tape:
            h = tf.maximum(tf.matmul(x, w1), 0)
            loss = tf.reduce_mean(tf.reduce_sum((tf.matmul(h, w2) - y) ** 2, axis=1))
        g1, g2 = tape.gradient(loss, [w1, w2])
        w1.assign_sub(LR * g1)
        w2.assign_sub(LR * g2)
        losses.append(loss.numpy())
    ref, ref_w1 = native(xs, ys, w1_0, w2_0, 10)
    np.testing.assert_allclose(losses, ref, rtol=1e-6)
    np.testing.assert_allclose(w1.numpy(), ref_w1, rtol=1e-6)


def test_function_decorated_step_matches_native(data):
    xs, ys, w1_0, w2_0 = data
    w1, w2 = tf.Variable(w1_0), tf.Variable(w2_0)
    opt = tf.keras.optimizers.SGD(learning_rate=LR)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            h = tf.maximum(tf.matmul(x, w1), 0)
            loss = tf.reduce_mean(tf.reduce_sum((tf.matmul(h, w2) - y) ** 2, axis=1))
        grads = tape.gradient(loss, [w1, w2])
        opt.apply_gradients(zip(grads, [w1, w2]))
        return loss

    losses = [train_step(tf.constant(xs), tf.constant(ys)).numpy() for _ in range(10)]
    assert train_step.traces == 1
    assert int(opt.iterations) == 10
    ref, ref_w1 = native(xs, ys, w1_0, w2_0, 10)
    np.testing.assert_allclose(losses, ref, rtol=1e-6)
    np.testing.assert_allclose(w1.numpy(), ref_w1, rtol=1e-6)


def test_tape_watch_persistent_and_structures():
    x = tf.constant([1.0, 2.0])
    c = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x])
        y = tf.reduce_sum(x**3) * c
    assert tape.gradient(y, x).tolist() == [9.0, 36.0]
    grads = tape.gradient(y, {"x": x, "c": c})
    assert list(grads) == ["x", "c"] and grads["c"] is None
    assert grads["x"].tolist() == [9.0, 36.0]
    z = tape.gradient(y, [x, c], unconnected_gradients="zero")[1]
    assert z.item() == 0.0
    assert not x.requires_grad  # watching ends with the block
    del tape
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(EmberError, match="only be called once on a non-persistent tape"):
        tape.gradient(y, x)


def test_tape_ignores_non_trainable_and_integer_sources():
    w = tf.Variable(2.0)
    frozen = tf.Variable(3.0, trainable=False)
    k = tf.constant(4)
    with tf.GradientTape() as tape:
        tape.watch(k)
        y = w * frozen * tf.cast(k, tf.float32)
    gw, gf, gk = tape.gradient(y, [w, frozen, k])
    assert gw.item() == 12.0 and gf is None and gk is None


def test_nested_tapes_give_second_derivatives():
    x = tf.Variable(2.0)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = x**3
        dy = inner.gradient(y, x)
    d2y = outer.gradient(dy, x)
    assert dy.item() == 12.0 and d2y.item() == 12.0


def test_output_gradients():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x, output_gradients=tf.constant([1.0, 10.0]))
    assert g.tolist() == [2.0, 40.0]
