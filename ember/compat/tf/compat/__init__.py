"""``tf.compat``: ``tf.compat.v1`` holds the TF1 API (placeholders, Session, ``tf.train``
optimizers, ``disable_eager_execution``) next to everything in ``tf``.

>>> import ember.compat.tf as tf
>>> tf.compat.v1.placeholder is tf.placeholder
True
"""

from . import v1

__all__ = ["v1"]
