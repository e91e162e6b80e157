"""``tf.compat.v1``: the TF1 API. ``import ember.compat.tf.compat.v1 as tf`` ports programs
written as ``import tensorflow.compat.v1 as tf``.

>>> import ember.compat.tf.compat.v1 as tf
>>> tf.disable_v2_behavior()
>>> x = tf.placeholder(tf.float32, shape=(2,))
>>> w = tf.Variable(tf.ones(2))
>>> with tf.Session() as sess:
...     sess.run(tf.global_variables_initializer())
...     sess.run(tf.reduce_sum(x * w), {x: [1.0, 2.0]})
np.float32(3.0)
>>> tf.enable_eager_execution()
"""

from .. import *  # noqa: F403
from .. import graph as _graph
from ..graph import (  # noqa: F401
    Session,
    assign,
    assign_add,
    assign_sub,
    disable_eager_execution,
    disable_v2_behavior,
    enable_eager_execution,
    enable_v2_behavior,
    get_default_graph,
    global_variables,
    global_variables_initializer,
    gradients,
    initialize_all_variables,
    placeholder,
    reset_default_graph,
    trainable_variables,
    variables_initializer,
)
from ..ops import set_random_seed  # noqa: F401


class losses:  # noqa: N801  (tf.compat.v1.losses)
    """TF1's losses: ``mean_squared_error(labels, predictions)`` is the scalar mean."""

    mean_squared_error = staticmethod(_graph.mean_squared_error)


def __getattr__(name: str):
    import ember.compat.tf as _tf

    if hasattr(_tf, name):
        return getattr(_tf, name)
    raise AttributeError(f"module 'ember.compat.tf.compat.v1' has no attribute {name!r}")
