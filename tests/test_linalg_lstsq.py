"""ember.linalg.lstsq, pinv and vander against torch.linalg: every field lstsq fills for each
CPU driver (shapes, dtypes, values), for tall, wide and square, batched, broadcast and vector
right-hand sides; gradients of the solution and the residuals; errors."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

DRIVERS = [None, "gels", "gelsy", "gelsd", "gelss"]
SHAPES = [  # (A, B)
    ((5, 3), (5, 2)),
    ((3, 5), (3, 2)),
    ((4, 4), (4, 1)),
    ((2, 5, 3), (2, 5, 2)),
    ((2, 1, 5, 3), (1, 3, 5, 2)),  # batch dims broadcast
    ((5, 3), (5,)),  # a vector right-hand side
    ((2, 5, 3), (2, 5)),  # a batch of vectors
    ((5, 0), (5, 2)),
]


def _pair(shapes, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shapes[0]).astype(dtype)
    b = rng.standard_normal(shapes[1]).astype(dtype)
    return a, b


def _same_result(got, want, rtol):
    assert got._fields == ("solution", "residuals", "rank", "singular_values")
    for field, e, t in zip(got._fields, got, want):
        assert tuple(e.shape) == tuple(t.shape), field
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], field
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_fields_values_and_gradients_match_torch(shapes, driver):
    a, b = _pair(shapes)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ea, eb = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
    want = torch.linalg.lstsq(ta, tb, driver=driver)
    got = ember.linalg.lstsq(ea, eb, driver=driver)
    _same_result(got, want, 1e-9)
    w = np.random.default_rng(1).standard_normal(tuple(want.solution.shape))
    loss_t = (want.solution * torch.tensor(w)).sum() + want.residuals.sum()
    loss_e = (got.solution * ember.tensor(w)).sum() + got.residuals.sum()
    if not loss_t.requires_grad or (driver == "gels" and 0 in shapes[0]):
        return  # torch's gels on an empty A reports zero residuals yet differentiates |B|^2
    loss_t.backward()
    loss_e.backward()
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(eb.grad.numpy(), tb.grad.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss"])
def test_rank_deficient_gives_torch_rank_and_minimum_norm_solution(driver):
    a, b = _pair(((2, 6, 4), (2, 6, 3)))
    a[0, :, 3] = a[0, :, 0] - a[0, :, 1]
    want = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    got = ember.linalg.lstsq(ember.tensor(a), ember.tensor(b), driver=driver)
    _same_result(got, want, 1e-8)
    assert got.rank.tolist() == [3, 4]


def test_rcond_float32_and_empty_rhs_match_torch():
    a = np.diag([1.0, 1e-3, 1e-7]).astype(np.float32)
    b = np.ones((3, 2), np.float32)
    for rcond in (None, 1e-2):
        want = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), rcond=rcond, driver="gelsd")
        got = ember.linalg.lstsq(ember.tensor(a), ember.tensor(b), rcond=rcond, driver="gelsd")
        _same_result(got, want, 1e-5)
    a, b = _pair(((5, 3), (5, 0)))
    _same_result(
        ember.linalg.lstsq(ember.tensor(a), ember.tensor(b)),
        torch.linalg.lstsq(torch.tensor(a), torch.tensor(b)),
        0,
    )


def test_second_order_gradients_match_torch():
    a, b = _pair(((5, 3), (5, 2)))

    def grads(m, a, b):
        x = m.linalg.lstsq(a, b).solution
        (ga,) = m.autograd.grad((x * x).sum(), [a], create_graph=True)
        return m.autograd.grad((ga * ga).sum(), [a, b])

    want = grads(torch, torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True))
    got = grads(ember, ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True))
    for e, t in zip(got, want):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-7, atol=1e-9)


ERRORS = [
    (lambda m: m.linalg.lstsq(m.ones(3, 2), m.ones(4, 1)), r"should match other\.size\(-2\)"),
    (lambda m: m.linalg.lstsq(m.ones(3, 2), m.ones(3, 1), driver="foo"), "should be one of"),
    (lambda m: m.linalg.lstsq(m.ones(3), m.ones(3, 1)), "at least 2 dimensions"),
    (
        lambda m: m.linalg.lstsq(m.ones(3, 2), m.ones(3, 1, dtype=m.float64)),
        "to have the same dtype",
    ),
]


@pytest.mark.parametrize("call, message", ERRORS)
def test_errors_name_lstsq_as_torch(call, message):
    with pytest.raises(RuntimeError, match=message):
        call(torch)
    with pytest.raises(RuntimeError, match=message) as err:
        call(ember)
    assert "linalg.lstsq" in str(err.value)


def test_integer_inputs_are_refused():
    with pytest.raises(RuntimeError, match="float and double"):
        torch.linalg.lstsq(torch.ones(3, 2, dtype=torch.int64), torch.ones(3, 1, dtype=torch.int64))
    with pytest.raises(TypeError, match=r"linalg.lstsq: only float32 and float64.*int64"):
        ember.linalg.lstsq(ember.ones(3, 2, dtype=ember.int64), ember.ones(3, 1, dtype=ember.int64))


PINV = [
    ((4, 3), {}),
    ((2, 3, 5), {}),
    ((4, 4), {"rtol": 0.3}),
    ((4, 4), {"atol": 0.5}),
]


@pytest.mark.parametrize("shape, kwargs", PINV, ids=str)
def test_pinv_values_and_gradients_match_torch(shape, kwargs):
    a = np.random.default_rng(2).standard_normal(shape)
    ta, ea = torch.tensor(a, requires_grad=True), ember.tensor(a, requires_grad=True)
    want, got = torch.linalg.pinv(ta, **kwargs), ember.linalg.pinv(ea, **kwargs)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-12)
    w = np.random.default_rng(3).standard_normal(tuple(want.shape))
    (want * torch.tensor(w)).sum().backward()
    (got * ember.tensor(w)).sum().backward()
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=1e-7, atol=1e-9)


VANDER = [
    (lambda m, x: m.linalg.vander(x), (3,)),
    (lambda m, x: m.linalg.vander(x, N=5), (2, 3)),
    (lambda m, x: m.vander(x, N=1), (3,)),
    (lambda m, x: m.vander(x, N=0), (3,)),
]


@pytest.mark.parametrize("fn, shape", VANDER)
def test_vander_values_dtypes_and_gradients_match_torch(fn, shape):
    a = np.random.default_rng(4).standard_normal(shape)
    a.flat[0] = 0.0  # powers of zero: cumprod's gradient at 0
    ta, ea = torch.tensor(a, requires_grad=True), ember.tensor(a, requires_grad=True)
    want, got = fn(torch, ta), fn(ember, ea)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    for dt in (torch.int64, torch.int8):
        t, e = (
            fn(torch, ta.detach().to(dt)),
            fn(ember, ember.tensor(a).to(getattr(ember, str(dt)[6:]))),
        )
        assert str(e.dtype)[6:] == str(t.dtype)[6:]
    if not want.requires_grad or not want.numel():
        return
    w = np.random.default_rng(5).standard_normal(tuple(want.shape))
    (want * torch.tensor(w)).sum().backward()
    (got * ember.tensor(w)).sum().backward()
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda m: m.vander(m.ones(2, 2)), "one-dimensional"),
        (lambda m: m.vander(m.ones(2), N=-1), "non-negative"),
        (lambda m: m.linalg.vander(m.ones(2), N=1), "greater than 1"),
    ],
)
def test_vander_errors_match_torch(call, message):
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match=message):
            call(m)
