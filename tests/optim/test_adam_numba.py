"""Adam's one-pass numba update (``ember.optim._adam_numba``) against the override's NumPy
steps (bit for bit) and PyTorch's Adam / AdamW (values)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.backend import jit as _jit
from ember.optim import _adam_numba

pytestmark = pytest.mark.skipif(not _jit.available(), reason="needs numba (the jit extra)")

CASES = [  # (optimizer, weight decay)
    ("Adam", 0.0),
    ("Adam", 0.1),  # L2: g + wd * p, then the kernel
    ("AdamW", 0.1),  # decoupled: p scaled, then the kernel
]


def _run(lib, name, wd, shape, dtype, steps=5):
    p = lib.nn.Parameter(lib.tensor(np.random.default_rng(1).standard_normal(shape).astype(dtype)))
    opt = getattr(lib.optim, name)([p], lr=1e-2, betas=(0.8, 0.99), eps=1e-6, weight_decay=wd)
    for s in range(steps):
        g = np.random.default_rng(10 + s).standard_normal(shape).astype(dtype)
        p.grad = lib.tensor(g)
        opt.step()
    return p.detach().numpy().copy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 5), (100, 400)], ids=["small", "parallel"])
@pytest.mark.parametrize("name, wd", CASES)
def test_one_pass_equals_the_numpy_steps_and_torch(monkeypatch, name, wd, shape, dtype):
    prev = _jit.set_mode("sync")
    try:
        assert _adam_numba.kernels(np.dtype(dtype)) is not None
        assert (np.prod(shape) >= _adam_numba.PARALLEL_MIN) == (shape == (100, 400))
        calls = []
        real = _adam_numba.kernels
        monkeypatch.setattr(_adam_numba, "kernels", lambda d: calls.append(d) or real(d))
        got = _run(ember, name, wd, shape, dtype)
        assert calls
        monkeypatch.setattr(_adam_numba, "kernels", lambda d: None)  # the NumPy steps
        np.testing.assert_array_equal(got, _run(ember, name, wd, shape, dtype))
        tol = 1e-12 if dtype == np.float64 else 1e-5
        np.testing.assert_allclose(got, _run(torch, name, wd, shape, dtype), rtol=tol, atol=tol)
    finally:
        _jit.set_mode(prev)


def test_other_layouts_and_amsgrad_take_the_numpy_steps(monkeypatch):
    prev = _jit.set_mode("sync")
    try:
        mod = _adam_numba.kernels(np.dtype(np.float32))
        calls = []
        monkeypatch.setattr(mod, "step", lambda *a: calls.append(a))
        p = ember.nn.Parameter(ember.ones(4, 6).t())  # not C-contiguous
        p.grad = ember.ones(4, 6).t()
        ember.optim.Adam([p]).step()
        q = ember.nn.Parameter(ember.ones(4))
        q.grad = ember.ones(4)
        ember.optim.Adam([q], amsgrad=True).step()
        assert not calls
    finally:
        _jit.set_mode(prev)
