"""TF1 graphs: ``placeholder``, ``Session``, ``gradients``, ``group``, ``tf.train`` optimizers,
``tf.layers.dense``, over ``ember.static``.

``tf.Graph`` and ``tf.Session`` are ``ember.static.Graph`` and ``ember.static.Session``;
``tf.placeholder(dtype, shape)`` takes TensorFlow's argument order. Once a placeholder exists
(or inside ``with tf.Graph().as_default():``, or after
``tf.compat.v1.disable_eager_execution()``), ``tf.Variable`` makes graph Variables and ops on
placeholders and Variables build graph nodes; ``tf.compat.v1.reset_default_graph()`` goes back.

>>> import numpy as np, ember.compat.tf as tf
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, shape=(None, 2))
...     w = tf.Variable(tf.ones((2, 1)))
...     loss = tf.reduce_sum(tf.matmul(x, w))
...     step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         _ = sess.run(step, {x: np.ones((3, 2))})
...         sess.run(w)
array([[-0.5],
       [-0.5]], dtype=float32)
"""

from __future__ import annotations

from ember import static
from ember._errors import EmberError
from ember._tensor import Tensor
from ember.static.symbol import Symbol

from . import ops as _ops

Graph = static.Graph
Session = static.Session
Operation = static.Operation
get_default_graph = static.get_default_graph
group = static.group
global_variables_initializer = static.global_variables_initializer
initialize_all_variables = static.global_variables_initializer
variables_initializer = static.variables_initializer


def placeholder(dtype, shape=None, name: str | None = None) -> Tensor:
    """A graph input of ``dtype`` and ``shape`` (``None`` for sizes known only when fed).

    >>> import ember.compat.tf as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, shape=[None, 784], name="x")
    >>> x.dtype, x.shape[1]
    (ember.float32, 784)
    """
    if shape is None:
        raise EmberError(
            "placeholder: shape=None (a tensor of unknown rank) is not supported; give the "
            "shape, with None for sizes known only at run time, e.g. "
            "tf.placeholder(tf.float32, shape=(None, 784))"
        )
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(None if s is None else int(s) for s in shape)
    return static.placeholder(shape, _ops.as_dtype(dtype), name)


def reset_default_graph() -> None:
    """Forget the default graph; ops on ordinary tensors are eager again.

    >>> import ember.compat.tf as tf
    >>> tf.compat.v1.reset_default_graph(); tf.executing_eagerly()
    True
    """
    static.reset_default_graph()


def disable_eager_execution() -> None:
    """Make ``tf.Variable`` build graph Variables from now on, even before any placeholder.

    >>> import ember.compat.tf as tf
    >>> tf.compat.v1.disable_eager_execution(); tf.executing_eagerly()
    False
    >>> tf.compat.v1.enable_eager_execution(); tf.executing_eagerly()
    True
    """
    _ops._graph_mode[0] = True


disable_v2_behavior = disable_eager_execution


def enable_eager_execution(*args, **kwargs) -> None:
    """Undo ``disable_eager_execution`` and forget the default graph."""
    _ops._graph_mode[0] = False
    static.reset_default_graph()


enable_v2_behavior = enable_eager_execution


def _is_symbolic(x) -> bool:
    return isinstance(x, Tensor) and type(x._data) is Symbol


def gradients(ys, xs, grad_ys=None, name: str | None = None, **kwargs) -> list:
    """Symbolic gradients of ``sum(ys)`` with respect to each of ``xs`` (None where unused).

    >>> import ember.compat.tf as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, shape=())
    ...     (gx,) = tf.gradients(x * x, [x])
    ...     tf.Session().run(gx, {x: 3.0})
    np.float32(6.0)
    """
    flat = [ys] if isinstance(ys, Tensor) else list(ys)
    flat += [xs] if isinstance(xs, Tensor) else list(xs)
    if not any(_is_symbolic(t) for t in flat):
        raise EmberError(
            "gradients: tf.gradients works on graphs (placeholders, graph Variables); in eager "
            "code use tf.GradientTape"
        )
    return static.gradients(ys, xs, grad_ys)


def _graph_variables(trainable_only: bool) -> list:
    g = static.get_default_graph()
    out = []
    for v in g.state:
        ref = v.ref
        if isinstance(ref, static.Variable) and (ref.trainable or not trainable_only):
            out.append(ref)
    return out


def global_variables() -> list:
    """The Variables of the default graph, in creation order."""
    return _graph_variables(False)


def trainable_variables() -> list:
    """The trainable Variables of the default graph, in creation order."""
    return _graph_variables(True)


def assign(ref, value, name: str | None = None):
    """``ref.assign(value)``."""
    return ref.assign(value)


def assign_add(ref, value, name: str | None = None):
    """``ref.assign_add(value)``."""
    return ref.assign_add(value)


def assign_sub(ref, value, name: str | None = None):
    """``ref.assign_sub(value)``."""
    return ref.assign_sub(value)


