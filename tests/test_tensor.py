"""Tensor properties and Python conversions, against PyTorch 2.13 where it applies."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

import ember

SETUP = (
    "x = T.tensor([[1., 2.5, 3.], [4., 5., 6.]]); s = T.tensor(2.5); i = T.tensor([3, 4]); "
    "b = T.tensor([True]); h = x.half(); bf = T.tensor([1.5], dtype=T.bfloat16); "
    "g = T.ones(2, requires_grad=True); y = g * 2"
)

# expressions whose Python value (after spelling torch as ember) must be the same
SAME_VALUE = [
    "x.shape",
    "x.size()",
    "x.size(1)",
    "x.size(-1)",
    "x.dim()",
    "x.ndim",
    "x.ndimension()",
    "x.numel()",
    "x.nelement()",
    "T.numel(x)",
    "x.dtype",
    "x.device",
    "x.is_leaf",
    "x.requires_grad",
    "x.grad",
    "x.grad_fn",
    "g.is_leaf",
    "y.is_leaf",
    "y.requires_grad",
    "x.T.shape",
    "x.element_size()",
    "x.itemsize",
    "x.nbytes",
    "h.element_size()",
    "x.is_cuda",
    "x.get_device()",
    "x.is_contiguous()",
    "x.T.is_contiguous()",
    "x.stride()",
    "x.T.stride()",
    "x.is_floating_point()",
    "i.is_floating_point()",
    "T.is_floating_point(x)",
    "T.is_tensor(x)",
    "T.is_tensor([1])",
    "s.item()",
    "i[0].item()",
    "b.item()",
    "bf.item()",
    "h[0, 1].item()",
    "x.tolist()",
    "i.tolist()",
    "b.tolist()",
    "h.tolist()",
    "bf.tolist()",
    "s.tolist()",
    "float(s)",
    "int(s)",
    "bool(b)",
    "int(i[1])",
    "complex(s)",
    "len(x)",
    "len(i)",
    "[1, 2, 3, 4, 5][i[0]]",
    "x.data.tolist()",
    "x.data.requires_grad",
    "g.data.requires_grad",
    "g.detach().requires_grad",
    "g.detach().is_leaf",
    "T.zeros(2, 3).size(0)",
    "T.Size([2, 3])",
    "T.Size([2, 3]).numel()",
    "x.shape == (2, 3)",
    "x.shape[1]",
    "x.type()",
    "i.type()",
    "b.type()",
    "h.type()",
    "bf.type()",
    "f'{s}'",
    "f'{s:.3f}'",
    "f'{i[0]:>4}'",
    "x.numpy().dtype",
    "i.numpy().tolist()",
    "np.asarray(x).shape",
    "np.asarray(b).dtype",
    "s.dim()",
    "s.shape",
    "s.numel()",
    "T.ones(0).numel()",
]


def _norm(v):
    if isinstance(v, (torch.Tensor, ember.Tensor)):
        return repr(v).replace("torch", "ember")
    return repr(v).replace("torch", "ember")


@pytest.mark.parametrize("expr", SAME_VALUE)
def test_same_value_as_torch(expr):
    results = []
    for lib in (torch, ember):
        env = {"T": lib, "np": np}
        exec(SETUP, env)
        results.append(_norm(eval(expr, env)))
    assert results[1] == results[0]


@pytest.mark.parametrize(
    "expr, err, match",
    [
        ("x.item()", ember.EmberError, "item: a Tensor with 6 elements cannot be converted"),
        ("float(x)", ember.ShapeError, r"float\(\): only one element tensors can be converted"),
        ("int(i)", ValueError, r"int\(\): only one element tensors"),
        ("bool(i)", ember.EmberError, "Boolean value of Tensor with 2 elements is ambiguous"),
        ("len(s)", ember.EmberError, r"len\(\) of a 0-d tensor"),
        ("[1][x[0, 0]]", ember.EmberError, "only integer tensors of a single element"),
        ("g.numpy()", ember.AutogradError, r"can't call numpy\(\) on a tensor that requires grad"),
        (
            "x.size(2)",
            ember.EmberIndexError,
            r"size: dimension out of range .* \[-2, 1\], but got 2",
        ),
        ("y.requires_grad_(False)", ember.AutogradError, "only change requires_grad flags of leaf"),
        ("i.requires_grad_()", ember.DTypeError, "only Tensors of floating point dtype"),
    ],
)
def test_tensor_errors(expr, err, match):
    env = {"T": ember, "np": np}
    exec(SETUP, env)
    with pytest.raises(err, match=match):
        eval(expr, env)


def test_grad_property_and_setter():
    w = ember.ones(2, requires_grad=True)
    (w * 3).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]
    assert w.grad.grad_fn is None and not w.grad.requires_grad
    w.grad = None
    assert w.grad is None
    w.grad = ember.zeros(2)
    assert w.grad.tolist() == [0.0, 0.0]
    with pytest.raises(ember.EmberError, match=r"assigned grad has shape \(3,\)"):
        w.grad = ember.zeros(3)
    with pytest.raises(ember.DTypeError, match="assigned grad must be a Tensor"):
        w.grad = [1.0, 2.0]


def test_non_leaf_grad_warns():
    y = ember.ones(2, requires_grad=True) * 2
    with pytest.warns(UserWarning, match="not a leaf"):
        assert y.grad is None


def test_grad_fn_names_the_op():
    y = ember.ones(2, requires_grad=True) * 2
    assert y.grad_fn is not None and y.grad_fn.name() == "MulBackward0"
    assert "MulBackward0" in repr(y.grad_fn)


def test_data_shares_storage_without_history():
    w = ember.ones(2, requires_grad=True)
    d = w.data
    assert not d.requires_grad and d.is_leaf
    d.numpy()[0] = 5
    assert w.detach().tolist() == [5.0, 1.0]
    w.data = ember.zeros(2)
    assert w.detach().tolist() == [0.0, 0.0] and w.requires_grad


def test_detach_shares_storage_and_version():
    w = ember.ones(2, requires_grad=True)
    d = w.detach()
    d.numpy()[1] = 7
    assert w.detach().tolist() == [1.0, 7.0]
    assert d._version is w._version


def test_numpy_shares_memory_and_tolist_types():
    x = ember.zeros(3)
    x.numpy()[0] = 1
    assert x.tolist() == [1.0, 0.0, 0.0]
    assert type(ember.tensor([1]).tolist()[0]) is int
    assert type(ember.tensor([1.5], dtype=ember.bfloat16).tolist()[0]) is float
    assert type(ember.tensor(True).item()) is bool


def test_tensor_constructor_legacy_forms():
    assert ember.Tensor().shape == (0,)
    assert ember.Tensor(2, 3).shape == (2, 3)
    assert ember.Tensor(ember.Size([4])).shape == (4,)
    t = ember.Tensor([1, 2])
    assert t.dtype is ember.float32 and t.tolist() == [1.0, 2.0]
    assert ember.Tensor(np.arange(2)).dtype is ember.float32
    with pytest.raises(ember.ShapeError, match="negative dimension"):
        ember.Tensor(-1)


def test_pickle_roundtrip():
    x = ember.tensor([[1.0, 2.0]], requires_grad=True)
    y = pickle.loads(pickle.dumps(x))
    assert y.tolist() == x.tolist() and y.requires_grad and y.dtype is ember.float32


def test_hash_and_identity():
    a, b = ember.ones(1), ember.ones(1)
    assert len({a, b}) == 2
    assert {a: 1}[a] == 1


def test_retain_grad_and_hooks():
    x = ember.ones(2, requires_grad=True)
    y = x * 2
    y.retain_grad()
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    y.sum().backward()
    assert y.grad.tolist() == [1.0, 1.0]
    assert seen == [[2.0, 2.0]]


def test_deepcopy_keeps_device_requires_grad_and_grad(device):
    """As PyTorch's: a copy on the tensor's device (a module's buffers too), ``requires_grad``
    and a copy of ``.grad``; a non-leaf refuses, naming its history."""
    import copy

    w = ember.ones(2, 3, device=device, requires_grad=True)
    (w * 2).sum().backward()
    c = copy.deepcopy(w)
    assert c.device == w.device and c.requires_grad and c.is_leaf
    assert c.grad is not w.grad and c.grad.device == w.device
    assert c.grad.tolist() == [[2.0] * 3] * 2 and c._data is not w._data
    bn = copy.deepcopy(ember.nn.BatchNorm1d(3).to(device))
    assert {t.device for t in (*bn.parameters(), *bn.buffers())} == {w.device}
    with pytest.raises(ember.AutogradError, match=r"deepcopy: only tensors .* \(2, 3\) tensor "
                       r"has grad_fn=MulBackward0"):  # fmt: skip
        copy.deepcopy(w * 2)
