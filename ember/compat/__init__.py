"""Faces of other frameworks over ember: ``ember.compat.tf`` (TensorFlow 1 and 2 with Keras).

Import the face explicitly; nothing here is loaded by ``import ember``:

>>> import ember.compat.tf as tf
>>> tf.reduce_sum(tf.constant([[1, 2], [3, 4]]), axis=1)
tensor([3, 7], dtype=ember.int32)
"""
