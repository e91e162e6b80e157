"""Comparisons, NaN/Inf tests, isclose/allclose/equal: op table plus PyTorch parity."""

import numpy as np
import pytest
import torch

import ember

from .harness import OpCase, generate

NAN, INF = float("nan"), float("inf")


def with_ties(shapes):
    """Small integers as floats, so equality actually happens."""
    return lambda rng: [rng.integers(-2, 3, s).astype(np.float64) for s in shapes]


def specials(shape):
    vals = np.array([0.0, 1.0, -1.0, NAN, INF, -INF])
    return lambda rng: [rng.choice(vals, shape)]


OPS = {
    "eq": (lambda m, a, b: a == b, np.equal),
    "ne": (lambda m, a, b: a != b, np.not_equal),
    "lt": (lambda m, a, b: a < b, np.less),
    "le": (lambda m, a, b: a <= b, np.less_equal),
    "gt": (lambda m, a, b: a > b, np.greater),
    "ge": (lambda m, a, b: a >= b, np.greater_equal),
    "eq_fn": (lambda m, a, b: m.eq(a, b), np.equal),
    "ne_fn": (lambda m, a, b: m.ne(a, b), np.not_equal),
    "lt_fn": (lambda m, a, b: m.lt(a, b), np.less),
    "le_fn": (lambda m, a, b: m.le(a, b), np.less_equal),
    "gt_fn": (lambda m, a, b: m.gt(a, b), np.greater),
    "ge_fn": (lambda m, a, b: m.ge(a, b), np.greater_equal),
    "greater_method": (lambda m, a, b: a.greater(b), np.greater),
    "less_equal_method": (lambda m, a, b: a.less_equal(b), np.less_equal),
}
CASES = []
for _name, (_fn, _ref) in OPS.items():
    for _shapes in ([(3, 4), (4,)], [(2, 1, 3), (4, 1)], [(), (3,)], [(0, 3), (1,)]):
        CASES.append(OpCase(_name, _fn, _shapes, ref=_ref, make=with_ties(_shapes), grad=False))
CASES += [
    OpCase("eq_T", lambda m, a, b: a == b, [(4, 3), (4, 3)], ref=np.equal, grad=False,
           make=with_ties([(4, 3), (4, 3)]), transpose=True),
    OpCase("lt_scalar", lambda m, a: a < 0.5, [(3, 4)], ref=lambda a: a < 0.5, grad=False),
    OpCase("rgt_scalar", lambda m, a: 0.5 > a, [(3, 4)], ref=lambda a: 0.5 > a, grad=False),
    OpCase("isnan", lambda m, a: m.isnan(a), [(5, 4)], ref=np.isnan, make=specials((5, 4)),
           grad=False),
    OpCase("isinf", lambda m, a: m.isinf(a), [(5, 4)], ref=np.isinf, make=specials((5, 4)),
           grad=False),
    OpCase("isfinite", lambda m, a: m.isfinite(a), [(5, 4)], ref=np.isfinite,
           make=specials((5, 4)), grad=False),
    OpCase("isposinf", lambda m, a: m.isposinf(a), [(5, 4)], ref=np.isposinf,
           make=specials((5, 4)), grad=False),
    OpCase("isneginf", lambda m, a: m.isneginf(a), [(5, 4)], ref=np.isneginf,
           make=specials((5, 4)), grad=False),
    OpCase("isnan_0d", lambda m, a: m.isnan(a), [()], ref=np.isnan, grad=False),
    OpCase("isclose", lambda m, a, b: m.isclose(a, b), [(3, 4), (4,)], ref=np.isclose,
           grad=False),
    OpCase("isclose_tol", lambda m, a, b: m.isclose(a, b, rtol=0.5, atol=0.1), [(3, 4), (3, 4)],
           ref=lambda a, b: np.isclose(a, b, rtol=0.5, atol=0.1), grad=False),
    OpCase("isclose_nan", lambda m, a, b: m.isclose(a, b, equal_nan=True), [(5, 4), (5, 4)],
           ref=lambda a, b: np.isclose(a, b, equal_nan=True), grad=False,
           make=lambda rng: specials((5, 4))(rng) + specials((5, 4))(rng)),
]  # fmt: skip
generate(globals(), CASES)


def test_comparisons_promote_like_torch():
    i = [1, 2, 3]
    for fn in (
        lambda m: m.tensor(i) < 2.5,
        lambda m: m.tensor(i, dtype=m.uint8) > 1,
        lambda m: m.tensor(i, dtype=m.int8) == m.tensor(i, dtype=m.uint8),
        lambda m: m.tensor([True, False]) == 1,
        lambda m: m.tensor([0.1], dtype=m.float16) == m.tensor([0.1], dtype=m.float64),
        lambda m: m.tensor(i) >= m.tensor(2.5, dtype=m.float64),
    ):
        e, t = fn(ember), fn(torch)
        assert e.dtype is ember.bool
        assert e.tolist() == t.tolist()


def test_out_of_range_int_scalars_wrap_like_torch():
    x, tx = ember.tensor([1, 2, 3], dtype=ember.uint8), torch.tensor([1, 2, 3], dtype=torch.uint8)
    for fn in (lambda t: t > -1, lambda t: t + 300, lambda t: t == 256, lambda t: t * 1000):
        assert fn(x).tolist() == fn(tx).tolist()


def test_operators_with_non_numbers():
    x = ember.tensor([1, 2])
    assert (x == None) is False  # noqa: E711  (PyTorch gives False)
    assert (x != "a") is True
    with pytest.raises(TypeError):
        x < "a"  # noqa: B015
    assert x in [x]
    assert len({x, x}) == 1  # tensors stay hashable by identity


def test_comparisons_have_no_gradient():
    x = ember.ones(2, requires_grad=True)
    y = x > 0
    assert not y.requires_grad and y.dtype is ember.bool


def test_isclose_and_allclose_and_equal():
    a = ember.tensor([1.0, 2.0, NAN])
    b = ember.tensor([1.0 + 1e-6, 2.1, NAN])
    ta, tb = torch.tensor(a.numpy()), torch.tensor(b.numpy())
    assert ember.isclose(a, b).tolist() == torch.isclose(ta, tb).tolist()
    assert (
        ember.isclose(a, b, equal_nan=True).tolist()
        == torch.isclose(ta, tb, equal_nan=True).tolist()
    )
    assert ember.allclose(a[:1], b[:1]) is True
    assert ember.allclose(a, b) is False
    assert ember.allclose(a, a, equal_nan=True) is True
    assert ember.equal(ember.tensor([1, 2]), ember.tensor([1.0, 2.0])) is True
    assert ember.equal(ember.ones(2), ember.ones(1, 2)) is False
    assert ember.equal(a, a) is False  # NaN != NaN
    ints = ember.tensor([1, 2])
    assert ember.isclose(ints, ints).tolist() == [True, True]
    bools = ember.tensor([True, False])
    assert ember.isclose(bools, bools).tolist() == [True, True]
    assert ember.isclose(ember.tensor([1.0]), 1.0).tolist() == [True]


def test_isclose_dtype_mismatch():
    with pytest.raises(ember.DTypeError, match="Float did not match Double"):
        ember.isclose(ember.ones(2), ember.ones(2, dtype=ember.float64))


def test_compare_broadcast_error_names_shapes_and_dimension():
    with pytest.raises(ember.ShapeError, match=r"lt: shapes \(2, 3\) and \(4,\) .*dimension -1"):
        _ = ember.ones(2, 3) < ember.ones(4)
