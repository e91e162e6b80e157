"""In-place elementwise ops: values, storage, versions, autograd through them, PyTorch parity."""

import numpy as np
import pytest
import torch

import ember
from ember.functions.elementwise_inplace import TENSOR_METHODS

UNARY = [n for n in TENSOR_METHODS if n.endswith("_") and not n.startswith("__")]
UNARY = [n for n in UNARY if n not in ("masked_fill_", "round_") and "bitwise" not in n]
UNARY_FLOAT = [n for n in UNARY if not n.startswith("logical")]
BINARY_ARGS = {
    "floor_divide_": 0.7,
    "remainder_": 0.7,
    "fmod_": 0.7,
    "atan2_": 0.7,
    "arctan2_": 0.7,
    "clamp_min_": 0.4,
    "clamp_max_": 0.4,
    "logical_and_": 1.0,
    "logical_or_": 0.0,
    "logical_xor_": 1.0,
}
UNARY_FLOAT = [n for n in UNARY_FLOAT if n not in BINARY_ARGS]


def _args(name, m=ember):
    if name not in BINARY_ARGS:
        return ()
    v = BINARY_ARGS[name]
    return (m.tensor(v, dtype=m.float64),) if "tan2" in name or "logical" in name else (v,)


def _out_of_place(m, name, x, *args):
    base = {"absolute_": "abs", "negative_": "neg", "fix_": "trunc"}.get(name, name[:-1])
    base = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arctan2": "atan2"}.get(
        base, base
    )
    return getattr(m, base)(x, *args)


@pytest.mark.parametrize("name", UNARY_FLOAT + list(BINARY_ARGS))
def test_inplace_matches_out_of_place_and_keeps_storage(name):
    x = ember.tensor([[0.3, 0.6], [0.9, 0.45]], dtype=ember.float64)
    want = _out_of_place(ember, name, x, *_args(name))
    ptr, version = x.data_ptr(), x._version[0]
    out = getattr(x, name)(*_args(name))
    assert out is x and x.data_ptr() == ptr and x._version[0] == version + 1
    np.testing.assert_allclose(x.numpy(), want.numpy().astype(np.float64))
    tx = torch.tensor([[0.3, 0.6], [0.9, 0.45]], dtype=torch.float64)
    getattr(tx, name)(*_args(name, torch))
    np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", [n for n in UNARY_FLOAT + list(BINARY_ARGS)
                                  if not n.startswith(("logical", "floor_divide"))])  # fmt: skip
def test_inplace_gradients_match_torch(name):
    data = np.array([[0.3, -0.6], [0.9, 0.45]]) if "log" not in name else np.array([[0.3, 0.6]])
    if name in ("sqrt_", "rsqrt_", "log_", "log2_", "log10_"):
        data = np.abs(data) + 0.1
    grads = []
    for m in (ember, torch):
        a = m.tensor(data, requires_grad=True)
        x = a * 1.5
        getattr(x, name)(*_args(name, m))
        (x * m.tensor(data + 2)).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)


def test_inplace_on_a_view_writes_through_and_differentiates():
    a = ember.ones(2, 3, requires_grad=True)
    ta = torch.ones(2, 3, requires_grad=True)
    for m, leaf in ((ember, a), (torch, ta)):
        x = leaf * 2
        x.t().sigmoid_()
        (x * m.arange(6.0).reshape(2, 3)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-6)
    x = ember.zeros(2, 3)
    x.t().exp_()
    assert x.tolist() == [[1.0] * 3] * 2


def test_inplace_refuses_leaves_that_require_grad():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(ember.AutogradError, match="exp_: a leaf tensor that requires grad"):
        x.exp_()
    with ember.no_grad():
        x.exp_()
    np.testing.assert_allclose(x.detach().numpy(), np.e)


def test_saved_output_modified_in_place_is_detected():
    a = ember.ones(2, requires_grad=True)
    y = a.exp()
    y.relu_()  # exp saved its output, now changed
    with pytest.raises(ember.AutogradError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_result_type_must_fit():
    x = ember.tensor([1, 2])
    with pytest.raises(ember.DTypeError, match="exp_: result type .*float32 can't be cast"):
        x.exp_()
    b = ember.tensor([True, False])
    with pytest.raises(ember.DTypeError, match="bitwise_and_: result type .*int64 can't be cast"):
        b.bitwise_and_(1)


def test_integer_inplace_ops():
    x, tx = ember.tensor([12, -7, 5]), torch.tensor([12, -7, 5])
    for t in (x, tx):
        t //= 2
        t %= 4
        t &= 3
        t |= 8
        t ^= 1
        t.bitwise_not_()
        t.abs_()
        t.neg_()
        t.square_()
    assert x.tolist() == tx.tolist()
    b, tb = ember.tensor([True, False, True]), torch.tensor([True, False, True])
    for t in (b, tb):
        t &= t
        t ^= True
        t.logical_not_()
    assert b.tolist() == tb.tolist()


def test_round_inplace():
    data = [0.5, 1.5, 2.46, -1.25]
    for d in (0, 1):
        x, tx = ember.tensor(data), torch.tensor(data)
        x.round_(decimals=d)
        tx.round_(decimals=d)
        assert x.tolist() == tx.tolist()


def test_masked_fill_inplace_paths():
    mask = ember.tensor([[True, False, True]])
    x = ember.zeros(2, 3)
    assert x.masked_fill_(mask, 2.5) is x
    assert x.tolist() == [[2.5, 0.0, 2.5]] * 2
    x = ember.zeros(2, 3, dtype=ember.int32)
    x.masked_fill_(mask, ember.tensor(1.7))
    assert x.tolist() == [[1, 0, 1]] * 2
    a = ember.ones(2, 3, requires_grad=True)
    ta = torch.ones(2, 3, requires_grad=True)
    v, tv = ember.tensor(3.0, requires_grad=True), torch.tensor(3.0, requires_grad=True)
    for m, leaf, val, msk in ((ember, a, v, mask), (torch, ta, tv, torch.tensor(mask.numpy()))):
        y = leaf * 2
        y.masked_fill_(msk, val)
        (y * m.arange(6.0).reshape(2, 3)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())
    np.testing.assert_allclose(v.grad.numpy(), tv.grad.numpy())
    with pytest.raises(ember.EmberError, match="masked_fill_: .*cannot be broadcast"):
        ember.zeros(3).masked_fill_(ember.tensor([[True], [False]]), 1.0)
    with pytest.raises(ember.DTypeError, match="mask to be a boolean"):
        ember.zeros(3).masked_fill_(ember.zeros(3), 1.0)


def test_functional_inplace_forms():
    x = ember.tensor([-1.0, 2.0])
    assert ember.relu_(x) is x and x.tolist() == [0.0, 2.0]
    ember.exp_(x)
    np.testing.assert_allclose(x.numpy(), [1.0, np.exp(2.0)], rtol=1e-6)
    ember.sigmoid_(x)
    ember.tanh_(x)
    assert x.dtype is ember.float32


def test_no_grad_fast_path_for_low_precision_and_views():
    x = ember.tensor([0.25, 4.0], dtype=ember.bfloat16)
    x.sqrt_()
    assert x.dtype is ember.bfloat16 and x.float().tolist() == [0.5, 2.0]
    y = ember.ones(2, 2)
    y.t().neg_()
    assert y.tolist() == [[-1.0, -1.0], [-1.0, -1.0]]
