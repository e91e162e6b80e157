"""TF1 programs (placeholders, gradients, Variables, assign, group, Session, tf.train) give the
numbers their ember-native eager versions give."""

import numpy as np
import pytest

import ember
import ember.compat.tf as tf
from ember import EmberError

N, D, H = 16, 40, 20
LR = 1e-4


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal((N, D)),
        rng.standard_normal((N, D)),
        rng.standard_normal((D, H)),
        rng.standard_normal((H, D)),
    )


def native_losses(xs, ys, w1, w2, steps):
    """The same two-layer net trained by plain eager ember (float64 weights outside, as the
    TF1 program keeps them in NumPy)."""
    x = ember.tensor(xs, dtype=ember.float32)
    y = ember.tensor(ys, dtype=ember.float32)
    w1, w2, out = w1.copy(), w2.copy(), []
    for _ in range(steps):
        a = ember.tensor(w1, dtype=ember.float32, requires_grad=True)
        b = ember.tensor(w2, dtype=ember.float32, requires_grad=True)
        loss = ((x @ a).clamp(min=0) @ b - y).pow(2).sum(dim=1).mean()
        loss.backward()
        w1 -= LR * a.grad.numpy()
        w2 -= LR * b.grad.numpy()
        out.append(loss.item())
    return out, w1, w2


def test_tf1_two_layer_net_with_placeholders(data):
    xs, ys, w1_0, w2_0 = data
    # -- the CS231n TF1 program, import changed ----------------------------------------------
    x = tf.placeholder(tf.float32, shape=(N, D))
    y = tf.placeholder(tf.float32, shape=(N, D))
    w1 = tf.placeholder(tf.float32, shape=(D, H))
    w2 = tf.placeholder(tf.float32, shape=(H, D))
    h = tf.maximum(tf.matmul(x, w1), 0)
    y_pred = tf.matmul(h, w2)
    diff = y_pred - y
    loss = tf.reduce_mean(tf.reduce_sum(diff**2, axis=1))
    grad_w1, grad_w2 = tf.gradients(loss, [w1, w2])
    losses = []
    with tf.Session() as sess:
        values = {x: xs, w1: w1_0.copy(), w2: w2_0.copy(), y: ys}
        for _ in range(10):
            loss_val, grad_w1_val, grad_w2_val = sess.run([loss, grad_w1, grad_w2], values)
            values[w1] -= LR * grad_w1_val
            values[w2] -= LR * grad_w2_val
            losses.append(loss_val)
    # ----------------------------------------------------------------------------------------
    ref, r1, r2 = native_losses(xs, ys, w1_0, w2_0, 10)
    np.testing.assert_allclose(losses, ref, rtol=1e-6)
    np.testing.assert_allclose(values[w1], r1, rtol=1e-6)
    assert losses[-1] < losses[0]
    assert not tf.executing_eagerly()
    tf.compat.v1.reset_default_graph()
    assert tf.executing_eagerly()


def test_tf1_two_layer_net_with_variables_assign_and_group(data):
    xs, ys, w1_0, w2_0 = data
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, shape=(None, D))
        y = tf.placeholder(tf.float32, shape=(None, D))
        w1 = tf.Variable(w1_0.astype(np.float32))
        w2 = tf.Variable(w2_0.astype(np.float32))
        h = tf.maximum(tf.matmul(x, w1), 0)
        loss = tf.reduce_mean(tf.reduce_sum((tf.matmul(h, w2) - y) ** 2, axis=1))
        grad_w1, grad_w2 = tf.gradients(loss, [w1, w2])
        new_w1 = w1.assign(w1 - LR * grad_w1)
        new_w2 = w2.assign(w2 - LR * grad_w2)
        updates = tf.group(new_w1, new_w2)
        assert isinstance(w1, ember.static.Variable)
        assert tf.trainable_variables() == [w1, w2]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, updates], {x: xs, y: ys})[0] for _ in range(10)]
            final_w1 = sess.run(w1)
    assert tf.executing_eagerly()
    # the native version keeps float32 weights
    a = ember.tensor(w1_0, dtype=ember.float32, requires_grad=True)
    b = ember.tensor(w2_0, dtype=ember.float32, requires_grad=True)
    xe, ye = ember.tensor(xs, dtype=ember.float32), ember.tensor(ys, dtype=ember.float32)
    ref = []
    for _ in range(10):
        loss_e = ((xe @ a).clamp(min=0) @ b - ye).pow(2).sum(dim=1).mean()
        ga, gb = ember.autograd.grad(loss_e, [a, b])
        with ember.no_grad():
            a -= LR * ga
            b -= LR * gb
        ref.append(loss_e.item())
    np.testing.assert_allclose(losses, ref, rtol=1e-6)
    np.testing.assert_allclose(final_w1, a.detach().numpy(), rtol=1e-6)


