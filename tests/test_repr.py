"""``repr(tensor)`` against PyTorch's text, with ``torch`` spelled ``ember``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import ember

# Each entry builds the same tensor in both libraries: ``T`` is ``torch`` or ``ember``.
CASES = [
    "T.tensor([1.0, 2.0, 3.0])",
    "T.tensor([1.5, 2.25, -3.125])",
    "T.tensor([0.1, 0.2, 0.3333333])",
    "T.tensor([1.0, -2.0])",
    "T.tensor([100.0, 2.0, 3.0])",
    "T.tensor([1e-5, 1.0])",
    "T.tensor([1e9, 1.0])",
    "T.tensor([1e9, 2e9])",
    "T.tensor([1.0, 1001.0])",
    "T.tensor([1.5, 2000.0])",
    "T.tensor([123456.789])",
    "T.tensor([0.0, 0.0])",
    "T.tensor([-0.0, 0.0])",
    "T.tensor([0.00001])",
    "T.tensor([float('nan'), 1.0, float('inf'), -float('inf')])",
    "T.tensor([float('nan'), 1.5])",
    "T.tensor([float('nan')])",
    "T.tensor([float('inf'), -float('inf')])",
    "T.tensor([1e-9, float('nan'), 2.0])",
    "T.tensor(3.5)",
    "T.tensor(3.0)",
    "T.tensor(-0.5)",
    "T.tensor(1e-7)",
    "T.tensor(7)",
    "T.tensor(True)",
    "T.tensor([1, 2, 3])",
    "T.tensor([-1, 200, 3])",
    "T.tensor([[1, 2], [300, -4]])",
    "T.tensor([True, False])",
    "T.tensor([True, True])",
    "T.tensor([[True], [False]])",
    "T.tensor([1, 2], dtype=T.int32)",
    "T.tensor([1, 2], dtype=T.uint8)",
    "T.tensor([1, 2], dtype=T.int8)",
    "T.tensor([1, 2], dtype=T.int16)",
    "T.tensor([1.0, 2.5], dtype=T.float64)",
    "T.tensor([1.0, 2.5], dtype=T.float16)",
    "T.tensor([1.0, 2.5], dtype=T.bfloat16)",
    "T.tensor([0.1, 0.2], dtype=T.bfloat16)",
    "T.tensor([0.1, 1e-3], dtype=T.float16)",
    "T.tensor(2.5, dtype=T.float64)",
    "T.tensor([[1.0, 2.5], [3.0, 4.0]])",
    "T.tensor([[1.0, 2.0], [3.0, 4.0]])",
    "T.tensor([[1e-5, 2.0], [3.0, 4.0]])",
    "T.arange(24.0).reshape(2, 3, 4)",
    "T.arange(24.0).reshape(2, 3, 4) / 7",
    "T.arange(48).reshape(2, 2, 3, 4)",
    "T.arange(30.0) / 3",
    "T.arange(100)",
    "T.arange(1000)",
    "T.arange(1001)",
    "T.arange(2000.0) / 7",
    "T.arange(3000.0).reshape(30, 100)",
    "T.arange(5000.0).reshape(10, 20, 25)",
    "T.arange(1500).reshape(50, 30)",
    "T.ones(3, 1000)",
    "T.ones(40, 30, dtype=T.int32)",
    "T.zeros(20, 20)",
    "T.linspace(-1, 1, 7)",
    "T.linspace(0, 10, 30)",
    "T.tensor([])",
    "T.tensor([], dtype=T.int64)",
    "T.tensor([], dtype=T.float64)",
    "T.zeros(0, 3)",
    "T.zeros(2, 0, dtype=T.int32)",
    "T.zeros(0, dtype=T.bool)",
    "T.tensor([1.0, 2.0], requires_grad=True)",
    "T.tensor(1.0, requires_grad=True)",
    "T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)",
    "T.zeros(0, requires_grad=True)",
    "T.arange(100.0).reshape(10, 10).requires_grad_()",
    "T.tensor([123456789.0, 0.5], requires_grad=True)",
]

NUMPY_CASES = [
    np.array([[0.5, -0.25, 1e-3]], dtype=np.float32),
    np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32),
    np.random.default_rng(1).standard_normal((3, 4, 5)),
    np.random.default_rng(2).standard_normal((40, 40)).astype(np.float32) * 1e4,
    np.random.default_rng(3).integers(-1000, 1000, (7, 9)),
    np.random.default_rng(4).random((2, 3)).astype(np.float32) > 0.5,
]


def _expected(text: str) -> str:
    return text.replace("torch.", "ember.")


@pytest.mark.parametrize("expr", CASES)
def test_repr_matches_torch(expr):
    t = eval(expr, {"T": torch, "math": math})
    e = eval(expr, {"T": ember, "math": math})
    assert repr(e) == _expected(repr(t))
    assert str(e) == _expected(str(t))


@pytest.mark.parametrize("i", range(len(NUMPY_CASES)))
def test_repr_numpy_data_matches_torch(i):
    a = NUMPY_CASES[i]
    assert repr(ember.tensor(a)) == _expected(repr(torch.tensor(a)))


def test_repr_with_default_dtype_float64():
    for lib in (torch, ember):
        lib.set_default_dtype(lib.float64)
    try:
        for expr in ["T.tensor([1.5, 2.0])", "T.tensor([1.5], dtype=T.float32)", "T.tensor([])"]:
            t, e = eval(expr, {"T": torch}), eval(expr, {"T": ember})
            assert repr(e) == _expected(repr(t))
    finally:
        for lib in (torch, ember):
            lib.set_default_dtype(lib.float32)


def _without_grad_fn_name(text: str) -> str:
    head, _, tail = text.partition("grad_fn=<")
    return head + "grad_fn=<" + tail.partition(">")[2] if tail else text


@pytest.mark.parametrize(
    "expr",
    [
        "T.tensor([1.0, 2.5], requires_grad=True) * 2",
        "(T.tensor([[1.0, 2.5], [3.0, 4.0]], requires_grad=True) * 2).sum()",
        "T.tensor([1.0, 2.5], requires_grad=True) + 1",
        "T.arange(2000.0).requires_grad_() * 3",
    ],
)
def test_repr_grad_fn(expr):
    t, e = eval(expr, {"T": torch}), eval(expr, {"T": ember})
    assert _without_grad_fn_name(repr(e)) == _without_grad_fn_name(_expected(repr(t)))
    assert "grad_fn=<" in repr(e) and "Backward" in repr(e)


def test_repr_mul_node_name():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"


@pytest.mark.parametrize(
    "opts",
    [
        dict(precision=2),
        dict(threshold=5),
        dict(edgeitems=1, threshold=5),
        dict(linewidth=40),
        dict(sci_mode=True),
        dict(sci_mode=False),
        dict(profile="short"),
        dict(profile="full"),
    ],
)
def test_printoptions_match_torch(opts):
    exprs = [
        "T.arange(12.0) / 7",
        "T.arange(30)",
        "T.tensor([1e-5, 1.0])",
        "T.arange(2000.0).reshape(40, 50)",
    ]
    for expr in exprs:
        with torch._tensor_str.printoptions(**opts), ember.printoptions(**opts):
            assert repr(eval(expr, {"T": ember})) == _expected(repr(eval(expr, {"T": torch})))
    assert ember.get_printoptions() == torch._tensor_str.get_printoptions()


def test_format_and_print():
    x = ember.tensor(2.5)
    assert f"{x}" == "2.5" and f"{x:.3f}" == "2.500"
    assert f"{ember.tensor([1.0])}" == "tensor([1.])"
    with pytest.raises(TypeError):
        f"{ember.tensor([1.0]):.2f}"
    assert str(ember.tensor([1, 2])) == "tensor([1, 2])"


def test_dtype_and_size_reprs():
    assert repr(ember.float32) == "ember.float32"
    assert str(ember.int64) == "ember.int64"
    assert repr(ember.zeros(2, 3).shape) == "ember.Size([2, 3])"
    assert repr(ember.device("cuda:1")) == "device(type='cuda', index=1)"
