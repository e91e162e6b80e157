"""tf.keras over ember: layers (Keras layouts and initializers), losses, metrics, optimizers
(Keras rules), fit, custom and tf.function training loops, each checked against what
TensorFlow computes: closed forms in NumPy from the layers' weights (float64), and the numbers
the tf.keras API docs show in their examples. TensorFlow itself is not needed."""

import numpy as np
import pytest

import ember.compat.tf as tf
from ember import EmberError, ShapeError

keras = tf.keras


def conv_nhwc_ref(x, k, stride, padding):
    """A direct NHWC convolution with TensorFlow's padding (odd pixel bottom/right)."""
    n, h, w, _ = x.shape
    kh, kw, _, co = k.shape
    if padding == "same":
        oh, ow = -(-h // stride), -(-w // stride)
        ph = max((oh - 1) * stride + kh - h, 0)
        pw = max((ow - 1) * stride + kw - w, 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    oh = (x.shape[1] - kh) // stride + 1
    ow = (x.shape[2] - kw) // stride + 1
    out = np.zeros((n, oh, ow, co))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride : i * stride + kh, j * stride : j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, k, axes=([1, 2, 3], [0, 1, 2]))
    return out


def test_dense_layout_and_default_initializers():
    tf.random.set_seed(0)
    layer = keras.layers.Dense(50, activation="relu")
    x = np.random.default_rng(0).standard_normal((4, 30)).astype(np.float32)
    out = layer(x)
    assert layer.kernel.shape == (30, 50) and layer.bias.shape == (50,)  # (in, out)
    k = layer.kernel.numpy()
    limit = np.sqrt(6 / (30 + 50))  # glorot uniform
    assert np.abs(k).max() <= limit and np.abs(k).max() > 0.9 * limit
    assert not layer.bias.numpy().any()  # zero biases
    np.testing.assert_allclose(out.numpy(), np.maximum(x @ k, 0), rtol=1e-5, atol=1e-6)
    assert [w.name for w in layer.weights] == ["dense/kernel:0", "dense/bias:0"]
    assert layer.count_params() == 30 * 50 + 50
    with pytest.raises(ShapeError, match="Dense 'dense': expected inputs with 30 features"):
        layer(np.ones((2, 7), np.float32))
    assert layer(np.ones((2, 3, 30))).shape == (2, 3, 50)  # any rank: the last axis


@pytest.mark.parametrize(
    "hw, k, stride, padding",
    [
        (7, 3, 1, "same"),
        (8, 3, 2, "same"),
        (7, 2, 2, "same"),
        (9, 3, 2, "valid"),
        (6, 4, 1, "same"),
    ],
)
def test_conv2d_matches_tensorflow_padding(hw, k, stride, padding):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, hw, hw + 1, 3)).astype(np.float32)
    conv = keras.layers.Conv2D(4, k, strides=stride, padding=padding, use_bias=True)
    out = conv(x)
    kernel = conv.kernel.numpy()
    assert kernel.shape == (k, k, 3, 4)
    limit = np.sqrt(6 / (k * k * 3 + k * k * 4))
    assert np.abs(kernel).max() <= limit
    ref = conv_nhwc_ref(x.astype(np.float64), kernel.astype(np.float64), stride, padding)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-5)
    # channels_first gives the same numbers on transposed data
    cf = keras.layers.Conv2D(4, k, strides=stride, padding=padding, data_format="channels_first")
    cf(x.transpose(0, 3, 1, 2))
    cf.set_weights(conv.get_weights())
    np.testing.assert_allclose(
        cf(x.transpose(0, 3, 1, 2)).numpy(), ref.transpose(0, 3, 1, 2), rtol=1e-4, atol=1e-5
    )


