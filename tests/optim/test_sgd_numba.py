"""SGD's one-pass numba update (``ember.optim._sgd_numba``) against the override's NumPy steps
(bit for bit) and PyTorch's SGD (values)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.backend import jit as _jit
from ember.optim import _sgd_numba

pytestmark = pytest.mark.skipif(not _jit.available(), reason="needs numba (the jit extra)")

CASES = [  # SGD's arguments beside lr
    dict(),
    dict(weight_decay=0.1),
    dict(momentum=0.9),
    dict(momentum=0.9, nesterov=True, weight_decay=0.01),
    dict(momentum=0.5, dampening=0.3, weight_decay=5e-4),
]


def _run(lib, kw, shape, dtype, steps=5):
    p = lib.nn.Parameter(lib.tensor(np.random.default_rng(1).standard_normal(shape).astype(dtype)))
    opt = lib.optim.SGD([p], lr=0.05, **kw)
    for s in range(steps):
        g = np.random.default_rng(10 + s).standard_normal(shape).astype(dtype)
        p.grad = lib.tensor(g)
        opt.step()
    return p.detach().numpy().copy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 5), (100, 400)], ids=["small", "parallel"])
@pytest.mark.parametrize("kw", CASES, ids=[str(k) for k in CASES])
def test_one_pass_equals_the_numpy_steps_and_torch(monkeypatch, kw, shape, dtype):
    prev = _jit.set_mode("sync")
    try:
        assert _sgd_numba.kernels(np.dtype(dtype)) is not None
        assert (np.prod(shape) >= _sgd_numba.PARALLEL_MIN) == (shape == (100, 400))
        calls = []
        real = _sgd_numba.kernels
        monkeypatch.setattr(_sgd_numba, "kernels", lambda d: calls.append(d) or real(d))
        got = _run(ember, kw, shape, dtype)
        assert calls
        monkeypatch.setattr(_sgd_numba, "kernels", lambda d: None)  # the NumPy steps
        np.testing.assert_array_equal(got, _run(ember, kw, shape, dtype))
        tol = 1e-12 if dtype == np.float64 else 1e-5
        np.testing.assert_allclose(got, _run(torch, kw, shape, dtype), rtol=tol, atol=tol)
    finally:
        _jit.set_mode(prev)


def test_other_layouts_dtypes_and_the_first_momentum_step_take_the_numpy_steps(monkeypatch):
    prev = _jit.set_mode("sync")
    try:
        mod = _sgd_numba.kernels(np.dtype(np.float32))
        calls = []
        monkeypatch.setattr(mod, "step", lambda *a: calls.append(a))
        p = ember.nn.Parameter(ember.ones(4, 6).t())  # not C-contiguous
        p.grad = ember.ones(4, 6).t()
        ember.optim.SGD([p], lr=0.1).step()
        q = ember.nn.Parameter(ember.ones(4))
        q.grad = ember.ones(4)
        ember.optim.SGD([q], lr=0.1, momentum=0.9).step()  # the buffer starts as a copy of g
        assert not calls
        ember.optim.SGD([q], lr=0.1).step()
        assert len(calls) == 1
    finally:
        _jit.set_mode(prev)
