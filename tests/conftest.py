"""Shared fixtures: fresh seeds for every test, the ``device`` parameter and the fake GPU.

``device`` runs a test on ``"cpu"`` and again on ``"cuda"``: on a real GPU when
``ember.cuda.is_available()`` (CuPy and a device), and otherwise on the strict fake CuPy of
``tests/_fakecupy/`` (built from ``tests/cupy_manifest.json``, the real CuPy's API: what CuPy
lacks or refuses, the fake lacks or refuses). Set ``EMBER_TEST_FAKE_CUDA=0`` to skip the cuda
cases instead when there is no GPU. ``fake_cuda`` installs the fake for one test; its
g++-emulated kernels (``ElementwiseKernel`` / ``RawKernel``) are on for the tests that
``_kernels_wanted`` picks (see there), off elsewhere (ember then takes its NumPy-style path).
"""

import os
import sys

import numpy as np
import pytest

import ember
from ember.backend.kernels import cublas as _cublas
from tests.backend import _nvrtc

CUDA = ember.cuda.is_available()  # a real GPU (the fake is installed only inside tests)
_nvrtc.available()  # the real CuPy's compiler, found before a test puts the fake in sys.modules
FAKE_CUDA = not CUDA and os.environ.get("EMBER_TEST_FAKE_CUDA", "1") != "0"
NO_CUDA_REASON = (
    "needs a GPU: ember.cuda.is_available() is False, and EMBER_TEST_FAKE_CUDA=0 turned the "
    "strict fake CuPy off"
)

DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=[pytest.mark.gpu, pytest.mark.skipif(not (CUDA or FAKE_CUDA), reason=NO_CUDA_REASON)],
    ),
]

# Tests (path prefixes) whose cuda cases run the fused kernels, emulated with g++: the kernels'
# own tests, every optimizer (fused updates), and the functional / transformer tests (the row
# kernels: softmax, log-softmax, layer norm). Elsewhere the kernels are off: each new kernel
# source costs a g++ compile (cached on disk), each RawKernel launch a few ms of threads, and
# compiled steps with kernels would swap matmul for cuBLAS through ctypes, which a fake lacks.
KERNEL_TESTS = (
    "tests/backend/",
    "tests/optim/",
    "tests/nn/test_functional.py",
    "tests/nn/test_transformer.py",
)


def _kernels_wanted(request) -> bool:
    """Whether this test's fake CuPy offers the emulated kernel classes (``KERNEL_TESTS``, or a
    ``fake_kernels`` mark)."""
    if request.node.get_closest_marker("fake_kernels") is not None:
        return True
    path = os.path.relpath(str(request.node.path), os.path.dirname(os.path.dirname(__file__)))
    return path.replace(os.sep, "/").startswith(KERNEL_TESTS)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "gpu: runs on a cuda device (a real GPU, else the strict fake CuPy; select with -m gpu)",
    )
    config.addinivalue_line(
        "markers", "fake_kernels: on the fake CuPy, offer the g++-emulated kernel classes"
    )
    config.addinivalue_line(
        "markers",
        "mpi: launches ranks with mpiexec (ember run); skipped without mpi4py and an mpiexec",
    )


@pytest.fixture(autouse=True)
def _seed_and_defaults():
    """Every test starts from the same seeds and ember's defaults, and leaves no device check
    queued (``ember.backend.checks``) for the next test to report, and no default graph (a
    placeholder made outside ``as_default`` starts one, and every later op of the thread passes
    through it: the in-place writes of the next tests in that worker took their copying way)."""
    ember.manual_seed(0)
    np.random.seed(0)
    yield
    ember.set_default_dtype(ember.float32)
    ember.backend.checks.take()
    ember.static.reset_default_graph()


@pytest.fixture
def fake_cuda(monkeypatch, request):
    """The strict fake CuPy (``tests/_fakecupy/``, two "GPUs") installed as ember's cuda
    backend (see the module docstring)."""
    from tests import _fakecupy
    from tests._fakecupy._functions import cublas_matmul

    fake = _fakecupy.reset(kernels=_kernels_wanted(request))
    token = ember.backend.cuda.install(fake)
    monkeypatch.setattr(ember.backends.cudnn, "_module", [None])  # NVIDIA's frontend needs a GPU
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setitem(sys.modules, "cupyx", fake.cupyx)
    fake.strict_numpy(monkeypatch)

    # cuBLAS called through ctypes while a step is captured (CuPy refuses its own calls then)
    def matmul(cp, a, b, out=None):  # ember's own checks of the operands, then the product
        _cublas.check_operands(a, b)
        return cublas_matmul(a, b, out=out)

    monkeypatch.setattr(_cublas, "matmul", matmul)
    ember.manual_seed(0)
    try:
        yield fake
    finally:
        ember.backend.cuda.uninstall(token)


@pytest.fixture(params=DEVICES)
def device(request) -> str:
    """``"cpu"``, and ``"cuda"`` (a real GPU, or the fake CuPy; see the module docstring)."""
    if request.param == "cuda" and FAKE_CUDA:
        request.getfixturevalue("fake_cuda")
    return request.param
