"""Shared fixtures: fresh seeds for every test, the ``device`` parameter and the fake GPU.

``device`` runs a test on ``"cpu"`` and, when ``ember.cuda.is_available()`` (a real GPU with
CuPy), again on ``"cuda"``; without a GPU the cuda case is skipped with the reason. Set
``EMBER_TEST_FAKE_CUDA=1`` to run the cuda cases on the fake CuPy of ``tests/_fakecupy.py``
instead (slow-ish, plumbing only: it checks that tests and code move data to the right device,
not GPU numerics). ``fake_cuda`` installs that fake for one test.
"""

import os
import sys

import numpy as np
import pytest

import ember

CUDA = ember.cuda.is_available()  # a real GPU (the fake is installed only inside tests)
FAKE_CUDA = not CUDA and os.environ.get("EMBER_TEST_FAKE_CUDA") == "1"
NO_CUDA_REASON = "needs a GPU: ember.cuda.is_available() is False (no CuPy or no device)"

DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=[pytest.mark.gpu, pytest.mark.skipif(not (CUDA or FAKE_CUDA), reason=NO_CUDA_REASON)],
    ),
]


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu: runs on a cuda device (skipped without a GPU; select with -m gpu)"
    )


@pytest.fixture(autouse=True)
def _seed_and_defaults():
    """Every test starts from the same seeds and ember's defaults."""
    ember.manual_seed(0)
    np.random.seed(0)
    yield
    ember.set_default_dtype(ember.float32)


@pytest.fixture
def fake_cuda(monkeypatch):
    """The fake CuPy (``tests/_fakecupy.py``, two "GPUs") installed as ember's cuda backend.

    NumPy does the arithmetic: this checks device plumbing, never GPU kernels.
    """
    from tests import _fakecupy

    fake = _fakecupy.reset()
    token = ember.backend.cuda.install(fake)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setitem(sys.modules, "cupyx", fake.cupyx)
    fake.strict_numpy(monkeypatch)
    ember.manual_seed(0)
    try:
        yield fake
    finally:
        ember.backend.cuda.uninstall(token)


@pytest.fixture(params=DEVICES)
def device(request) -> str:
    """``"cpu"``, and ``"cuda"`` where a GPU is present (see the module docstring)."""
    if request.param == "cuda" and FAKE_CUDA:
        request.getfixturevalue("fake_cuda")
    return request.param
