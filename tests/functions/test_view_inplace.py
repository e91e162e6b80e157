"""In-place view methods (t_, transpose_, swapdims_, swapaxes_, squeeze_, unsqueeze_) against
torch: the tensor's values, shape, strides and version afterwards, and gradients through it."""

import numpy as np
import pytest
import torch

import ember

# (method, args, input shape)
CASES = [
    ("t_", (), (2, 3)),
    ("t_", (), (3,)),
    ("transpose_", (0, 2), (2, 3, 4)),
    ("transpose_", (-1, 0), (2, 3)),
    ("swapdims_", (1, 2), (2, 3, 4)),
    ("swapaxes_", (0, 1), (2, 3)),
    ("squeeze_", (), (1, 3, 1)),
    ("squeeze_", (0,), (1, 3, 1)),
    ("squeeze_", (1,), (1, 3, 1)),
    ("unsqueeze_", (0,), (2, 3)),
    ("unsqueeze_", (-1,), (2, 3)),
]
IDS = [f"{m}{a}-{s}" for m, a, s in CASES]


@pytest.mark.parametrize("method, args, shape", CASES, ids=IDS)
def test_values_shape_strides_version_as_torch(method, args, shape):
    data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    t, e = torch.tensor(data), ember.tensor(data)
    tv, ev = t._version, e._version[0]
    assert getattr(e, method)(*args) is e
    getattr(t, method)(*args)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride()
    assert e._version[0] - ev == t._version - tv


@pytest.mark.parametrize("method, args, shape", CASES, ids=IDS)
def test_gradients_through_the_changed_tensor_as_torch(method, args, shape):
    data = np.random.default_rng(0).standard_normal(shape)
    grads = []
    for mod in (torch, ember):
        a = mod.tensor(data, requires_grad=True)
        b = a * 2
        getattr(b, method)(*args)
        w = mod.tensor(np.arange(b.numel(), dtype=np.float64).reshape(tuple(b.shape)))
        (b * w).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])


def test_writes_after_t_reach_the_same_storage_as_torch():
    out = []
    for mod in (torch, ember):
        x = mod.arange(6.0).reshape(2, 3)
        x.t_()
        x[0, 1] = 100.0
        out.append(x.t().numpy().copy())
    np.testing.assert_array_equal(out[1], out[0])


def test_leaf_that_requires_grad_is_refused():
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        torch.ones(2, 3, requires_grad=True).t_()
    with pytest.raises(
        ember.AutogradError, match=r"t_: a leaf tensor that requires grad \(shape \(2, 3\)\)"
    ):
        ember.ones(2, 3, requires_grad=True).t_()


def test_t_of_3d_is_refused_as_torch():
    with pytest.raises(RuntimeError, match="expects a tensor with <= 2 dimensions"):
        torch.zeros(2, 2, 2).t_()
    with pytest.raises(
        ember.ShapeError, match="t: expects a tensor with <= 2 dimensions, but got 3-D"
    ):
        ember.zeros(2, 2, 2).t_()