def test_pooling_flatten_dropout():
    x = np.arange(2 * 5 * 5 * 2, dtype=np.float32).reshape(2, 5, 5, 2)
    valid = keras.layers.MaxPooling2D()(x).numpy()
    np.testing.assert_array_equal(valid, x[:, :4, :4].reshape(2, 2, 2, 2, 2, 2).max(axis=(2, 4)))
    same = keras.layers.MaxPooling2D(padding="same")(x).numpy()
    assert same.shape == (2, 3, 3, 2)
    np.testing.assert_array_equal(same[:, 2, 2], x[:, 4, 4])
    avg = keras.layers.AveragePooling2D(pool_size=5)(x).numpy()
    np.testing.assert_allclose(avg[:, 0, 0], x.mean(axis=(1, 2)), rtol=1e-6)
    flat = keras.layers.Flatten()(x).numpy()
    np.testing.assert_array_equal(flat, x.reshape(2, -1))  # row-major over NHWC
    drop = keras.layers.Dropout(0.25)
    assert drop(x) is not None and np.array_equal(drop(x).numpy(), x)
    y = drop(np.ones((1000,), np.float32), training=True).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)} and 0.15 < (y == 0).mean() < 0.35


def test_losses_match_numpy():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((6, 4)).astype(np.float32)
    probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    labels = rng.integers(0, 4, 6)
    ref = -np.log(probs[np.arange(6), labels]).mean()
    sce = keras.losses.SparseCategoricalCrossentropy()
    assert not sce.from_logits  # Keras' default
    np.testing.assert_allclose(sce(labels, probs).item(), ref, rtol=1e-5)
    np.testing.assert_allclose(
        keras.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, logits).item(),
        ref,
        rtol=1e-5,
    )
    np.testing.assert_allclose(sce(labels[:, None], probs).item(), ref, rtol=1e-5)  # (N, 1)
    onehot = np.eye(4, dtype=np.float32)[labels]
    np.testing.assert_allclose(
        keras.losses.CategoricalCrossentropy()(onehot, probs).item(), ref, rtol=1e-5
    )
    y, p = rng.random((6, 1)).astype(np.float32), rng.random((6, 1)).astype(np.float32)
    mse = keras.losses.MeanSquaredError()
    np.testing.assert_allclose(mse(y, p).item(), ((y - p) ** 2).mean(), rtol=1e-6)
    # labels one axis short are expanded, not broadcast to (N, N)
    np.testing.assert_allclose(mse(y[:, 0], p).item(), ((y - p) ** 2).mean(), rtol=1e-6)
    assert keras.losses.MeanSquaredError(reduction="none")(y, p).shape == (6,)
    bce = -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean()
    np.testing.assert_allclose(keras.losses.BinaryCrossentropy()(y, p).item(), bce, rtol=1e-5)
    with pytest.raises(ShapeError, match=r"labels of shape \(5,\) don't match predictions"):
        sce(labels[:5], probs)


