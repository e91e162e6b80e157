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


@pytest.mark.parametrize("name", ["relu_", "exp_"])  # exp: an op the autocast policy lists
def test_under_autocast_the_op_still_writes_in_place_without_autocast(name):
    """In-place forms are not autocast (they keep the tensor's dtype, as the usual way does):
    the op still writes the tensor's array, with PyTorch's values and gradients."""
    real = I.recorded_into
    op = {"relu_": ember.ops.elementwise.Relu(), "exp_": ember.ops.elementwise.Exp()}[name]
    w = ember.randn(4, 5, requires_grad=True)
    tw = torch.tensor(w.detach().numpy(), requires_grad=True)
    with ember.autocast("cpu"), torch.autocast("cpu", dtype=torch.bfloat16):
        h, th = w * 1.0, tw * 1.0
        assert real(h, op, None, name)  # h.<name>()'s way
        getattr(th, name)()
        assert h.dtype is ember.float32
        (h * h).sum().backward(), (th * th).sum().backward()
    np.testing.assert_allclose(h.detach().numpy(), th.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6)


@pytest.mark.fake_kernels
def test_a_gpu_relu_in_place_under_autocast_is_one_kernel_into_the_tensor(fake_cuda, monkeypatch):
    """ResNet's ``ReLU(inplace=True)`` on bfloat16 activations under autocast on the fake GPU:
    the ReLU kernel writes the tensor's own array (no result array copied back), and the values
    and gradients are the CPU's."""
    monkeypatch.setattr(I, "commit", _refuse_copy(I.commit))
    results = []
    for device in ("cpu", "cuda"):
        w = ember.tensor(np.linspace(-2, 2, 24).reshape(4, 6), device=device, requires_grad=True)
        with ember.autocast(device):
            h = w.to(ember.bfloat16) * 1.0
            array = h._data
            h.relu_()
            assert h._data is array
            (h.float() ** 2).sum().backward()
        results.append((h.detach().float().cpu().numpy(), w.grad.cpu().numpy()))
    for got, want in zip(*results):
        np.testing.assert_array_equal(got, want)


def _refuse_copy(commit):
    def checked(x, result, name):  # the usual way: a result array copied into x's
        assert result._data is x._data, f"{name}: a result array was copied back"
        return commit(x, result, name)

    return checked
