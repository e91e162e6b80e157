"""ember's TF32 choice on a CuPy without ``set_compute_type``: ember warns once that its
setting cannot reach CuPy, and never writes the process environment (``CUPY_TF32``)."""

import os
import types
import warnings

import numpy as np
import pytest

import ember
from ember.backend.kernels import matmul as kmatmul


@pytest.fixture
def no_setter(monkeypatch):
    """A CuPy-like module with kernels but no ``set_compute_type``, and fresh matmul state."""
    monkeypatch.setattr(kmatmul, "_setter", [])
    monkeypatch.setattr(kmatmul, "_applied", [None])
    monkeypatch.setattr(kmatmul, "_warned", set())
    monkeypatch.delenv("CUPY_TF32", raising=False)
    return types.SimpleNamespace(ElementwiseKernel=object, matmul=np.matmul)


def test_no_setter_warns_once_and_leaves_the_environment_alone(no_setter):
    environ = dict(os.environ)
    with pytest.warns(RuntimeWarning, match="no set_compute_type"):
        kmatmul.apply_precision(no_setter)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a second warning would fail here
            ember.backends.cuda.matmul.allow_tf32 = True
            kmatmul.apply_precision(no_setter)
            ember.set_float32_matmul_precision("medium")
            kmatmul.apply_precision(no_setter)
    finally:
        ember.set_float32_matmul_precision("highest")
    assert "CUPY_TF32" not in os.environ
    assert dict(os.environ) == environ


def test_the_setter_is_looked_up_again_after_clear_caches(no_setter):
    kmatmul._setter.append(None)
    kmatmul._applied[0] = 3
    ember.clear_caches()
    assert kmatmul._setter == [] and kmatmul.state_applied() is None