def test_accuracy_is_picked_by_the_loss():
    sparse = keras.metrics.get("accuracy", keras.losses.SparseCategoricalCrossentropy())
    sparse.update_state([0, 1, 1], [[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    assert sparse.result().item() == pytest.approx(2 / 3)
    cat = keras.metrics.get("acc", keras.losses.CategoricalCrossentropy())
    cat.update_state([[1, 0], [0, 1]], [[0.9, 0.1], [0.8, 0.2]])
    assert cat.result().item() == 0.5 and cat.name == "acc"
    binary = keras.metrics.get("accuracy", keras.losses.BinaryCrossentropy())
    binary.update_state([[1.0], [0.0]], [[0.7], [0.6]])
    assert binary.result().item() == 0.5
    with pytest.raises(EmberError, match="unknown metric 'f1'"):
        keras.metrics.get("f1")


def run_optimizer(opt, w0, grad_fn, steps):
    w = tf.Variable(w0)
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = grad_fn(w)
        opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
    return w.numpy()


def test_keras_adam_rule_and_epsilon():
    # tiny gradients, where Keras' epsilon (1e-7, added to sqrt(v)) decides the step
    w0 = np.array([1.0, -1.0, 0.5], np.float32)
    scale = np.array([1e-7, 1e-6, 1.0])
    got = run_optimizer(
        keras.optimizers.Adam(learning_rate=0.01),
        w0,
        lambda w: tf.reduce_sum(w * tf.constant(scale, tf.float32)),
        3,
    )
    m = v = np.zeros(3)
    ref = w0.astype(np.float64)
    for t in range(1, 4):
        g = scale
        m = m + (g - m) * 0.1
        v = v + (g * g - v) * 0.001
        ref = ref - 0.01 * np.sqrt(1 - 0.999**t) / (1 - 0.9**t) * m / (np.sqrt(v) + 1e-7)
    np.testing.assert_allclose(got, ref, rtol=1e-5)
    assert keras.optimizers.Adam().epsilon == 1e-7


@pytest.mark.parametrize("nesterov", [False, True])
def test_keras_sgd_momentum_rule(nesterov):
    w0 = np.array([1.0, -2.0], np.float32)
    got = run_optimizer(
        keras.optimizers.SGD(0.1, momentum=0.9, nesterov=nesterov),
        w0,
        lambda w: tf.reduce_sum(w * w),
        3,
    )
    w, m = w0.astype(np.float64), np.zeros(2)
    for _ in range(3):
        g = 2 * w
        m = 0.9 * m - 0.1 * g
        w = w + (0.9 * m - 0.1 * g if nesterov else m)
    np.testing.assert_allclose(got, w, rtol=1e-5)


def test_keras_rmsprop_rule():
    w0 = np.array([1.0, -2.0], np.float32)
    got = run_optimizer(keras.optimizers.RMSprop(0.01), w0, lambda w: tf.reduce_sum(w * w), 3)
    w, u = w0.astype(np.float64), np.zeros(2)
    for _ in range(3):
        g = 2 * w
        u = 0.9 * u + 0.1 * g * g
        w = w - 0.01 * g / np.sqrt(u + 1e-7)
    np.testing.assert_allclose(got, w, rtol=1e-5)


def make_data(n=40, d=12, c=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.integers(0, c, n)


# -- closed forms in NumPy (float64): what TensorFlow computes, from the layers' weights ----------


def np_softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_sparse_ce(z, y):
    """Mean sparse categorical crossentropy of logits ``z`` and its gradient w.r.t. ``z``."""
    p = np_softmax(z)
    n = len(y)
    loss = -np.log(p[np.arange(n), y]).mean()
    dz = p.copy()
    dz[np.arange(n), y] -= 1
    return loss, dz / n


def np_mlp(weights, x):
    """Dense(relu) -> Dense: the hidden pre-activation, hidden layer and logits."""
    k1, b1, k2, b2 = weights
    pre = x @ k1 + b1
    h = np.maximum(pre, 0)
    return pre, h, h @ k2 + b2


def np_mlp_step(weights, x, y):
    """(loss, logits, gradients of the kernels and biases) of the MLP under sparse CE."""
    k1, b1, k2, b2 = weights
    pre, h, z = np_mlp(weights, x)
    loss, dz = np_sparse_ce(z, y)
    dpre = (dz @ k2.T) * (pre > 0)
    return loss, z, [x.T @ dpre, dpre.sum(0), h.T @ dz, dz.sum(0)]


class NpAdam:
    """Keras' Adam, as tf.keras.optimizers.Adam documents it: lr_t = lr * sqrt(1 - b2^t) /
    (1 - b1^t), m += (g - m)(1 - b1), v += (g^2 - v)(1 - b2), w -= lr_t * m / (sqrt(v) + eps),
    eps = 1e-7."""

    def __init__(self, lr, b1=0.9, b2=0.999, eps=1e-7):
        self.lr, self.b1, self.b2, self.eps, self.t = lr, b1, b2, eps, 0
        self.m = self.v = None

    def step(self, weights, grads):
        if self.m is None:
            self.m = [np.zeros_like(w) for w in weights]
            self.v = [np.zeros_like(w) for w in weights]
        self.t += 1
        lr_t = self.lr * np.sqrt(1 - self.b2**self.t) / (1 - self.b1**self.t)
        out = []
        for w, g, m, v in zip(weights, grads, self.m, self.v):
            m += (g - m) * (1 - self.b1)
            v += (g * g - v) * (1 - self.b2)
            out.append(w - lr_t * m / (np.sqrt(v) + self.eps))
        return out


def f64(weights):
    return [np.asarray(w, np.float64) for w in weights]


@pytest.mark.parametrize("shuffle", [False, True])
def test_fit_matches_closed_form_sgd(shuffle):
    """fit() with SGD against the closed form: logits = relu(x @ K1 + b1) @ K2 + b2, softmax
    cross-entropy, w -= lr * grad per batch, the epoch's loss the batch losses weighted by batch
    size (as Keras' loss tracker), accuracy counted on each batch before its update. Shuffled,
    one batch per epoch: the order does not change the numbers."""
    xs, ys = make_data()
    model = keras.Sequential(
        [
            keras.layers.Dense(16, activation="relu", input_shape=(12,)),
            keras.layers.Dense(3),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.SGD(learning_rate=0.1),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    weights = f64(model.get_weights())
    batch = 40 if shuffle else 16
    tf.random.set_seed(7)
    history = model.fit(
        xs,
        ys,
        epochs=3,
        batch_size=batch,
        shuffle=shuffle,
        verbose=0,
        validation_data=(xs[:10], ys[:10]),
    )
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert history.epoch == [0, 1, 2]
    x = xs.astype(np.float32).astype(np.float64)
    ref_loss, ref_acc, ref_val = [], [], []
    for _ in range(3):
        total = correct = 0.0
        for start in range(0, 40, batch):
            xb, yb = x[start : start + batch], ys[start : start + batch]
            loss, z, grads = np_mlp_step(weights, xb, yb)
            weights = [w - 0.1 * g for w, g in zip(weights, grads)]
            total += loss * len(yb)
            correct += (z.argmax(1) == yb).sum()
        ref_loss.append(total / 40)
        ref_acc.append(correct / 40)
        ref_val.append(np_sparse_ce(np_mlp(weights, x[:10])[2], ys[:10])[0])
    np.testing.assert_allclose(history.history["loss"], ref_loss, rtol=1e-5)
    np.testing.assert_allclose(history.history["accuracy"], ref_acc, rtol=1e-6)
    np.testing.assert_allclose(history.history["val_loss"], ref_val, rtol=1e-5)
    for got, want in zip(model.get_weights(), weights):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    loss, acc = model.evaluate(xs[:10], ys[:10], verbose=0)
    np.testing.assert_allclose(loss, ref_val[-1], rtol=1e-5)
    np.testing.assert_allclose(
        model.predict(xs, batch_size=7, verbose=0), np_mlp(weights, x)[2], rtol=1e-4, atol=1e-5
    )


def test_custom_loop_with_apply_gradients_matches_closed_form_adam():
    """The Keras custom training loop (GradientTape, apply_gradients) against the closed form:
    the MLP's softmax cross-entropy and its gradients in NumPy, Keras' documented Adam rule."""
    xs, ys = make_data(seed=1)
    model = keras.Sequential([keras.layers.Dense(16, activation="relu"), keras.layers.Dense(3)])
    model(xs[:1])  # built on the first call
    weights = f64(model.get_weights())
    optimizer = keras.optimizers.Adam(learning_rate=0.01)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    x, y = tf.constant(xs, dtype=tf.float32), tf.constant(ys)
    losses = []
    for _ in range(5):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss_value = loss_fn(y, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        losses.append(float(loss_value))
    xf, adam, ref = xs.astype(np.float32).astype(np.float64), NpAdam(0.01), []
    for _ in range(5):
        loss, _, grads = np_mlp_step(weights, xf, ys)
        weights = adam.step(weights, grads)
        ref.append(loss)
    np.testing.assert_allclose(losses, ref, rtol=1e-5)
    for got, want in zip(model.get_weights(), weights):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_keras_step_eager_and_compiled_match_closed_form():
    """One Keras training step (Dense(relu) -> Dense(softmax), sparse cross-entropy of the
    probabilities, Adam), run eagerly and under tf.function: both give the closed form's losses
    and weights."""
    xs, ys = make_data(seed=2)
    models = []
    for _ in range(2):
        tf.random.set_seed(0)
        m = keras.Sequential(
            [
                keras.layers.Dense(8, activation="relu", input_shape=(12,)),
                keras.layers.Dense(3, activation="softmax"),
            ]
        )
        models.append((m, keras.optimizers.Adam(0.01)))
    loss_fn = keras.losses.SparseCategoricalCrossentropy()

    def step(model, opt, x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    (m0, o0), (m1, o1) = models
    weights = f64(m0.get_weights())
    np.testing.assert_array_equal(m1.get_weights()[0], m0.get_weights()[0])  # same seed
    o1.build(m1.trainable_variables)
    fast = tf.function(lambda x, y: step(m1, o1, x, y))
    x, y = tf.constant(xs, dtype=tf.float32), tf.constant(ys)
    eager = [float(step(m0, o0, x, y)) for _ in range(4)]
    compiled = [float(fast(x, y)) for _ in range(4)]
    xf, adam, ref = xs.astype(np.float32).astype(np.float64), NpAdam(0.01), []
    for _ in range(4):
        loss, _, grads = np_mlp_step(weights, xf, ys)  # softmax then -log p: the same gradient
        weights = adam.step(weights, grads)
        ref.append(loss)
    np.testing.assert_allclose(eager, ref, rtol=1e-5)
    np.testing.assert_allclose(compiled, ref, rtol=1e-5)
    for model in (m0, m1):
        for got, want in zip(model.get_weights(), weights):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_cnn_fit_and_summary(capsys):
    rng = np.random.default_rng(0)
    model = keras.Sequential(
        [
            keras.Input(shape=(8, 8, 1)),
            keras.layers.Conv2D(4, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Flatten(),
            keras.layers.Dropout(0.2),
            keras.layers.Dense(2, activation="softmax"),
        ]
    )
    model.summary()
    text = capsys.readouterr().out
    assert 'Model: "sequential"' in text
    assert "conv2d (Conv2D)" in text and "(None, 8, 8, 4)" in text and "40" in text
    assert "(None, 64)" in text and "Total params: 170" in text
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(
        rng.standard_normal((20, 8, 8, 1)),
        rng.integers(0, 2, 20),
        epochs=2,
        batch_size=8,
        validation_split=0.25,
        verbose=1,
    )
    out = capsys.readouterr().out
    assert "Epoch 2/2" in out and "val_loss" in out
    assert len(history.history["val_accuracy"]) == 2
    assert model.predict(np.zeros((3, 8, 8, 1)), verbose=0).shape == (3, 2)


def test_subclassed_model_and_callbacks():
    class MLP(keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = keras.layers.Dense(8, activation="tanh")
            self.out = keras.layers.Dense(1)

        def call(self, x, training=False):
            return self.out(self.hidden(x))

    xs = np.random.default_rng(0).standard_normal((32, 4))
    ys = xs.sum(axis=1, keepdims=True)
    model = MLP()
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
    seen = []
    cb = keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(epoch))
    stop = keras.callbacks.EarlyStopping(monitor="loss", patience=0, min_delta=100.0)
    history = model.fit(xs, ys, epochs=5, batch_size=8, verbose=0, callbacks=[cb, stop])
    assert seen == [0, 1] and len(history.history["loss"]) == 2  # stopped after no gain
    assert set(history.history) == {"loss", "mae"}
    assert len(model.trainable_variables) == 4 and model.layers == [model.hidden, model.out]
    model.hidden.trainable = False
    assert len(model.trainable_variables) == 2 and len(model.weights) == 4
    assert isinstance(model.train_on_batch(xs, ys), list)
    assert isinstance(model.evaluate(xs, ys, verbose=0, return_dict=True), dict)


def test_keras_errors():
    model = keras.Sequential([keras.layers.Dense(2)])
    with pytest.raises(EmberError, match="has not yet been built"):
        model.summary()
    with pytest.raises(EmberError, match="must be compiled with an optimizer and a loss"):
        model.fit(np.zeros((2, 3)), np.zeros((2, 2)))
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ShapeError, match="x has 4 examples but y has 3"):
        model.fit(np.zeros((4, 3)), np.zeros((3, 2)), verbose=0)
    with pytest.raises(EmberError, match="unknown optimizer 'adamw'"):
        model.compile(optimizer="adamw", loss="mse")
    with pytest.raises(EmberError, match="unknown loss 'hinge2'"):
        model.compile(optimizer="sgd", loss="hinge2")
    with pytest.raises(EmberError, match="unknown activation 'swish2'"):
        keras.layers.Dense(2, activation="swish2")
    with pytest.raises(EmberError, match="padding must be 'valid' or 'same'"):
        keras.layers.Conv2D(2, 3, padding="full")
    with pytest.raises(EmberError, match="functional API is not supported"):
        keras.Model(inputs=None, outputs=None)
    with pytest.raises(EmberError, match="no gradients given for any variable"):
        keras.optimizers.SGD().apply_gradients([(None, tf.Variable(1.0))])


def np_patches(x, k):
    """(N, OH, OW, k*k*C) windows of an NHWC batch for a k x k 'valid' convolution, stride 1,
    ordered as a (k, k, C, out) Keras kernel reshaped to (k*k*C, out)."""
    n, h, w, c = x.shape
    oh, ow = h - k + 1, w - k + 1
    cols = [x[:, i : i + oh, j : j + ow, :] for i in range(k) for j in range(k)]
    return np.stack(cols, axis=3).reshape(n, oh, ow, k * k * c)


def test_model_built_inside_tf_function_matches_closed_form():
    """The TF2 "quickstart for experts" loop: the model's weights and Adam's slots are made on
    the first (traced) call, and the metrics accumulate inside the graph. Eager and tf.function
    runs both give the closed form: Conv2D(3x3, valid, relu) -> Flatten (NHWC, row-major) ->
    Dense, softmax cross-entropy of the logits, Keras' Adam, the epoch's Mean of batch losses
    and the accuracy over its samples."""
    rng = np.random.default_rng(0)
    images = rng.random((32, 6, 6, 1)).astype(np.float32)
    labels = rng.integers(0, 4, 32)

    class MyModel(keras.Model):
        def __init__(self):
            super().__init__()
            self.conv1 = keras.layers.Conv2D(3, 3, activation="relu")
            self.flatten = keras.layers.Flatten()
            self.d1 = keras.layers.Dense(4)

        def call(self, x):
            return self.d1(self.flatten(self.conv1(x)))

    def run(compiled):
        tf.random.set_seed(0)
        model = MyModel()
        loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        optimizer = keras.optimizers.Adam(0.01)
        train_loss = keras.metrics.Mean(name="train_loss")
        train_accuracy = keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")

        def train_step(images, labels):
            with tf.GradientTape() as tape:
                predictions = model(images, training=True)
                loss = loss_object(labels, predictions)
            gradients = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(gradients, model.trainable_variables))
            train_loss(loss)
            train_accuracy(labels, predictions)

        step = tf.function(train_step) if compiled else train_step
        epochs = []
        for _ in range(2):
            train_loss.reset_state()
            train_accuracy.reset_state()
            for i in range(0, 32, 8):
                step(images[i : i + 8], labels[i : i + 8])
            epochs.append((float(train_loss.result()), float(train_accuracy.result())))
        if compiled:
            assert step.traces == 1
        return epochs, model.get_weights()

    tf.random.set_seed(0)  # the initial weights: the same seed, built eagerly
    first = MyModel()
    first(images[:1])
    weights = f64(first.get_weights())  # conv kernel (3, 3, 1, 3), bias, dense (48, 4), bias
    adam, ref = NpAdam(0.01), []
    for _ in range(2):
        losses, correct = [], 0
        for i in range(0, 32, 8):
            x, y = images[i : i + 8].astype(np.float64), labels[i : i + 8]
            k, b, w, c = weights
            cols = np_patches(x, 3)
            pre = cols @ k.reshape(9, 3) + b  # (8, 4, 4, 3)
            feat = np.maximum(pre, 0).reshape(8, -1)
            loss, dz = np_sparse_ce(feat @ w + c, y)
            dpre = (dz @ w.T).reshape(pre.shape) * (pre > 0)
            grads = [
                (cols.reshape(-1, 9).T @ dpre.reshape(-1, 3)).reshape(k.shape),
                dpre.sum((0, 1, 2)),
                feat.T @ dz,
                dz.sum(0),
            ]
            correct += ((feat @ w + c).argmax(1) == y).sum()
            weights = adam.step(weights, grads)
            losses.append(loss)
        ref.append((np.mean(losses), correct / 32))
    for compiled in (False, True):
        epochs, final = run(compiled)
        np.testing.assert_allclose(epochs, ref, rtol=1e-5)
        for got, want in zip(final, weights):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_documented_examples():
    """The numbers the tf.keras API docs show in their "Standalone usage" examples."""
    y_true, y_pred = [1, 2], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]]
    scce = keras.losses.SparseCategoricalCrossentropy
    assert scce()(y_true, y_pred).item() == pytest.approx(1.177, abs=1e-3)
    assert scce()(y_true, y_pred, sample_weight=[0.3, 0.7]).item() == pytest.approx(0.814, abs=1e-3)
    assert scce(reduction="sum")(y_true, y_pred).item() == pytest.approx(2.354, abs=1e-3)
    np.testing.assert_allclose(
        scce(reduction="none")(y_true, y_pred).numpy(), [0.0513, 2.303], atol=1e-3
    )
    onehot = [[0, 1, 0], [0, 0, 1]]
    assert keras.losses.CategoricalCrossentropy()(onehot, y_pred).item() == pytest.approx(
        1.177, abs=1e-3
    )
    mse = keras.losses.MeanSquaredError()
    assert mse([[0.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [1.0, 0.0]]).item() == pytest.approx(0.5)
    bce = keras.losses.BinaryCrossentropy()
    assert bce([[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]]).item() == pytest.approx(0.815, abs=1e-3)
    acc = keras.metrics.Accuracy()
    acc.update_state([[1], [2], [3], [4]], [[0], [2], [3], [4]])
    assert acc.result().item() == pytest.approx(0.75)
    sacc = keras.metrics.SparseCategoricalAccuracy()
    sacc.update_state([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]])
    assert sacc.result().item() == pytest.approx(0.5)
    mean = keras.metrics.Mean()
    mean.update_state([1, 3, 5, 7])
    assert mean.result().item() == pytest.approx(4.0)
    assert keras.layers.Dense(32)(np.zeros((2, 16), np.float32)).shape == (2, 32)


@pytest.mark.parametrize(
    "make, start, want",
    [
        # SGD: var 1.0, loss var**2 / 2: one step of lr 0.1 -> 0.9; with momentum 0.9 the
        # second step moves 0.18 (0.9 -> 0.72)
        (lambda: keras.optimizers.SGD(learning_rate=0.1), 1.0, [0.9]),
        (lambda: keras.optimizers.SGD(learning_rate=0.1, momentum=0.9), 1.0, [0.9, 0.72]),
        # Adam: var 10.0, one step of lr 0.1 -> 9.9; RMSprop -> 9.683772
        (lambda: keras.optimizers.Adam(learning_rate=0.1), 10.0, [9.9]),
        (lambda: keras.optimizers.RMSprop(learning_rate=0.1), 10.0, [9.683772]),
    ],
)
def test_documented_optimizer_examples(make, start, want):
    opt, var = make(), tf.Variable(start)
    got = []
    for _ in want:
        opt.minimize(lambda: (var**2) / 2.0, [var])
        got.append(float(var.numpy()))
    np.testing.assert_allclose(got, want, rtol=1e-6)
