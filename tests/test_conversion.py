"""``to()`` in all its forms, ``type()``, the casting methods, clone/contiguous/detach."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

SETUP = (
    "x = T.tensor([[1., 2.5, -3.7], [4., 5., 6.]]); i = T.tensor([3, 4]); "
    "o = T.ones(1, dtype=T.float64)"
)

CONVERSIONS = [
    "x.to(T.float64)",
    "x.to('cpu')",
    "x.to('cpu', T.float64)",
    "x.to(device='cpu', dtype=T.int32)",
    "x.to(i)",
    "x.to(T.device('cpu'))",
    "x.to(T.float64, copy=True)",
    "x.to(float)",
    "x.to(int)",
    "x.to(dtype=T.float16)",
    "x.to(T.float64, False, True)",
    "x.to('cpu', T.int8, False, True)",
    "x.to(o)",
    "x.to(tensor=o)",
    "x.to(dtype=T.bool)",
    "x.to(T.bfloat16)",
    "i.to(T.float32)",
    "x.float()",
    "x.double()",
    "x.half()",
    "x.bfloat16()",
    "x.long()",
    "x.int()",
    "x.bool()",
    "x.short()",
    "x.char()",
    "x.byte().tolist()",
    "i.float()",
    "i.bool()",
    "x.type(T.DoubleTensor)",
    "x.type(T.float64)",
    "x.type('torch.DoubleTensor')",
    "x.type(T.IntTensor).type()",
    "x.type(T.LongTensor)",
    "x.type(T.int64)",
    "x.cpu()",
    "x.clone()",
    "x.detach()",
    "x.contiguous()",
    "x.T.contiguous().is_contiguous()",
    "x.T.contiguous().tolist()",
    "T.tensor([1e10, -1e10]).to(T.float16)",
    "T.tensor([1.5, 2.5, -0.5]).to(T.int64)",
    "T.tensor([300, -1]).to(T.uint8)",
    "T.tensor([0.1, 3.14159]).bfloat16().float()",
]


def _norm(v) -> str:
    return repr(v).replace("torch", "ember")


@pytest.mark.parametrize("expr", CONVERSIONS)
@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_conversion_matches_torch(expr):
    out = []
    for lib in (torch, ember):
        env = {"T": lib, "np": np}
        exec(SETUP, env)
        out.append(_norm(eval(expr, env)))
    assert out[1] == out[0]


@pytest.mark.parametrize(
    "expr, same",
    [
        ("x.to(T.float32)", True),
        ("x.to('cpu')", True),
        ("x.to(x)", True),
        ("x.to()", True),
        ("x.float()", True),
        ("x.type(T.float32)", True),
        ("x.type(T.FloatTensor)", True),
        ("x.cpu()", True),
        ("x.contiguous()", True),
        ("x.to(device=None, dtype=None)", True),
        ("x.to(T.float32, copy=True)", False),
        ("x.to('cpu', non_blocking=True)", True),
        ("x.clone()", False),
        ("x.detach()", False),
        ("x.double()", False),
    ],
)
def test_returns_self_when_nothing_changes(expr, same):
    for lib in (torch, ember):
        env = {"T": lib}
        exec(SETUP, env)
        assert (eval(expr, env) is env["x"]) == same


def test_conversions_keep_autograd():
    w = ember.tensor([1.0, 2.0], requires_grad=True)
    y = w.to(ember.float64)
    assert y.requires_grad and y.grad_fn is not None and y.dtype is ember.float64
    (y * y).sum().backward()
    assert w.grad.dtype is ember.float32 and w.grad.tolist() == [2.0, 4.0]
    w.grad = None
    c = w.clone()
    assert c.grad_fn is not None
    (c * 3).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]
    assert w.half().grad_fn is not None
    assert w.long().grad_fn is None and not w.long().requires_grad
    d = w.detach()
    assert d.grad_fn is None and not d.requires_grad


def test_clone_has_own_storage():
    x = ember.ones(2)
    c = x.clone()
    c.numpy()[0] = 5
    assert x.tolist() == [1.0, 1.0]
    assert ember.clone(x).tolist() == [1.0, 1.0]


def test_contiguous_copy_is_differentiable():
    w = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    c = w.T.contiguous()
    assert c.is_contiguous() and c.tolist() == [[1.0, 3.0], [2.0, 4.0]]
    (c * ember.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert w.grad.tolist() == [[1.0, 3.0], [2.0, 4.0]]


@pytest.mark.parametrize(
    "expr, err, match",
    [
        ("x.to('float64')", ember.DeviceError, "unknown device type 'float64'"),
        ("x.to([1])", TypeError, "to: expected a dtype, a device or a tensor, got list"),
        ("x.to(T.float64, bad=1)", TypeError, r"to: unexpected keyword arguments \['bad'\]"),
        ("x.type('ember.FooTensor')", ember.DTypeError, "type: invalid type 'ember.FooTensor'"),
        ("x.to('cuda')", ember.DeviceError, "cuda is not available"),
        ("x.cuda()", ember.DeviceError, "cuda is not available"),
    ],
)
def test_conversion_errors(expr, err, match):
    if ember.cuda.is_available() and "cuda" in expr:
        pytest.skip("a GPU is present")
    env = {"T": ember}
    exec(SETUP, env)
    with pytest.raises(err, match=match):
        eval(expr, env)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_float64_into_16_bits_rounds_as_pytorch(device, name):
    """Through float32 (two roundings), as PyTorch converts: ``.to``, ``copy_``, and a
    gradient flowing back from a float64 use of a 16-bit tensor."""
    bits = 11 if name == "float16" else 8
    ties = [1 + 2.0**-bits, -(1 + 3 * 2.0**-bits), 3 + 2.0 ** (1 - bits)]
    vals = np.array([v + np.sign(v) * 2.0**-40 for v in ties] + ties)
    want = torch.from_numpy(vals).to(getattr(torch, name)).float().numpy()
    half = getattr(ember, name)
    x = ember.from_numpy(vals.copy()).to(device)
    got = [x.to(half), ember.zeros(len(vals), dtype=half, device=device).copy_(x)]
    for t in got:
        assert t.dtype is half and np.array_equal(t.float().cpu().numpy(), want)
    w = ember.zeros(len(vals), dtype=half, device=device, requires_grad=True)
    (w.double() * x).sum().backward()
    tw = torch.zeros(len(vals), dtype=getattr(torch, name), requires_grad=True)
    (tw.double() * torch.from_numpy(vals)).sum().backward()
    assert np.array_equal(w.grad.float().cpu().numpy(), tw.grad.float().numpy())


_FROM_NUMBERS = {  # a float64 number into a 16-bit tensor, each way; ``lib`` is ember or torch
    "tensor": lambda lib, d, v: lib.tensor([v], dtype=d),
    "tensor of float64 values": lambda lib, d, v: lib.tensor(np.array([v]), dtype=d),
    "full": lambda lib, d, v: lib.full((1,), v, dtype=d),
    "fill_": lambda lib, d, v: lib.zeros(1, dtype=d).fill_(v),
    "setitem": lambda lib, d, v: _set(lib.zeros(1, dtype=d), v),
    "times a Python float": lambda lib, d, v: lib.ones(1, dtype=d) * v,
}


def _set(t, v):
    t[0] = v
    return t


@pytest.mark.parametrize("how", sorted(_FROM_NUMBERS))
@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_a_python_float_into_16_bits_rounds_as_pytorch(how, name):
    bits = 11 if name == "float16" else 8
    for v in (1 + 2.0**-bits + 2.0**-40, -(3 + 2.0 ** (1 - bits) + 2.0**-45)):
        got = _FROM_NUMBERS[how](ember, getattr(ember, name), v)
        want = _FROM_NUMBERS[how](torch, getattr(torch, name), v)
        assert got.dtype is getattr(ember, name) and got.item() == want.item(), (v, got, want)
