"""ember.testing against torch.testing: which pairs pass, and the exception and message of those
that fail (assert_close, assert_allclose); make_tensor's ranges, flags and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember

NAN, INF = float("nan"), float("inf")

# Expressions in T (ember or torch); each either passes under both or fails with one message.
CLOSE = [
    "T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 2.0, 3.0]) + 1e-7",
    "T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 2.0, 3.0]) + 0.1",
    "T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 2.0, 3.0]).double()",
    "T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 2.0, 3.0]).double(), check_dtype=False",
    "T.tensor([1.0, 2.0, 3.0]), T.ones(2)",
    "T.zeros(2, 3), T.zeros(3, 2)",
    "T.tensor([1, 2]), T.tensor([1, 2])",
    "T.tensor([1, 2]), T.tensor([1, 3])",
    "T.tensor([1, 2], dtype=T.uint8), T.tensor([3, 2], dtype=T.uint8)",
    "T.tensor([True, False]), T.tensor([True, True])",
    "T.tensor([1, 2], dtype=T.int32), T.tensor([1, 2])",
    "T.tensor([1, 2], dtype=T.int32), T.tensor([1, 2]), check_dtype=False",
    "T.tensor([[1.0, NAN]]), T.tensor([[1.0, NAN]])",
    "T.tensor([[1.0, NAN]]), T.tensor([[1.0, NAN]]), equal_nan=True",
    "T.tensor([1.0, INF]), T.tensor([1.0, INF])",
    "T.tensor([1.0, INF]), T.tensor([1.0, -INF])",
    "T.tensor(1.0), T.tensor(1.5)",
    "T.tensor([1.0]), T.tensor([1.5])",
    "T.zeros(3, 3), T.eye(3)",
    "T.zeros(0), T.zeros(0)",
    "T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 2.0, 3.0]) * 1.01, rtol=0.02, atol=0",
    "T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 2.0, 3.0]) + 1e-6, rtol=0, atol=0",
    "T.tensor([1.0, 2.0]), T.tensor([1.0, 2.001])",
    "T.tensor([1.0, 2.0], dtype=T.float16), T.tensor([1.0, 2.001], dtype=T.float16)",
    "T.tensor([1.0, 2.0], dtype=T.float16), T.tensor([1.0, 2.01], dtype=T.float16)",
    "T.tensor([1.0, 2.0], dtype=T.bfloat16), T.tensor([1.0, 2.1], dtype=T.bfloat16)",
    "T.tensor([1.0, 2.0], dtype=T.float16), T.tensor([1.0, 2.001]), check_dtype=False",
    "T.tensor([1.0, 2.0], requires_grad=True), T.tensor([1.0, 2.0])",
    "T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 2.0, 3.0]) + 0.1, msg='custom'",
    "T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 2.0, 3.0]) + 0.1, msg=lambda m: m + '!!'",
    "T.tensor(1.0), T.tensor(1.5), msg='m'",
    "T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 2.0, 3.0]), rtol=1e-3",
    "T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 2.0, 3.0]), atol=1e-3",
    "T.zeros(2, 3), T.zeros(3, 2).t(), check_stride=True",
    "T.zeros(2, 3), T.zeros(3, 2).t()",
    "1.0, 1.5",
    "1, 1.0",
    "1, 1.0, check_dtype=False",
    "1, 2",
    "True, False",
    "True, True",
    "float('nan'), float('nan'), equal_nan=True",
    "(1.0, 2.0), (1.0, 2.5)",
    "[T.ones(3), T.ones(3)], [T.ones(3), T.ones(3) + 1]",
    "[[T.ones(3)]], [[T.ones(3) + 1]]",
    "[T.ones(3)], [T.ones(3), T.ones(3)]",
    "{'x': T.ones(3)}, {'x': T.ones(3) + 1}",
    "{'x': T.ones(3)}, {'y': T.ones(3)}",
    "np.array([1.0, 2.0]), np.array([1.0, 2.5])",
    "T.ones(3), [1.0, 1.0, 1.0]",
    "T.ones(3), 1.0",
]


def _outcome(module, expr: str, fn: str = "assert_close"):
    call = f"T.testing.{fn}({expr})"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            eval(call, {"T": module, "np": np, "NAN": NAN, "INF": INF})
    except (AssertionError, TypeError, ValueError) as e:
        return type(e), str(e).replace("torch.", "ember.")
    return None


@pytest.mark.parametrize("expr", CLOSE)
def test_assert_close_as_torch(expr):
    assert _outcome(ember, expr) == _outcome(torch, expr)


ALLCLOSE = [
    "T.tensor([1.0, 2.0]), T.tensor([1.0, 2.00001])",
    "T.tensor([1.0, 2.0]), T.tensor([1.0, 2.1])",
    "T.tensor([1.0, 2.0]), [1.0, 2.0001]",
    "T.tensor([1.0, NAN]), T.tensor([1.0, NAN])",
    "T.tensor([1.0, 2.0]), T.tensor([1.0, 2.0]).double()",
    "T.tensor([1.0, 2.0]).double(), T.tensor([1.0, 2.00001]).double()",
    "T.tensor([1.0, 2.0]), T.tensor([1.0, 2.1]), msg='mine'",
    "[1.0, 2.0], [1.0, 2.5]",
]


@pytest.mark.parametrize("expr", ALLCLOSE)
def test_assert_allclose_as_torch(expr):
    assert _outcome(ember, expr, "assert_allclose") == _outcome(torch, expr, "assert_allclose")


def test_assert_allclose_is_deprecated():
    with pytest.warns(FutureWarning, match="assert_allclose.*deprecated"):
        ember.testing.assert_allclose(ember.ones(1), ember.ones(1))


@pytest.mark.parametrize(
    "dtype, low, high, lo, hi",
    [
        ("float32", None, None, -9, 9),
        ("float64", 0, 1, 0, 1),
        ("float16", -2, 3, -2, 3),
        ("bfloat16", None, None, -9, 9),
        ("int64", None, None, -9, 10),
        ("int32", 2.5, 7.2, 3, 8),  # integer bounds round up, as torch
        ("uint8", -50, None, 0, 10),  # clamped to what the dtype holds
        ("int8", None, 1000, -9, 128),
        ("bool", None, None, 0, 2),
    ],
)
def test_make_tensor_values_in_torchs_range(dtype, low, high, lo, hi):
    t = ember.testing.make_tensor(
        40, 50, dtype=getattr(ember, dtype), device="cpu", low=low, high=high
    )
    ref = torch.testing.make_tensor(
        40, 50, dtype=getattr(torch, dtype), device="cpu", low=low, high=high
    )
    assert t.shape == tuple(ref.shape) and str(t.dtype) == str(ref.dtype).replace("torch", "ember")
    for v in (t.float().numpy(), ref.float().numpy()):
        assert v.min() >= lo and v.max() < hi
        assert v.max() - v.min() >= (hi - lo) / 2  # the range is used, not one value


def test_make_tensor_draws_from_embers_generator():
    ember.manual_seed(3)
    a = ember.testing.make_tensor((2, 3), dtype=ember.float32, device="cpu")
    ember.manual_seed(3)
    b = ember.testing.make_tensor([2, 3], dtype=ember.float32, device="cpu")
    assert a.tolist() == b.tolist()


def test_make_tensor_flags_as_torch():
    kw = {"dtype": "float32", "device": "cpu"}
    for module in (ember, torch):
        args = {**kw, "dtype": module.float32}
        g = module.testing.make_tensor(2, 3, requires_grad=True, **args)
        assert g.requires_grad and g.is_leaf
        nc = module.testing.make_tensor(3, 4, noncontiguous=True, **args)
        assert tuple(nc.shape) == (3, 4) and not nc.is_contiguous() and nc.stride() == (8, 2)
        z = module.testing.make_tensor(
            200, dtype=module.int64, device="cpu", low=0, high=2, exclude_zero=True
        )
        assert bool((z != 0).all())


@pytest.mark.parametrize(
    "kwargs",
    [
        {"dtype": "int64", "requires_grad": True},
        {"dtype": "float32", "low": 3, "high": 1},
        {"dtype": "float32", "low": float("nan")},
        {"dtype": "uint8", "low": -10, "high": -2},
    ],
)
def test_make_tensor_errors_as_torch(kwargs):
    def message(module):
        kw = {**kwargs, "dtype": getattr(module, kwargs["dtype"])}
        with pytest.raises(ValueError) as info:
            module.testing.make_tensor(2, device="cpu", **kw)
        return str(info.value).replace("torch.", "ember.")

    assert message(ember) == message(torch)
