"""``ember.compat.tf``: TensorFlow's face over ember, so TF1 and TF2 programs port by changing
the import: ``import ember.compat.tf as tf``.

- TF2 eager: tensors are ember Tensors; ``tf.Variable`` is a leaf tensor updated by
  ``assign``; ``tf.GradientTape`` runs ember's autograd; ``tf.function`` is ``ember.compile``.
- TF1 graphs: ``tf.placeholder``, ``tf.Variable``, ``tf.gradients``, ``tf.group``,
  ``tf.Session`` build and run ``ember.static`` graphs (also under ``tf.compat.v1``).
- ``tf.keras``: ``Sequential`` / ``Model``, common layers, SGD / Adam / RMSprop, losses,
  metrics, ``compile`` / ``fit`` / ``evaluate`` / ``predict`` / ``summary``.

Semantics are TensorFlow's where they differ from ember's PyTorch face: Python floats are
float32 and ints int32, ``reduce_sum`` keeps the dtype and ``reduce_mean`` of ints is an integer,
Dense kernels are ``(in, out)``, images are NHWC, Keras Adam's epsilon is 1e-7. See docs/tf.md.

>>> import ember.compat.tf as tf
>>> w = tf.Variable(tf.random.normal((3, 1)))
>>> x = tf.ones((4, 3))
>>> with tf.GradientTape() as tape:
...     loss = tf.reduce_mean(tf.matmul(x, w) ** 2)
>>> tape.gradient(loss, w).shape
ember.Size([3, 1])
"""

import numpy as _np

from ember._tensor import Tensor
from ember.static import CompiledFunction as _CompiledFunction

from . import keras, math, nn, random
from .graph import (
    AdamOptimizer,
    GradientDescentOptimizer,
    Graph,
    MomentumOptimizer,
    Operation,
    Session,
    assign,
    assign_add,
    assign_sub,
    dense,
    get_default_graph,
    global_variables,
    global_variables_initializer,
    gradients,
    group,
    initialize_all_variables,
    placeholder,
    reset_default_graph,
    trainable_variables,
    variables_initializer,
)
from .ops import *  # noqa: F403
from .ops import __all__ as _ops_all
from .ops import convert_to_tensor
from .tape import GradientTape
from .variables import Variable


class _Function(_CompiledFunction):
    """``ember.compile`` with TensorFlow's reading of NumPy arguments: they become tensors (so a
    new array of the same shape and dtype reuses the trace)."""

    def __call__(self, *args, **kwargs):
        args = tuple(convert_to_tensor(a) if isinstance(a, _np.ndarray) else a for a in args)
        for k, v in kwargs.items():
            if isinstance(v, _np.ndarray):
                kwargs[k] = convert_to_tensor(v)
        return super().__call__(*args, **kwargs)


def function(
    func=None,
    input_signature=None,
    autograph: bool = True,
    jit_compile=None,
    reduce_retracing: bool = False,
    **kwargs,
):
    """``tf.function``: ``ember.compile`` (traced once per input signature, then run as a
    graph; a retrace is silent, as in TensorFlow; NumPy arguments are converted to tensors).
    ``input_signature`` and the other options are accepted and ignored. Keras layers and
    optimizers make their weights and slots eagerly on the first call (``tf.init_scope``).
    Random numbers drawn while tracing (``Dropout`` with ``training=True``) are fixed into the
    graph: every call reuses them.

    >>> import ember.compat.tf as tf
    >>> v = tf.Variable(1.0)
    >>> @tf.function
    ... def step(x):
    ...     v.assign_add(x)
    ...     return v * 2
    >>> step(tf.constant(1.0)), step(tf.constant(2.0)), v.numpy()
    (tensor(4.), tensor(8.), array(4., dtype=float32))
    """
    if func is None:
        return lambda f: function(f, input_signature, autograph, jit_compile, reduce_retracing)
    return _Function(func, verbose=False)


def is_tensor(x) -> bool:
    """Whether ``x`` is a tensor (or a Variable).

    >>> import ember.compat.tf as tf
    >>> tf.is_tensor(tf.constant(1)), tf.is_tensor(1)
    (True, False)
    """
    return isinstance(x, Tensor)


class _Device:
    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False


def device(device_name: str) -> _Device:
    """``with tf.device("/cpu:0"):``: accepted for porting; ember places tensors where their
    inputs are (move data with ``.to("cuda")``)."""
    return _Device(device_name)


class train:  # noqa: N801  (tf.train: TF1 optimizers)
    """TF1 optimizers for graphs: ``GradientDescentOptimizer``, ``MomentumOptimizer``,
    ``AdamOptimizer`` (``minimize(loss)`` builds the update operation)."""

    GradientDescentOptimizer = GradientDescentOptimizer
    MomentumOptimizer = MomentumOptimizer
    AdamOptimizer = AdamOptimizer


class layers:  # noqa: N801  (tf.layers, TF1)
    """TF1's ``tf.layers.dense``."""

    dense = staticmethod(dense)


optimizers = keras.optimizers
initializers = keras.initializers

# last: compat.v1 star-imports this namespace
from . import compat, losses  # noqa: E402

__all__ = [
    *_ops_all,
    "AdamOptimizer",
    "GradientDescentOptimizer",
    "GradientTape",
    "Graph",
    "MomentumOptimizer",
    "Operation",
    "Session",
    "Tensor",
    "Variable",
    "assign",
    "assign_add",
    "assign_sub",
    "compat",
    "device",
    "function",
    "get_default_graph",
    "global_variables",
    "global_variables_initializer",
    "gradients",
    "group",
    "initialize_all_variables",
    "initializers",
    "is_tensor",
    "keras",
    "layers",
    "losses",
    "math",
    "nn",
    "optimizers",
    "placeholder",
    "random",
    "reset_default_graph",
    "train",
    "trainable_variables",
    "variables_initializer",
]
