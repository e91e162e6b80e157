"""Reductions beyond the op table: gradients at ties and zeros against PyTorch, return types,
static-shape rules and error messages."""

import numpy as np
import pytest
import torch

import ember

TIES = np.array([[1.0, 3.0, 3.0, -2.0, -2.0], [0.5, 0.5, 0.5, 0.1, 0.2]])


def grads_match(fn, *arrays, atol=1e-12):
    """Values, dtypes and input gradients of ``fn(module, *tensors)`` agree with PyTorch."""
    ex = [ember.tensor(a, requires_grad=True) for a in arrays]
    tx = [torch.tensor(a, requires_grad=True) for a in arrays]
    eo, to = fn(ember, *ex), fn(torch, *tx)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), atol=atol)
    assert str(eo.dtype).split(".")[-1] == str(to.dtype).split(".")[-1]
    w = np.random.default_rng(3).standard_normal(tuple(to.shape))
    eo.backward(ember.tensor(w))
    to.backward(torch.tensor(w))
    for e, t in zip(ex, tx):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), atol=atol)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, a: m.max(a),
        lambda m, a: m.min(a),
        lambda m, a: m.amax(a, 1),
        lambda m, a: m.amin(a, 1, keepdim=True),
        lambda m, a: m.amax(a, (0, 1)),
        lambda m, a: m.max(a, 1).values,
        lambda m, a: m.min(a, 1, keepdim=True).values,
        lambda m, a: m.norm(a, float("inf"), 1),
        lambda m, a: m.norm(a, float("-inf")),
    ],
    ids=["max", "min", "amax", "amin_keep", "amax_all", "max_dim", "min_dim", "inf", "-inf"],
)
def test_tie_gradients_match_torch(fn):
    grads_match(fn, TIES)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, a: m.norm(a),
        lambda m, a: m.norm(a, dim=1),
        lambda m, a: m.norm(a, 1, 1),
        lambda m, a: m.norm(a, 3, 1),
        lambda m, a: m.std(a, 1),
        lambda m, a: m.prod(a, 1),
        lambda m, a: m.prod(a),
        lambda m, a: m.cumprod(a, 1),
    ],
    ids=["norm", "norm_dim", "norm1", "norm3", "std", "prod_dim", "prod_all", "cumprod"],
)
def test_gradients_at_zero_match_torch(fn):
    grads_match(fn, np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 2.0], [3.0, -1.0, 2.0]]))


def test_prod_second_order_with_zeros():
    for a in (np.array([0.0, 2.0, 3.0]), np.array([0.0, 0.0, 3.0, 4.0])):
        x = ember.tensor(a, requires_grad=True)
        assert ember.autograd.gradgradcheck(lambda t: t.prod(), (x,))
        t = torch.tensor(a, requires_grad=True)
        (gt,) = torch.autograd.grad(t.prod(), t, create_graph=True)
        (ge,) = ember.autograd.grad(x.prod(), x, create_graph=True)
        w = np.arange(1.0, a.size + 1)
        (hh,) = torch.autograd.grad((gt * torch.tensor(w)).sum(), t)
        (he,) = ember.autograd.grad((ge * ember.tensor(w)).sum(), x)
        np.testing.assert_allclose(he.numpy(), hh.numpy())


def test_cumprod_large_falls_back():
    from ember.ops import reduce as R

    x = ember.tensor(np.random.default_rng(0).uniform(0.5, 1.5, (3, 7)), requires_grad=True)
    old = R.CUMPROD_EXACT_LIMIT
    R.CUMPROD_EXACT_LIMIT = 10
    try:
        assert ember.autograd.gradcheck(lambda t: t.cumprod(1), (x,))
    finally:
        R.CUMPROD_EXACT_LIMIT = old


def test_max_returns_named_tuple():
    x = ember.tensor([[1.0, 5.0], [7.0, 2.0]])
    out = x.max(1)
    values, indices = out
    assert out.values is values and out.indices is indices
    assert indices.dtype == ember.int64 and values.dtype == ember.float32
    assert type(out).__name__ == "max" and type(x.min(0)).__name__ == "min"
    assert x.max(1, keepdim=True).values.shape == (2, 1)


def test_max_with_other_tensor_is_maximum():
    if not hasattr(ember, "maximum"):
        pytest.skip("ember.maximum not available")
    a, b = ember.tensor([1.0, 5.0]), ember.tensor([3.0, 2.0])
    assert a.max(b).tolist() == [3.0, 5.0]
    assert ember.min(a, b).tolist() == [1.0, 2.0]


