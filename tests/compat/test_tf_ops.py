"""TensorFlow's dtype inference, reductions, random ops and argument spellings."""

import numpy as np
import pytest

import ember
import ember.compat.tf as tf
from ember import DTypeError, EmberError, ShapeError


@pytest.mark.parametrize(
    "value, dtype",
    [
        (1.5, tf.float32),
        (2, tf.int32),
        (True, tf.bool),
        ([1, 2], tf.int32),
        ([1.0, 2], tf.float32),
        (2**40, tf.int64),
        (np.zeros(2), tf.float64),
        (np.zeros(2, np.int64), tf.int64),
        (np.float32(1), tf.float32),
    ],
)
def test_constant_dtype_inference(value, dtype):
    assert tf.constant(value).dtype == dtype
    assert tf.convert_to_tensor(value).dtype == dtype


def test_convert_to_tensor_rules():
    t = tf.constant([1.0, 2.0])
    assert tf.convert_to_tensor(t) is t
    with pytest.raises(DTypeError, match="requested dtype int32 for a tensor of dtype float32"):
        tf.convert_to_tensor(t, tf.int32)
    with pytest.raises(DTypeError, match="floating-point data to int32"):
        tf.convert_to_tensor([1.5], tf.int32)
    assert tf.convert_to_tensor([1, 2], dtype=tf.float64).dtype == tf.float64
    stacked = tf.convert_to_tensor([tf.constant(1.0), tf.constant(2.0)])
    assert stacked.tolist() == [1.0, 2.0]
    assert tf.as_dtype(float) == tf.float32 and tf.as_dtype(int) == tf.int32


def test_constant_shape():
    assert tf.constant(0, shape=(2, 3)).tolist() == [[0] * 3] * 2
    assert tf.constant([1, 2, 3, 4], shape=(2, 2)).shape == (2, 2)
    with pytest.raises(ShapeError, match="3 values can't fill shape"):
        tf.constant([1, 2, 3], shape=(2, 2))


def test_creation():
    assert tf.zeros((2, 3)).dtype == tf.float32
    assert tf.ones([2], dtype=tf.int64).dtype == tf.int64
    assert tf.zeros(3).shape == (3,)
    assert tf.range(5).dtype == tf.int32 and tf.range(1.0, 2.0, 0.5).dtype == tf.float32
    assert tf.one_hot([1, 3], 3).tolist() == [[0, 1, 0], [0, 0, 0]]
    assert tf.fill([2], 1.5).dtype == tf.float32


X = np.array([[1, -2, 3], [4, 5, -7]], np.int32)


