"""In-place ops while autograd records that write the tensor's own array (``recorded_into``):
PyTorch's values and gradients, the storage kept, no result-sized copy, and the cases that keep
the usual way (a result array copied in)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import torch

import ember
from ember.functions import inplace as I


def _data(seed=0, shape=(5, 5)):
    return np.random.default_rng(seed).standard_normal(shape)


# (name, step(lib, h, w, b)): h is a non-leaf recorded tensor, w (same shape) and b (a row)
# leaves that require grad; each form runs in place on h or on a fresh product
FORMS = [
    ("add_ a tensor", lambda m, h, w, b: h.add_(w)),
    ("+= a broadcast row", lambda m, h, w, b: h.__iadd__(b)),
    ("sub_", lambda m, h, w, b: h.sub_(w * 0.5)),
    ("-= itself", lambda m, h, w, b: h.__isub__(h)),
    ("relu_", lambda m, h, w, b: h.relu_()),
    ("exp_", lambda m, h, w, b: h.exp_()),
    ("sigmoid_", lambda m, h, w, b: h.sigmoid_()),
    ("tanh_", lambda m, h, w, b: h.tanh_()),
    ("neg_", lambda m, h, w, b: h.neg_()),
    ("+= a float64 tensor", lambda m, h, w, b: h.__iadd__(w.double())),
    ("add_ with alpha", lambda m, h, w, b: h.add_(w, alpha=2.0)),
]


@pytest.mark.parametrize("name, form", FORMS, ids=[f[0] for f in FORMS])
def test_values_gradients_and_storage_match_pytorch(device, name, form):
    results = []
    for m in (ember, torch):
        dev = device if m is ember else "cpu"
        w = m.tensor(_data(0), dtype=m.float32, device=dev, requires_grad=True)
        b = m.tensor(_data(1, (5,)), dtype=m.float32, device=dev, requires_grad=True)
        h = w * 1.5
        ptr = h.data_ptr()
        out = form(m, h, w, b)
        assert out is h and h.data_ptr() == ptr, name
        (h * m.tensor(_data(2), dtype=m.float32, device=dev)).sum().backward()
        results.append(
            [t.detach().cpu().numpy() for t in (h, w.grad, b.grad if b.grad is not None else b * 0)]
        )
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)


def _peak(fn) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    fn()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


@pytest.mark.parametrize("inplace", ["add_", "exp_", "relu_"])
def test_no_result_array_is_made(inplace, monkeypatch):
    """The op writes the tensor's array: no result-sized array is made (ReLU's and the large
    add's numba kernels write it too, compiled in the caller here)."""
    from ember.backend import jit

    monkeypatch.setattr(jit, "_mode", "sync" if jit.available() else "off")
    w = ember.randn(256, 256, requires_grad=True)
    h, other = w * 1.0, w * 2.0
    nbytes = h._data.nbytes
    step = (lambda: h.add_(other)) if inplace == "add_" else getattr(h, inplace)
    step()  # (compiles a kernel the first time)
    before, o = h.detach().numpy().copy(), other.detach().numpy()
    want = {"add_": before + o, "exp_": np.exp(before), "relu_": np.maximum(before, 0)}[inplace]
    assert _peak(step) < nbytes // 4
    assert h.grad_fn is not None
    np.testing.assert_allclose(h.detach().numpy(), want, rtol=1e-6)


def test_the_usual_way_where_it_does_not_apply():
    """Overlapping memory, another dtype, a view, a saved input, no recording, a shape that
    grows: each declines, and the in-place op still gives the right values or the error."""
    real = I.recorded_into
    w = ember.randn(5, 5, requires_grad=True)
    h = w * 1.0
    assert not real(h, ember.ops.elementwise.ADD, h.t(), "add_")  # overlapping memory
    want = h.detach().numpy() + h.detach().numpy().T  # (PyTorch refuses this one)
    np.testing.assert_array_equal(h.add_(h.t()).detach().numpy(), want)
    assert not real(h, ember.ops.elementwise.ADD, w.double(), "add_")
    assert not real(h[1:], ember.ops.elementwise.ADD, w[1:], "add_")
    assert not real(h, ember.ops.elementwise.Abs(), None, "abs_")  # its vjp reads the input
    with ember.no_grad():
        assert not real(h, ember.ops.elementwise.ADD, w, "add_")
    assert not real(h, ember.ops.elementwise.ADD, ember.randn(3, 5, 5), "add_")
    with pytest.raises(ember.EmberError, match=r"add_: output with shape \(5, 5\) doesn't match"):
        h.add_(ember.randn(3, 5, 5))
