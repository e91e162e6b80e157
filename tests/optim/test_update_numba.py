"""The optimizers' one-pass numba updates (``ember.optim._update_numba``: Adam's, SGD's)
against the overrides' NumPy steps (bit for bit) and PyTorch's optimizers (values)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.backend import jit as _jit
from ember.optim import _update_numba

pytestmark = pytest.mark.skipif(not _jit.available(), reason="needs numba (the jit extra)")

ADAM = dict(lr=1e-2, betas=(0.8, 0.99), eps=1e-6)
CASES = [  # (optimizer, its arguments)
    ("Adam", dict(ADAM, weight_decay=0.0)),
    ("Adam", dict(ADAM, weight_decay=0.1)),  # L2: g + wd * p, then the kernel
    ("AdamW", dict(ADAM, weight_decay=0.1)),  # decoupled: p scaled, then the kernel
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),  # the first step's buffer is a copy of g (NumPy)
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.5, dampening=0.3, weight_decay=5e-4)),
]


def _run(lib, name, kw, shape, dtype, steps=5):
    p = lib.nn.Parameter(lib.tensor(np.random.default_rng(1).standard_normal(shape).astype(dtype)))
    opt = getattr(lib.optim, name)([p], **kw)
    for s in range(steps):
        g = np.random.default_rng(10 + s).standard_normal(shape).astype(dtype)
        p.grad = lib.tensor(g)
        opt.step()
    return p.detach().numpy().copy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 5), (100, 400)], ids=["small", "parallel"])
@pytest.mark.parametrize("name, kw", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_one_pass_equals_the_numpy_steps_and_torch(monkeypatch, name, kw, shape, dtype):
    prev = _jit.set_mode("sync")
    try:
        assert _update_numba.kernels(np.dtype(dtype)) is not None
        assert (np.prod(shape) >= _update_numba.PARALLEL_MIN) == (shape == (100, 400))
        calls = []
        real = _update_numba.kernels
        monkeypatch.setattr(_update_numba, "kernels", lambda d: calls.append(d) or real(d))
        got = _run(ember, name, kw, shape, dtype)
        assert calls
        monkeypatch.setattr(_update_numba, "kernels", lambda d: None)  # the NumPy steps
        np.testing.assert_array_equal(got, _run(ember, name, kw, shape, dtype))
        tol = 1e-12 if dtype == np.float64 else 1e-5
        np.testing.assert_allclose(got, _run(torch, name, kw, shape, dtype), rtol=tol, atol=tol)
    finally:
        _jit.set_mode(prev)


@pytest.mark.parametrize(
    "name, declined, served",
    [
        ("adam", dict(amsgrad=True), dict()),
        ("sgd", dict(momentum=0.9), dict()),  # the buffer starts as a copy of g
    ],
)
def test_other_layouts_and_forms_take_the_numpy_steps(monkeypatch, name, declined, served):
    prev = _jit.set_mode("sync")
    try:
        mod = _update_numba.kernels(np.dtype(np.float32))
        calls = []
        monkeypatch.setattr(mod, name, lambda *a: calls.append(a))
        cls = ember.optim.Adam if name == "adam" else ember.optim.SGD
        p = ember.nn.Parameter(ember.ones(4, 6).t())  # not C-contiguous
        p.grad = ember.ones(4, 6).t()
        cls([p], lr=0.1).step()
        q = ember.nn.Parameter(ember.ones(4))
        q.grad = ember.ones(4)
        cls([q], lr=0.1, **declined).step()
        assert not calls
        cls([q], lr=0.1, **served).step()
        assert len(calls) == 1
    finally:
        _jit.set_mode(prev)
