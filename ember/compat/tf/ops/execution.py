"""Eager or graph: TF1 graph building (a placeholder, ``Graph.as_default``, or
``tf.compat.v1.disable_eager_execution()``), ``executing_eagerly`` and ``init_scope``.

>>> import ember.compat.tf as tf
>>> tf.executing_eagerly()
True
"""

from __future__ import annotations

import builtins
import contextlib

from ember._config import state

# ``tf.compat.v1.disable_eager_execution()`` sets this: Variables then go into graphs even
# before the first placeholder is made.
_graph_mode = [False]


def _defining() -> builtins.bool:
    """Whether TF1 graph building is on (a placeholder, Graph.as_default, or eager disabled)."""
    tr = state.tracer
    return _graph_mode[0] or (tr is not None and getattr(tr, "define", False))


@contextlib.contextmanager
def init_scope():
    """Run the block eagerly even inside ``tf.function`` tracing (where Keras makes weights and
    optimizer slots on the first call, as TensorFlow's ``init_scope``).

    >>> import ember.compat.tf as tf
    >>> with tf.init_scope():
    ...     v = tf.Variable(1.0)
    """
    tr = state.tracer
    if tr is None or getattr(tr, "define", False):
        yield
        return
    state.tracer = None
    try:
        yield
    finally:
        state.tracer = tr


def executing_eagerly() -> builtins.bool:
    """False while TF1 graphs are being built (placeholders exist, a ``Graph.as_default()``
    block is open, or eager execution was disabled), else True.

    >>> import ember.compat.tf as tf
    >>> tf.executing_eagerly()
    True
    """
    return not _defining()