# -- tf.train (TF1 optimizers) -----------------------------------------------------------------
class _GraphOptimizer:
    """Base of the TF1 optimizers: ``minimize(loss)`` builds one update operation."""

    def __init__(self, learning_rate: float, name: str) -> None:
        self.learning_rate = float(learning_rate)
        self.name = name

    def compute_gradients(self, loss, var_list=None) -> list:
        """``[(gradient, variable), ...]`` for the trainable Variables (or ``var_list``)."""
        if not _is_symbolic(loss):
            raise EmberError(
                f"{type(self).__name__}.minimize: the loss must be a graph tensor; in eager code "
                "use tf.keras.optimizers with tf.GradientTape"
            )
        if var_list is None:
            var_list = trainable_variables()
        var_list = list(var_list)
        return list(zip(static.gradients(loss, var_list), var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """One operation applying every (gradient, variable) update (and ``global_step += 1``)."""
        updates = [self._update(g, v) for g, v in grads_and_vars if g is not None]
        if global_step is not None:
            updates.append(global_step.assign_add(1))
        return static.group(*updates, name=name or self.name)

    def minimize(self, loss, global_step=None, var_list=None, name=None):
        """``apply_gradients(compute_gradients(loss, var_list))``."""
        return self.apply_gradients(self.compute_gradients(loss, var_list), global_step, name)


class GradientDescentOptimizer(_GraphOptimizer):
    """``var -= learning_rate * grad``."""

    def __init__(self, learning_rate: float, use_locking=False, name="GradientDescent") -> None:
        super().__init__(learning_rate, name)

    def _update(self, g, v):
        return v.assign_sub(self.learning_rate * g)


class MomentumOptimizer(_GraphOptimizer):
    """``accum = momentum * accum + grad; var -= learning_rate * accum`` (TF1's rule)."""

    def __init__(
        self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False
    ) -> None:
        super().__init__(learning_rate, name)
        self.momentum = float(momentum)
        self.use_nesterov = bool(use_nesterov)

    def _update(self, g, v):
        from ember import zeros

        accum = static.Variable(zeros(tuple(v.shape), dtype=v.dtype), name=f"{v.name}/Momentum")
        new_accum = accum.assign(self.momentum * accum + g)
        if self.use_nesterov:
            return static.group(
                new_accum, v.assign_sub(self.learning_rate * (g + self.momentum * new_accum))
            )
        return static.group(new_accum, v.assign_sub(self.learning_rate * new_accum))


class AdamOptimizer(_GraphOptimizer):
    """TF1's Adam: ``lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)``,
    ``var -= lr_t * m / (sqrt(v) + epsilon)`` (epsilon 1e-8)."""

    def __init__(
        self,
        learning_rate=0.001,
        beta1=0.9,
        beta2=0.999,
        epsilon=1e-8,
        use_locking=False,
        name="Adam",
    ) -> None:
        super().__init__(learning_rate, name)
        self.beta1, self.beta2, self.epsilon = float(beta1), float(beta2), float(epsilon)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        from ember import zeros

        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        t = static.Variable(zeros((), dtype=_ops.float32), name="Adam/step", trainable=False)
        t_new = t.assign_add(1.0)
        b1, b2 = self.beta1, self.beta2
        lr_t = self.learning_rate * (1 - b2**t_new).sqrt() / (1 - b1**t_new)
        updates = [t_new]
        for g, v in pairs:
            m = static.Variable(zeros(tuple(v.shape), dtype=v.dtype), name=f"{v.name}/Adam")
            s = static.Variable(zeros(tuple(v.shape), dtype=v.dtype), name=f"{v.name}/Adam_1")
            m_new = m.assign(b1 * m + (1 - b1) * g)
            s_new = s.assign(b2 * s + (1 - b2) * g * g)
            updates += [m_new, s_new, v.assign_sub(lr_t * m_new / (s_new.sqrt() + self.epsilon))]
        if global_step is not None:
            updates.append(global_step.assign_add(1))
        return static.group(*updates, name=name or self.name)


# -- tf.layers.dense (TF1) ---------------------------------------------------------------------
def dense(
    inputs,
    units: int,
    activation=None,
    use_bias: bool = True,
    kernel_initializer=None,
    bias_initializer=None,
    name: str | None = None,
    **kwargs,
) -> Tensor:
    """A fully connected layer made of new Variables: ``activation(inputs @ kernel + bias)``
    (kernel ``(in, units)``, glorot-uniform; bias zeros unless the initializers say otherwise).

    >>> import ember.compat.tf as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, shape=(None, 3))
    ...     h = tf.layers.dense(x, 4, activation=tf.nn.relu)
    >>> h.shape[1]
    4
    """
    from .keras import activations, initializers

    inputs = _ops.convert_to_tensor(inputs)
    fan_in = inputs.shape[-1]
    if not isinstance(fan_in, int):
        raise EmberError("layers.dense: the last dimension of the inputs must be known")
    k_init = initializers.get(kernel_initializer or "glorot_uniform")
    kernel = _ops_variable(k_init((fan_in, units), _ops.float32), f"{name or 'dense'}/kernel")
    out = inputs @ kernel
    if use_bias:
        b_init = initializers.get(bias_initializer or "zeros")
        out = out + _ops_variable(b_init((units,), _ops.float32), f"{name or 'dense'}/bias")
    act = activations.get(activation)
    return out if act is None else act(out)


def _ops_variable(value, name):
    from .variables import Variable

    return Variable(value, name=name)


def mean_squared_error(labels, predictions, weights=1.0, **kwargs) -> Tensor:
    """TF1's ``tf.losses.mean_squared_error``: the mean of ``(predictions - labels) ** 2`` over
    every element (a scalar)."""
    labels, predictions = _ops._binary(labels, predictions)
    d = predictions - labels
    loss = (d * d).mean()
    return loss if weights == 1.0 else loss * weights
