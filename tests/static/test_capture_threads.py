"""CUDA-graph capture replaces ``xp.matmul``, ``xp.asarray`` and ``xp.array`` for the capturing
thread only (``ember.backend.arrays.capture_overrides``): another thread running ember ops on
the GPU meanwhile (a DataLoader's worker) gets CuPy's own functions.

On the strict fake CuPy (see ``tests/static/test_cuda_graph.py``) CuPy's own cuBLAS calls are
refused while a stream captures, as on a GPU; the direct cuBLAS call is stood in for here by one
that records which thread called it.
"""

import threading

import numpy as np
import pytest

import ember
from ember.backend import arrays
from ember.backend.kernels import cublas as _cublas
from ember.static import cuda_graph
from ember.static.executor import Plan


@pytest.fixture
def capture_log(fake_cuda, monkeypatch):
    """Capture with the replacements on; ``log`` records who called the capture-time matmul and
    what a second thread computed in the middle of the capture."""
    from tests._fakecupy._functions import cublas_matmul as direct

    log = {"cublas": [], "worker": None, "kept_by_worker": None}

    def cublas_matmul(cp, a, b, out=None):
        log["cublas"].append(threading.get_ident())
        r = direct(a, b)  # cuBLAS, as ember calls it through ctypes
        if out is None:
            return r
        out[...] = r
        return out

    run_steps = Plan.run_steps

    def run_steps_then_a_worker(plan, cp, steps, *args):
        result = run_steps(plan, cp, steps, *args)  # the capturing thread's ops
        if not captured or log["worker"] is not None:  # not capturing: an ordinary run
            return result
        runner = captured[0]
        kept = len(runner.keep)
        worker = threading.Thread(target=_worker, args=(fake_cuda, log))
        worker.start()
        worker.join()
        log["kept_by_worker"] = len(runner.keep) - kept
        return result

    captured: list = []
    capture_now = cuda_graph.Runner._capture_now

    def capture_now_kept(self, *args):
        captured.append(self)
        return capture_now(self, *args)

    monkeypatch.setattr(_cublas, "matmul", cublas_matmul)
    monkeypatch.setattr(Plan, "run_steps", run_steps_then_a_worker)
    monkeypatch.setattr(cuda_graph.Runner, "_capture_now", capture_now_kept)
    return log


def _worker(fake, log):
    """Ember ops on the GPU from another thread, on a stream of its own (CuPy's current stream
    is per thread; the fake keeps one stack, which the capturing thread does not touch while it
    waits for this one)."""
    try:
        with fake.cuda.Stream(non_blocking=True):
            xp = ember.backend.cuda.xp()
            host = np.arange(6, dtype=np.float32).reshape(2, 3)
            a = ember.tensor(host).to("cuda")  # host -> device: xp.asarray
            b = ember.ones(3, 2, device="cuda")
            c = xp.array([1.0, 2.0], dtype=np.float32)
            log["worker"] = ((a @ b).cpu().numpy(), xp.asnumpy(xp.matmul(c, c)))
    except BaseException as e:  # noqa: BLE001 - reported by the test
        log["worker"] = e


def test_another_thread_sees_the_ordinary_functions_during_a_capture(capture_log):
    w = ember.ones(3, 4, device="cuda")

    def forward(x):
        return (x @ w).relu()

    step = ember.compile(forward)
    x = ember.ones(2, 3, device="cuda")
    for _ in range(3):  # a warm-up call, the capture, a replay
        out = step(x)
    runner = step._latest.runner
    assert runner is not None and runner.disabled is None and runner.captures == 1
    np.testing.assert_allclose(out.cpu().numpy(), np.full((2, 4), 3.0, np.float32))

    # the capturing thread's product went through the capture-time matmul, the worker's not
    assert capture_log["cublas"] and set(capture_log["cublas"]) == {threading.get_ident()}
    assert not isinstance(capture_log["worker"], BaseException), capture_log["worker"]
    product, dot = capture_log["worker"]
    np.testing.assert_allclose(product, np.arange(6.0).reshape(2, 3) @ np.ones((3, 2)))
    assert float(dot) == 5.0
    assert capture_log["kept_by_worker"] == 0  # its host data was not kept for the graph


def test_overrides_are_the_calling_threads_only(fake_cuda):
    xp = ember.backend.cuda.xp()
    seen = {}

    def other():
        seen["other"] = xp.asarray(np.float32(2.0))

    with arrays.capture_overrides({"asarray": lambda obj, *a, **k: "captured"}):
        assert xp.asarray(1.0) == "captured"
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert isinstance(seen["other"], fake_cuda.ndarray) and float(seen["other"]) == 2.0
    assert isinstance(xp.asarray(1.0), fake_cuda.ndarray)  # restored on this thread too
    with pytest.raises(ValueError, match="not in"):
        with arrays.capture_overrides({"zeros": print}):
            pass