@pytest.mark.parametrize("axis", [None, 0, 1, -1, [0, 1], (1,)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(axis, keepdims):
    ax = tuple(axis) if isinstance(axis, list) else axis
    xi = tf.constant(X)
    xf = tf.constant(X.astype(np.float32))
    s = tf.reduce_sum(xi, axis=axis, keepdims=keepdims)
    assert s.dtype == tf.int32  # TensorFlow keeps the dtype; PyTorch would give int64
    np.testing.assert_array_equal(s.numpy(), X.sum(axis=ax, keepdims=keepdims))
    m = tf.reduce_mean(xi, axis=axis, keepdims=keepdims)
    assert m.dtype == tf.int32
    # integer mean truncates toward zero, as TensorFlow's
    total = X.sum(axis=ax, keepdims=keepdims)
    n = X.size // np.asarray(total).size
    np.testing.assert_array_equal(m.numpy(), np.trunc(total / n).astype(np.int32))
    np.testing.assert_allclose(
        tf.reduce_mean(xf, axis=axis, keepdims=keepdims).numpy(),
        X.astype(np.float32).mean(axis=ax, keepdims=keepdims),
        rtol=1e-6,
    )
    np.testing.assert_array_equal(
        tf.reduce_max(xi, axis=axis, keepdims=keepdims).numpy(), X.max(axis=ax, keepdims=keepdims)
    )
    np.testing.assert_array_equal(
        tf.reduce_min(xf, axis=axis, keepdims=keepdims).numpy(), X.min(axis=ax, keepdims=keepdims)
    )
    np.testing.assert_array_equal(
        tf.reduce_prod(xi, axis=axis, keepdims=keepdims).numpy(),
        X.prod(axis=ax, keepdims=keepdims),
    )


def test_reduction_errors_and_edge_cases():
    x = tf.constant([[1.0, 2.0]])
    with pytest.raises(
        ShapeError, match="reduce_sum: axis 2 is out of range for a tensor of rank 2"
    ):
        tf.reduce_sum(x, axis=2)
    with pytest.raises(DTypeError, match="reduce_mean: bool tensors are not supported"):
        tf.reduce_mean(tf.constant([True]))
    assert tf.reduce_sum(x, axis=[]) is x
    assert tf.reduce_any(tf.constant([False, True])).item() is True
    assert tf.reduce_all(tf.constant([False, True])).item() is False
    assert tf.reduce_mean(tf.constant([-3, -4])).item() == -3  # trunc(-3.5)


def test_binary_ops_take_the_tensor_dtype():
    x = tf.constant([-1, 2])
    assert tf.maximum(x, 0).dtype == tf.int32
    assert tf.maximum(tf.constant([-1.0, 2.0]), 0).tolist() == [0.0, 2.0]
    assert tf.minimum(0.5, tf.constant([1.0], dtype=tf.float64)).dtype == tf.float64
    with pytest.raises(DTypeError, match="floating-point data to int32"):
        tf.maximum(x, 0.5)
    assert tf.divide(tf.constant([1, 2]), 2).dtype == tf.float64
    assert tf.divide(tf.constant([1.0]), 2).dtype == tf.float32
    assert tf.multiply(2, tf.constant([1.5])).tolist() == [3.0]
    assert tf.equal(tf.constant([1, 2]), 2).tolist() == [False, True]


def test_matmul_transposes():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_allclose(tf.matmul(a, b, transpose_b=True).numpy(), a @ b.T)
    np.testing.assert_allclose(tf.matmul(a, b.T.copy()).numpy(), a @ b.T)
    np.testing.assert_allclose(
        tf.matmul(b.T.copy(), a, transpose_a=True, transpose_b=True).numpy(), b @ a.T
    )


def test_shape_ops():
    x = tf.reshape(tf.range(24), [2, 3, 4])
    assert tf.transpose(x).shape == (4, 3, 2)
    assert tf.transpose(x, perm=[0, 2, 1]).shape == (2, 4, 3)
    assert tf.shape(x).tolist() == [2, 3, 4] and tf.shape(x).dtype == tf.int32
    assert tf.concat([x, x], axis=1).shape == (2, 6, 4)
    assert tf.stack([x, x]).shape == (2, 2, 3, 4)
    assert tf.squeeze(tf.zeros((1, 2, 1))).shape == (2,)
    with pytest.raises(ShapeError, match="can't squeeze dimension 1 of size 2"):
        tf.squeeze(tf.zeros((1, 2)), axis=1)
    assert tf.expand_dims(x, 0).shape == (1, 2, 3, 4)
    assert tf.argmax(tf.constant([[1, 9], [5, 2]])).tolist() == [1, 0]  # axis=0 by default
    assert tf.argmax([[1, 9], [5, 2]], axis=1, output_type=tf.int32).dtype == tf.int32
    assert tf.cast(tf.constant([1.9, -1.9]), tf.int32).tolist() == [1, -1]


def test_random_ops_are_seeded_and_typed():
    tf.random.set_seed(3)
    a = tf.random.normal((50, 40), mean=1.0, stddev=2.0)
    tf.random.set_seed(3)
    b = tf.random_normal((50, 40), mean=1.0, stddev=2.0)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a.dtype == tf.float32 and abs(a.numpy().mean() - 1.0) < 0.2
    assert abs(a.numpy().std() - 2.0) < 0.2
    u = tf.random.uniform((1000,), minval=-2.0, maxval=3.0)
    assert u.numpy().min() >= -2.0 and u.numpy().max() < 3.0
    assert tf.random.uniform((3,), dtype=tf.float64).dtype == tf.float64
    i = tf.random.uniform((100,), 0, 4, dtype=tf.int32)
    assert i.dtype == tf.int32 and set(i.tolist()) <= {0, 1, 2, 3}
    with pytest.raises(EmberError, match="maxval is needed for an integer dtype"):
        tf.random.uniform((2,), dtype=tf.int32)
    tn = tf.random.truncated_normal((1000,), stddev=0.5)
    assert np.abs(tn.numpy()).max() <= 1.0


def test_nn_ops():
    logits = np.array([[2.0, 0.5, -1.0], [0.1, 0.2, 0.3]], np.float32)
    labels = np.array([0, 2])
    ref = -np.log(np.exp(logits) / np.exp(logits).sum(1, keepdims=True))[[0, 1], labels]
    out = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6)
    onehot = tf.one_hot(labels, 3)
    out2 = tf.nn.softmax_cross_entropy_with_logits(labels=onehot, logits=logits)
    np.testing.assert_allclose(out2.numpy(), ref, rtol=1e-6)
    assert tf.nn.relu([-1.0, 1.0]).tolist() == [0.0, 1.0]
    np.testing.assert_allclose(tf.nn.softmax(logits).numpy().sum(1), [1, 1], rtol=1e-6)


def test_function_is_ember_compile():
    calls = []

    @tf.function
    def f(x):
        calls.append(1)
        return tf.reduce_sum(x * 2.0)

    assert f(tf.ones(3)).item() == 6.0 and f(tf.ones(3)).item() == 6.0
    assert len(calls) == 1 and isinstance(f, ember.static.CompiledFunction)

    @tf.function(input_signature=None, jit_compile=True)
    def g(x):
        return x + 1

    assert g(tf.zeros(2)).tolist() == [1.0, 1.0]
    assert tf.executing_eagerly()
