import pytest

from ember import static
from ember.backend import jit as _jit
from tests.conftest import CUDA, FAKE_CUDA, NO_CUDA_REASON

JITS = ["off"] + (["sync"] if _jit.available() else [])


@pytest.fixture(autouse=True)
def _fresh_default_graph():
    """Each test starts and ends without a default graph (so eager code stays eager)."""
    static.reset_default_graph()
    yield
    static.reset_default_graph()


@pytest.fixture(params=JITS)
def jit(request):
    prev = _jit.set_mode(request.param)
    yield request.param
    _jit.set_mode(prev)


@pytest.fixture
def gpu(request):
    """CuPy on a GPU when there is one, else the fake CuPy with its emulated kernels."""
    if CUDA:
        import cupy

        return cupy
    if not FAKE_CUDA:
        pytest.skip(NO_CUDA_REASON)
    return request.getfixturevalue("fake_cuda")
