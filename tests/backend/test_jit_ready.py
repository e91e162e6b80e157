"""``backend.jit``: a kernel an earlier process compiled (its ``.ready`` marker, for this numba
and CPU) loads in the caller; one never compiled here, or compiled by another numba or on
another CPU, compiles on the background thread."""

import threading
import uuid

import pytest

from ember.backend import jit

pytestmark = pytest.mark.skipif(not jit.available(), reason="needs numba (the jit extra)")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    prev = jit.set_mode("auto")
    yield tmp_path
    jit.set_mode(prev)


def _spy(monkeypatch) -> list:
    """The threads ``_build`` runs on, in order."""
    threads = []
    build = jit._build

    def spy(k):
        threads.append(threading.current_thread())
        build(k)

    monkeypatch.setattr(jit, "_build", spy)
    return threads


def _request(source: str):
    """``jit.kernel`` as a new process would ask for it: nothing of it compiled in this one."""
    k = jit.kernel("ready_test", source)
    jit.wait(60)
    with jit._lock:
        jit._kernels.pop(k.name.rsplit("_", 1)[1])
    return k


def test_a_kernel_compiled_before_loads_in_the_caller(cache, monkeypatch):
    source = (
        jit.HEADER + f"# {uuid.uuid4()}\n\n@njit(cache=True)\ndef kernel(x):\n    return x + 1\n"
    )
    threads = _spy(monkeypatch)
    first = _request(source)  # never compiled here: the background thread compiles it
    assert first.fn is not None and first.fn(1) == 2
    assert threads[-1] is not threading.current_thread()
    marker = cache / (first.name + ".ready")
    assert marker.read_text() == jit._stamp()
    again = _request(source)  # compiled before: loaded by the caller, ready on return
    assert threads[-1] is threading.current_thread() and again.fn(2) == 3
    marker.write_text("0.0.0 other-cpu")  # another numba or CPU: the background thread again
    _request(source)
    assert threads[-1] is not threading.current_thread()
    assert marker.read_text() == jit._stamp()
