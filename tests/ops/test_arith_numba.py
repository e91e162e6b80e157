"""Large elementwise arithmetic on numba's threads (ember.ops._arith_numba): the bits of NumPy's
loops, what the kernels decline, and the eager paths that use them against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.ops import _arith_numba as A

N = A.PARALLEL_MIN
UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


def _rand(n=N + 3, dtype=np.float32, seed=0):
    a = (np.random.default_rng(seed).standard_normal(n) * 3).astype(dtype)
    a[:6] = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-30]
    return a


def _bits(a):
    return a.view(np.uint32 if a.itemsize == 4 else np.uint64)


@pytest.fixture
def numba_mode(mode):
    if mode == "numpy":
        pytest.skip("the kernels themselves")
    return mode


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(A.OPS))
@pytest.mark.parametrize(
    "form", ["arrays", "number second", "0-d first", "in place", "row second", "row first"]
)
def test_kernels_give_numpys_bits(numba_mode, name, form, dtype):
    a, b = _rand(dtype=dtype), _rand(dtype=dtype, seed=1)[::-1].copy()
    with np.errstate(all="ignore"):
        if form.startswith("row"):  # a bias: one row broadcast down a (rows, 2, 7) stack
            stack, row = _rand(14 * 4700, dtype).reshape(-1, 2, 7), b[:14].reshape(2, 7)
            pair = (stack, row) if form == "row second" else (row, stack)
            want, got = UFUNCS[name](*pair), A.binary(name, *pair)
        elif form == "arrays":
            want, got = UFUNCS[name](a, b), A.binary(name, a, b)
        elif form == "number second":
            want, got = UFUNCS[name](a, 0.3), A.binary(name, a, 0.3)
        elif form == "0-d first":
            s = np.asarray(-1.7, dtype)
            want, got = UFUNCS[name](s, b), A.binary(name, s, b)
        else:
            want = UFUNCS[name](a, b)
            got = A.binary(name, a, b, out=a)
            assert got is a
    assert got.dtype == want.dtype == dtype
    np.testing.assert_array_equal(_bits(got), _bits(want))


def test_shapes_keep_their_dims(numba_mode):
    a = _rand().reshape(-1)[:N].reshape(256, -1)
    got = A.binary("mul", a, np.asarray(2.0, np.float32))
    assert got.shape == a.shape
    np.testing.assert_array_equal(got, a * np.float32(2))


@pytest.mark.parametrize(
    "a, b, why",
    [
        (np.ones(N - 1, np.float32), np.ones(N - 1, np.float32), "small"),
        (np.ones(N, np.int64), np.ones(N, np.int64), "integers"),
        (np.ones(N, np.float16), np.ones(N, np.float16), "float16"),
        (np.ones(2 * N, np.float32)[::2], np.ones(N, np.float32), "not contiguous"),
        (np.ones(N, np.float32), np.ones(N, np.float64), "two dtypes"),
        (np.ones((N, 2), np.float32), np.ones((N, 1), np.float32), "a broadcast column"),
        (np.ones((N, 2), np.float32), np.ones(2, np.float64), "a row of another dtype"),
        (np.ones((N, 4), np.float32), np.ones(8, np.float32)[::2], "a strided row"),
        (np.ones(N, np.float32), np.asarray(1.0, np.float64), "a 0-d operand of another dtype"),
        (np.ones(N, np.float32), True, "a bool"),
        (np.ones(N, np.float32), 10**400, "an int no float holds"),
    ],
)
def test_declines(numba_mode, a, b, why):
    assert A.binary("add", a, b) is None, why


def test_declines_outputs_it_cannot_write(numba_mode):
    a = np.ones(N, np.float32)
    ro = np.ones(N, np.float32)
    ro.flags.writeable = False
    assert A.binary("add", a, a, out=ro) is None
    assert A.binary("add", a, a, out=np.ones(N + 1, np.float32)) is None
    assert A.binary("add", a, a, out=np.ones(N, np.float64)) is None


def test_fill(numba_mode):
    a = _rand()
    assert A.fill(a, 3)
    np.testing.assert_array_equal(a, np.full(a.shape, 3.0, np.float32))
    assert A.fill(a, -0.0) and np.signbit(a).all()
    assert not A.fill(np.ones(N - 1, np.float32), 0)
    assert not A.fill(np.ones(N, np.int32), 0)
    assert not A.fill(a, np.float32(1))  # a NumPy scalar: NumPy's assignment rules


def test_nothing_without_numba(mode):
    if mode == "numba":
        pytest.skip("the NumPy mode")
    assert A.binary("add", _rand(), _rand()) is None
    assert not A.fill(_rand(), 0)


def _spy(monkeypatch):
    calls = []
    real = A.binary

    def spy(name, a, b, out=None):
        r = real(name, a, b, out)
        if r is not None:
            calls.append(name)
        return r

    monkeypatch.setattr(A, "binary", spy)
    return calls


def test_lecture_update_matches_pytorch(mode, monkeypatch):
    """The lecture's SGD step by hand on a 1000x100 weight: ``w -= lr * w.grad``, gradients
    added into an existing ``.grad`` by a second backward, ``zero_()``: PyTorch's values, on
    numba's threads in the numba mode."""
    calls = _spy(monkeypatch)
    rng = np.random.default_rng(0)
    x, w0 = rng.standard_normal((64, 1000)), rng.standard_normal((1000, 100))
    x, w0 = x.astype(np.float32), w0.astype(np.float32)
    results = []
    for lib in (ember, torch):
        w = lib.tensor(w0.copy(), requires_grad=True)
        xt = lib.tensor(x)
        for _ in range(2):
            xt.mm(w).clamp(min=0).sum().backward()  # the second adds into .grad
        with lib.no_grad():
            w -= 1e-3 * w.grad
            w.mul_(0.5)
        g = w.grad.clone()
        w.grad.zero_()
        results.append((w.detach().numpy().copy(), g.numpy(), w.grad.numpy().copy()))
    for got, want in zip(results[0], results[1]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert (mode == "numba") == bool(calls), calls
    if mode == "numba":
        assert {"add", "mul", "sub"} <= set(calls)