def test_result_dtypes():
    i32 = ember.tensor([1, 2, 3], dtype=ember.int32)
    b = ember.tensor([True, False])
    assert i32.sum().dtype == ember.int64 and b.sum().dtype == ember.int64
    assert i32.prod().dtype == ember.int64 and i32.cumsum(0).dtype == ember.int64
    assert i32.max().dtype == ember.int32 and i32.argmax().dtype == ember.int64
    assert i32.sum(dtype=ember.float64).dtype == ember.float64
    assert b.all().dtype == ember.bool and ember.tensor([1.5]).any().dtype == ember.bool
    assert ember.tensor([1, 2], dtype=ember.uint8).all().dtype == ember.uint8
    assert ember.logsumexp(i32, 0).dtype == ember.float32
    assert ember.ones(2, dtype=ember.float64).norm().dtype == ember.float64


def test_integer_sum_does_not_overflow_int32():
    x = ember.tensor([2**31 - 1, 2**31 - 1], dtype=ember.int32)
    assert x.sum().item() == 2 * (2**31 - 1)


def test_bad_dims_name_the_op_and_range():
    x = ember.ones(2, 3)
    for name, call in [
        ("sum", lambda: x.sum(2)),
        ("mean", lambda: x.mean((0, -3))),
        ("prod", lambda: x.prod(5)),
        ("max", lambda: x.max(2)),
        ("amax", lambda: x.amax(-3)),
        ("argmin", lambda: x.argmin(2)),
        ("var", lambda: x.var(3)),
        ("logsumexp", lambda: x.logsumexp(2)),
        ("norm", lambda: x.norm(dim=2)),
        ("cumsum", lambda: x.cumsum(2)),
        ("all", lambda: x.all(2)),
    ]:
        with pytest.raises(IndexError, match=rf"{name}: dimension out of range .*\[-2, 1\]"):
            call()
    with pytest.raises(RuntimeError, match="sum: dim 0 appears multiple times"):
        x.sum((0, -2))


def test_dtype_errors():
    i = ember.tensor([1, 2])
    with pytest.raises(TypeError, match=r"mean\(\): could not infer output dtype.*int64"):
        i.mean()
    with pytest.raises(TypeError, match="var: std and var only support floating point"):
        i.std()
    with pytest.raises(TypeError, match="norm: expected a floating point tensor"):
        i.norm()
    assert i.mean(dtype=ember.float32).item() == 1.5


def test_empty_reduction_errors():
    e = ember.zeros(0, 3)
    with pytest.raises(RuntimeError, match=r"^max\(\): Expected reduction dim to be specified"):
        e.max()
    with pytest.raises(IndexError, match=r"amin\(\): Expected reduction dim 0 to have non-zero"):
        e.amin(0)
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero"):
        e.max(0)
    with pytest.raises(RuntimeError, match=r"argmax\(\): Expected reduction dim"):
        e.argmax()
    assert e.amax(1).shape == (0,)
    assert np.isnan(e.mean().item()) and e.sum().item() == 0 and e.prod().item() == 1


def test_degrees_of_freedom():
    assert np.isnan(ember.tensor([1.0]).var().item())
    assert (
        torch.tensor([1.0, 2.0]).var(correction=2).item()
        == ember.tensor([1.0, 2.0]).var(correction=2).item()
    )


def test_infer_matches_forward():
    from ember.ops import reduce as R
    from ember.ops.base import Spec, apply

    x = ember.randn(2, 3, 4)
    for op in [
        R.Sum((0, 2), True),
        R.Prod(1, False),
        R.Amax((1,), False, True),
        R.SelectArg(2, True),
        R.ArgReduce(None, True),
        R.ArgReduce(1, False, True),
        R.Cumsum(1, True),
        R.Cumprod(0),
        R.AllAny((0,), True, True),
    ]:
        out = apply(op, x)
        spec = op.infer(Spec(tuple(x.shape), x.dtype))
        assert spec.shape == tuple(out.shape) and spec.dtype == out.dtype, op


def test_logsumexp_infinities():
    x = ember.tensor([[np.inf, 1.0], [-np.inf, -np.inf], [np.nan, 1.0]])
    t = torch.tensor(x.numpy())
    np.testing.assert_array_equal(x.logsumexp(1).numpy(), t.logsumexp(1).numpy())
