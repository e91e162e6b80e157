import pytest

import ember.compat.tf as tf
from ember.compat.tf import ops as _ops


@pytest.fixture(autouse=True)
def _fresh_tf_state():
    """Each test starts eager, without a default graph, with fresh Keras layer names."""
    tf.compat.v1.enable_eager_execution()
    tf.keras.backend.clear_session()
    yield
    tf.compat.v1.enable_eager_execution()
    assert not _ops._graph_mode[0]
