"""ember.backend.blas: products split over numba's threads equal NumPy's, in every layout it
takes, and everything it does not take goes to NumPy unchanged."""

from __future__ import annotations

import multiprocessing
import os

import ml_dtypes
import numpy as np
import pytest

from ember import _config
from ember.backend import blas, jit


def _rand(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.fixture
def split(monkeypatch):
    """Two threads, kernels compiled in the caller, every product large enough to split."""
    monkeypatch.setattr(jit, "_mode", "sync" if jit.mode() == "auto" else jit.mode())
    monkeypatch.setattr(_config.settings, "num_threads", 2)
    monkeypatch.setattr(blas, "MIN_SPLIT_WORK", 0)
    if not blas.active():
        pytest.skip("numba or NumPy's OpenBLAS is not at hand: products are NumPy's")


def _t(x):
    """x's values in transposed memory (a view whose last axis is not the unit-stride one)."""
    return np.ascontiguousarray(np.swapaxes(x, -1, -2)).swapaxes(-1, -2)


CASES = {  # name: (a, b); float32 and float64, 2-D and stacks, transposed and sliced
    "2d": (_rand(7, 5), _rand(5, 3)),
    "one row": (_rand(1, 9), _rand(9, 4)),
    "a transposed": (_t(_rand(33, 17)), _rand(17, 6)),
    "b transposed": (_rand(33, 17, dtype=np.float64), _t(_rand(17, 6, dtype=np.float64))),
    "both transposed": (_t(_rand(12, 40)), _t(_rand(40, 9))),
    "row slice": (_rand(50, 20)[5:45], _rand(20, 8)),
    "column slice of a": (_rand(30, 40)[:, 3:23], _rand(20, 8)),
    "stack @ matrix": (_rand(4, 9, 6), _rand(6, 5)),
    "sequence-first view @ matrix": (_rand(4, 9, 6).transpose(1, 0, 2), _rand(6, 5)),
    "4-d permuted @ matrix": (_rand(2, 3, 7, 6).transpose(2, 0, 1, 3), _rand(6, 4)),
    "stack with rows cut @ matrix": (_rand(4, 9, 6)[:, 1:8], _rand(6, 5)),  # does not fold
    "stack @ stack": (_rand(16, 10, 4, dtype=np.float64), _rand(16, 4, 7, dtype=np.float64)),
    "stack, fewer than threads": (_rand(1, 31, 8), _rand(1, 8, 3)),
    "stack transposed (v^T z)": (_rand(16, 30, 5).transpose(0, 2, 1), _rand(16, 30, 6)),
    "stack rows sliced": (_rand(16, 40, 5)[:, 7:30], _rand(16, 5, 3)),
    "long inner dimension": (_rand(6, 300), _rand(300, 5)),  # split along it, parts summed
    "long inner, odd, transposed": (
        _t(_rand(12, 401, dtype=np.float64)),
        _t(_rand(401, 7, dtype=np.float64)),
    ),
}


def _both(a, b):
    """(ember's product, NumPy's), checked to agree in dtype and shape."""
    want, got = np.matmul(a, b), blas.matmul(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    return got, want


@pytest.mark.parametrize("name", sorted(CASES))
def test_split_product_equals_numpy(name, split):
    a, b = CASES[name]
    got, want = _both(a, b)
    # both within rounding of the exact sums: a few ulps of the sum of |products| each
    exact = np.matmul(a.astype(np.float64), b.astype(np.float64))
    bound = (1e-6 if a.dtype == np.float32 else 1e-14) * np.matmul(np.abs(a), np.abs(b))
    assert (np.abs(want - exact) <= bound).all()
    assert (np.abs(got - exact) <= bound).all()
    out = np.full(want.shape, np.nan, a.dtype)
    assert blas.matmul(a, b, out=out) is out
    np.testing.assert_array_equal(out, got)


FALLBACKS = {  # what NumPy serves itself: the same result, dtype and errors as np.matmul
    "int64": (np.arange(6).reshape(2, 3), np.arange(6).reshape(3, 2)),
    "float16": (_rand(4, 3, dtype=np.float16), _rand(3, 2, dtype=np.float16)),
    "bfloat16": (_rand(4, 3, dtype=ml_dtypes.bfloat16), _rand(3, 2, dtype=ml_dtypes.bfloat16)),
    "mixed dtypes": (_rand(4, 3), _rand(3, 2, dtype=np.float64)),
    "vector": (_rand(3), _rand(3, 2)),
    "4-d stack": (_rand(2, 3, 4, 5), _rand(2, 3, 5, 2)),
    "broadcast stack": (_rand(3, 4, 5), _rand(1, 5, 2)),
    "negative stride": (_rand(6, 4)[::-1], _rand(4, 3)),
    "empty": (_rand(0, 4), _rand(4, 3)),
}


@pytest.mark.parametrize("name", sorted(FALLBACKS))
def test_what_it_does_not_split_is_numpy(name, split):
    np.testing.assert_array_equal(*_both(*FALLBACKS[name]))


def test_a_stack_times_a_matrix_is_one_product_in_its_memory_order(split, monkeypatch):
    """Attention's projections multiply a sequence-first view (L, N, E) of batch-first memory
    by a weight: one product of all N * L rows (not N * L / L small ones), the result laid out
    as the input is; rows that do not step through memory as one stay a stack."""
    a, w = _rand(4, 9, 6).transpose(1, 0, 2), _rand(6, 5)
    rows, order = blas._folded(a)
    assert rows.shape == (36, 6) and order == (1, 0) and np.shares_memory(rows, a)
    calls = []
    real = blas.matmul
    monkeypatch.setattr(
        blas, "matmul", lambda x, y, out=None: calls.append(x.shape) or real(x, y, out)
    )
    got = real(a, w)
    assert calls == [(36, 6)]
    assert got.transpose(1, 0, 2).flags.c_contiguous
    np.testing.assert_allclose(got, np.matmul(a, w), rtol=1e-6, atol=1e-6)
    assert blas._folded(_rand(4, 9, 6)[:, 1:8]) is None


def test_shape_errors_are_numpy_s(split):
    with pytest.raises(ValueError, match="matmul"):
        blas.matmul(_rand(3, 4), _rand(5, 2))


def test_one_thread_splits_nothing(monkeypatch):
    monkeypatch.setattr(_config.settings, "num_threads", 1)
    assert not blas.active()
    assert blas.one_thread()
    a, b = _rand(300, 100), _rand(100, 60)
    np.testing.assert_array_equal(blas.matmul(a, b), np.matmul(a, b))


def test_without_openblas_nothing_changes(monkeypatch):
    lib = blas._Library.__new__(blas._Library)
    lib.set_threads, lib.gemm = None, {}
    monkeypatch.setattr(blas, "_library", lib)
    monkeypatch.setattr(blas, "_state", {"key": None, "blas": None, "numba": None})
    monkeypatch.setattr(_config.settings, "num_threads", 2)
    assert not blas.active()


@pytest.mark.parametrize(
    "threads, active, n, image, budget, want",
    [
        (2, True, 64, 64 << 10, 2 << 20, (32, 2)),  # the budget holds half the batch
        (2, True, 64, 2 << 20, 2 << 20, (1, 2)),  # one large image a block
        (2, True, 5, 1 << 20, 2 << 20, (2, 2)),  # 3 blocks in 2 runs
        (4, True, 3, 1, 2 << 20, (1, 3)),  # fewer images than threads
        (2, False, 64, 64 << 10, 2 << 20, (32, 1)),  # kernels off: one run
        (2, True, 8, 0, 1 << 10, (4, 2)),  # no scratch per image
    ],
)
def test_image_blocks(monkeypatch, threads, active, n, image, budget, want):
    monkeypatch.setattr(_config.settings, "num_threads", threads)
    monkeypatch.setattr(blas, "kernel_threads", lambda: threads if active else 1)
    assert blas.image_blocks(n, image, budget) == want


def test_kernel_threads_follow_ember_s_count_and_the_jit_mode(monkeypatch):
    monkeypatch.setattr(_config.settings, "num_threads", 3)
    assert blas.kernel_threads() == (3 if jit.enabled() else 1)
    monkeypatch.setattr(jit, "_mode", "off")
    assert blas.kernel_threads() == 1


@pytest.mark.skipif(not jit.available(), reason="needs numba (the jit extra)")
def test_numba_gemms_follow_the_library(monkeypatch):
    found = blas.numba_gemms()
    assert len(found) == len(blas.library().gemm)
    lib = blas._Library.__new__(blas._Library)
    lib.set_threads, lib.gemm = None, {}
    monkeypatch.setattr(blas, "_library", lib)
    assert blas.numba_gemms() == []


def _forked_child(q, a):
    import ember

    x = ember.from_numpy(np.ones((2, 3, 6, 6), np.float32))
    conv = ember.nn.functional.conv2d(x, ember.ones(4, 3, 3, 3), padding=1)
    q.put((jit.mode(), float(blas.matmul(a, a)[0, 0]), float(conv.sum())))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_child_forked_after_a_split_runs_numpy(split):
    """GNU OpenMP's threads do not survive fork (numba ends a child that starts a parallel
    loop): a forked child runs with kernels off and finishes."""
    a = _rand(300, 300)
    want = np.matmul(a, a)[0, 0]
    blas.matmul(a, a)  # numba's OpenMP threads are running now
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_forked_child, args=(q, a))
    p.start()
    p.join(60)
    assert p.exitcode == 0
    mode, product, conv = q.get(timeout=5)
    assert mode == "off"
    np.testing.assert_allclose(product, want, rtol=1e-5)
    assert conv == 2 * 4 * (16 * 27 + 16 * 18 + 4 * 12)  # interior, edge and corner windows
