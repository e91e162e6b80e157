"""Matrix products: error messages, result dtypes, and the infer rules used by static graphs."""

import numpy as np
import pytest
import torch

import ember
from ember.ops import linalg as L
from ember.ops.base import Spec


def test_mm_errors():
    with pytest.raises(
        ValueError,
        match=r"mm: shapes \(64, 1000\) and \(100, 10\) cannot be "
        r"multiplied \(1000 != 100\)",
    ):
        ember.mm(ember.ones(64, 1000), ember.ones(100, 10))
    with pytest.raises(ValueError, match=r"mm: both arguments must be 2-D.*\(3,\) and \(3, 2\)"):
        ember.mm(ember.ones(3), ember.ones(3, 2))


@pytest.mark.parametrize(
    "sa,sb,msg",
    [
        ((2, 3), (4,), r"matmul: shapes \(2, 3\) and \(4,\) cannot be multiplied \(3 != 4\)"),
        ((3,), (4, 2), r"matmul: shapes \(3,\) and \(4, 2\) cannot be multiplied \(3 != 4\)"),
        (
            (2, 2, 3),
            (4, 3, 5),
            r"matmul: shapes \(2, 2, 3\) and \(4, 3, 5\) cannot be multiplied: "
            r"batch dimensions \(2,\) and \(4,\) do not broadcast",
        ),
        ((), (3,), r"matmul: both arguments need at least 1 dimension, got \(\) and \(3,\)"),
    ],
)
def test_matmul_errors(sa, sb, msg):
    with pytest.raises(ValueError, match=msg):
        ember.matmul(ember.ones(*sa), ember.ones(*sb))
    with pytest.raises(ValueError, match=msg):  # the same message from infer (static graphs)
        L.MATMUL.infer(Spec(sa, ember.float32), Spec(sb, ember.float32))


def test_bmm_dot_outer_errors():
    with pytest.raises(
        ValueError,
        match=r"bmm: shapes \(2, 2, 3\) and \(3, 3, 4\) have "
        r"different batch sizes \(2 != 3\)",
    ):
        ember.bmm(ember.ones(2, 2, 3), ember.ones(3, 3, 4))
    with pytest.raises(
        ValueError,
        match=r"bmm: shapes \(2, 2, 3\) and \(2, 4, 4\) cannot be "
        r"multiplied \(3 != 4\)",
    ):
        ember.bmm(ember.ones(2, 2, 3), ember.ones(2, 4, 4))
    with pytest.raises(ValueError, match=r"bmm: both arguments must be 3-D.*\(2, 3\)"):
        ember.bmm(ember.ones(2, 3), ember.ones(2, 3, 4))
    with pytest.raises(ValueError, match=r"dot: shapes \(2,\) and \(3,\) have different"):
        ember.dot(ember.ones(2), ember.ones(3))
    with pytest.raises(ValueError, match=r"dot: both arguments must be 1-D.*\(2, 2\) and \(2,\)"):
        ember.dot(ember.ones(2, 2), ember.ones(2))
    with pytest.raises(ValueError, match=r"outer: both arguments must be 1-D"):
        ember.outer(ember.ones(2, 2), ember.ones(2))
    with pytest.raises(ValueError, match=r"addmm: input of shape \(3, 3\) does not broadcast"):
        ember.addmm(ember.ones(3, 3), ember.ones(2, 4), ember.ones(4, 3))


@pytest.mark.parametrize(
    "eq,shapes,msg",
    [
        (
            "ij,jk",
            [(2, 3), (4, 4)],
            r"subscript j has size 4 for operand 1.*previously seen size 3",
        ),
        ("ij,jk", [(2, 3)], r"fewer operands were provided \(1\) than specified"),
        ("ij", [(2, 3), (3,)], r"more operands"),
        (
            "ij,jk",
            [(2, 3), (3, 4, 2)],
            r"number of subscripts in the equation \(2\) does not "
            r"match the number of dimensions \(3\) for operand 1",
        ),
        ("ij,jk->il", [(2, 3), (3, 4)], r"output subscript l does not appear"),
        ("ij,jk->ii", [(2, 3), (3, 4)], r"output subscript i appears more than once"),
        ("i1", [(2, 3)], r"invalid subscript term 'i1'"),
        ("...ijk", [(2, 3)], r"has 3 subscripts for operand 0, which has only 2 dimensions"),
    ],
)
def test_einsum_errors(eq, shapes, msg):
    with pytest.raises(ValueError, match="einsum\\(\\): .*" + msg):
        ember.einsum(eq, *[ember.ones(*s) for s in shapes])


def test_einsum_list_operands_and_promotion():
    a, b = ember.ones(2, 3), ember.ones(3, dtype=ember.float64)
    out = ember.einsum("ij,j->i", [a, b])
    assert out.dtype == ember.float64 and out.tolist() == [3.0, 3.0]


def test_result_dtypes_match_torch():
    for dt in ("int64", "int32", "float32", "float64"):
        a = np.arange(6).reshape(2, 3).astype(dt)
        b = np.arange(3).astype(dt)
        e = ember.matmul(ember.tensor(a), ember.tensor(b))
        t = torch.matmul(torch.tensor(a), torch.tensor(b))
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    mixed = ember.mm(ember.ones(2, 2, dtype=ember.int64), ember.ones(2, 2))
    assert mixed.dtype == ember.float32


def test_matmul_second_order_all_ranks():
    rng = np.random.default_rng(0)
    for sa, sb in [((4,), (4,)), ((4,), (2, 4, 3)), ((2, 1, 3, 4), (4,)), ((3, 4), (2, 4, 5))]:
        a = ember.tensor(rng.standard_normal(sa), requires_grad=True)
        b = ember.tensor(rng.standard_normal(sb), requires_grad=True)
        assert ember.autograd.gradgradcheck(lambda x, y: x @ y, (a, b))


def test_addmm_beta_zero_ignores_nan():
    out = ember.addmm(ember.tensor([np.nan]), ember.ones(2, 2), ember.ones(2, 1), beta=0)
    assert out.tolist() == [[2.0], [2.0]]
