"""Fixtures of the op tests."""

from __future__ import annotations

import pytest

from ember.backend import jit as _jit


@pytest.fixture(params=["numpy", "numba"])
def mode(request, monkeypatch):
    """Each test that takes it runs twice: ``numpy`` (kernels off: the ops' NumPy bodies) and
    ``numba`` (kernels compiled in the caller; skipped without numba)."""
    if request.param == "numba" and not _jit.available():
        pytest.skip("numba is not installed")
    monkeypatch.setattr(_jit, "_mode", "off" if request.param == "numpy" else "sync")
    return request.param