def test_tf1_optimizers_and_layers_dense(data):
    xs, ys, _, _ = data
    tf.random.set_seed(0)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, shape=(None, D))
        y = tf.placeholder(tf.float32, shape=(None, D))
        h = tf.layers.dense(x, H, activation=tf.nn.relu)
        y_pred = tf.layers.dense(h, D)
        loss = tf.losses.mean_squared_error(y_pred, y)  # TF1: the scalar mean
        assert loss.shape == ()
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        variables = tf.global_variables()
        assert [tuple(v.shape) for v in variables] == [(D, H), (H,), (H, D), (D,)]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            start = [sess.run(v) for v in variables]
            losses = [sess.run([loss, train], {x: xs, y: ys})[0] for _ in range(5)]
    # glorot-uniform kernels, zero biases
    limit = np.sqrt(6 / (D + H))
    assert np.abs(start[0]).max() <= limit and np.abs(start[0]).max() > limit / 2
    assert not start[1].any()
    params = [ember.tensor(v, requires_grad=True) for v in start]
    xe, ye = ember.tensor(xs, dtype=ember.float32), ember.tensor(ys, dtype=ember.float32)
    ref = []
    for _ in range(5):
        out = (xe @ params[0] + params[1]).clamp(min=0) @ params[2] + params[3]
        loss_e = ((out - ye) ** 2).mean()
        grads = ember.autograd.grad(loss_e, params)
        with ember.no_grad():
            for p, g in zip(params, grads):
                p -= 0.1 * g
        ref.append(loss_e.item())
    np.testing.assert_allclose(losses, ref, rtol=1e-6)


def test_tf1_adam_matches_the_tf1_rule():
    w0 = np.array([1.0, -2.0, 3.0], np.float32)
    with tf.Graph().as_default():
        w = tf.Variable(w0)
        loss = tf.reduce_sum(w * w * w)
        step = tf.train.AdamOptimizer(0.1).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(step)
            got = sess.run(w)
    m = v = np.zeros(3)
    ref = w0.astype(np.float64)
    for t in range(1, 4):
        g = 3 * ref**2
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        ref = ref - 0.1 * np.sqrt(1 - 0.999**t) / (1 - 0.9**t) * m / (np.sqrt(v) + 1e-8)
    np.testing.assert_allclose(got, ref, rtol=1e-5)


def test_compat_v1_program_with_disabled_eager_execution():
    import ember.compat.tf.compat.v1 as tf1

    tf1.disable_eager_execution()
    w = tf1.Variable([[1.0], [2.0]])  # before any placeholder: still a graph Variable
    assert isinstance(w, ember.static.Variable)
    x = tf1.placeholder(tf1.float32, shape=[None, 2])
    step = tf1.train.MomentumOptimizer(0.1, momentum=0.9).minimize(tf1.reduce_sum(x @ w))
    with tf1.Session() as sess:
        sess.run(tf1.global_variables_initializer())
        for _ in range(2):
            sess.run(step, feed_dict={x: np.ones((1, 2))})
        got = sess.run(w)
    # accum: 1, then 1.9; w -= 0.1 * accum
    np.testing.assert_allclose(got, [[1 - 0.1 - 0.19], [2 - 0.1 - 0.19]], rtol=1e-6)
    assert tf1.losses.mean_squared_error is tf.graph.mean_squared_error
    tf1.enable_eager_execution()
    assert tf.executing_eagerly()
    assert not isinstance(tf.Variable(1.0), ember.static.Variable)


def test_tf1_errors():
    with pytest.raises(EmberError, match=r"placeholder: shape=None .* is not supported"):
        tf.placeholder(tf.float32)
    with pytest.raises(EmberError, match="in eager code use tf.GradientTape"):
        tf.gradients(tf.constant(1.0), [tf.constant(2.0)])
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, shape=(None, 3), name="x")
        y = tf.reduce_sum(x)
        with tf.Session() as sess:
            with pytest.raises(ember.ShapeError, match="placeholder 'x' expects shape"):
                sess.run(y, {x: np.ones((2, 4))})
    with pytest.raises(EmberError, match="the loss must be a graph tensor"):
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.constant(1.0))
