"""Creation functions against PyTorch 2.13: dtype inference, values, shapes, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember


def _dtype_name(t) -> str:
    return str(t.dtype).split(".")[-1]


def _both(expr: str):
    """Evaluate ``expr`` with ``T`` = torch and ``T`` = ember."""
    return eval(expr, {"T": torch, "np": np}), eval(expr, {"T": ember, "np": np})


def _same(t, e) -> None:
    assert _dtype_name(t) == _dtype_name(e)
    assert tuple(t.shape) == tuple(e.shape)
    assert e.requires_grad == t.requires_grad
    if t.dtype in (torch.float16, torch.bfloat16):
        t, e = t.float(), e.float()
    np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())


TENSOR_DATA = [
    "1",
    "1.5",
    "True",
    "-7",
    "2**40",
    "[1, 2]",
    "[1.0, 2]",
    "[True, False]",
    "[True, 1]",
    "[1, 2.5]",
    "[[1, 2], [3, 4]]",
    "[[1, 2], [3.5, 4]]",
    "(1, 2)",
    "[]",
    "[[]]",
    "[[], []]",
    "[[[1], [2]], [[3], [4]]]",
    "np.array([1, 2], dtype=np.int32)",
    "np.array([1.0, 2.0])",
    "np.array([1, 2], dtype=np.uint8)",
    "np.array([True])",
    "np.array(3.0)",
    "np.float64(2.0)",
    "np.int32(3)",
    "np.float32(0.1)",
    "np.array([1.5], dtype=np.float16)",
    "np.arange(6, dtype=np.int16).reshape(2, 3)",
    "[np.float64(1.0), 2]",
    "[np.int32(1), 2]",
    "[np.float16(1), 2.5]",
    "[np.uint8(1), np.int8(1)]",
    "[True, np.float32(1)]",
    "[[1, 2], [np.float64(1), 3]]",
    "[T.tensor(1.0), T.tensor(2.0)]",
    "[T.tensor(1, dtype=T.int32), 2.5]",
    "[T.tensor(1.5, dtype=T.float16)]",
    "[[T.tensor(1), 2], [3, T.tensor(4)]]",
    "[T.tensor(1.5, dtype=T.float64), 1]",
    "[np.array([1.0, 2.0]), np.array([3.0, 4.0])]",
    "T.tensor([1, 2])",
    "T.tensor([1.5], dtype=T.float64)",
    "T.arange(6).reshape(2, 3)",
]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("data", TENSOR_DATA)
def test_tensor_dtype_inference_matches_torch(data):
    _same(*_both(f"T.tensor({data})"))


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("data", ["[1, 2]", "1.5", "[1.0, 2]", "[True, 2.5]", "np.array([1.5])"])
def test_tensor_dtype_inference_default_float64(data):
    torch.set_default_dtype(torch.float64)
    ember.set_default_dtype(ember.float64)
    try:
        _same(*_both(f"T.tensor({data})"))
    finally:
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize(
    "expr",
    [
        "T.tensor([1.7, -1.7], dtype=T.int64)",
        "T.tensor([1, 2], dtype=T.float64)",
        "T.tensor([0.5, 0.0], dtype=T.bool)",
        "T.tensor(np.array([1, 2]), dtype=T.float16)",
        "T.tensor([0.1, 0.2], dtype=T.bfloat16)",
        "T.tensor([1, 2], dtype=T.float32, requires_grad=True)",
        "T.tensor(T.tensor([1, 2]), dtype=T.float64)",
    ],
)
def test_tensor_with_dtype(expr):
    _same(*_both(expr))


def test_tensor_copies_and_detaches():
    a = np.ones(2, dtype=np.float32)
    t = ember.tensor(a)
    a[0] = 5
    assert t.tolist() == [1.0, 1.0]
    src = ember.ones(2, requires_grad=True)
    out = ember.tensor(src)
    assert not out.requires_grad and out.is_leaf
    assert ember.tensor([src[0] * 2, src[1]]).tolist() == [2.0, 1.0]


def test_tensor_from_multi_element_tensors_stacks():
    # PyTorch refuses this; ember stacks (a documented leniency).
    t = ember.tensor([ember.tensor([1, 2]), ember.tensor([3, 4])])
    assert t.shape == (2, 2) and t.dtype is ember.int64


@pytest.mark.parametrize(
    "data, err, match",
    [
        (
            "[[1, 2], [3]]",
            ember.ShapeError,
            r"tensor: expected sequence of length 2 at dim 1 \(got 1\)",
        ),
        ("[[1], [2, 3]]", ember.ShapeError, r"expected sequence of length 1 at dim 1 \(got 2\)"),
        ("[1, [2]]", ember.ShapeError, "tensor: expected a sequence or a number consistently"),
        ("'a'", ember.DTypeError, "tensor: can't build a tensor from str data"),
        ("None", ember.DTypeError, "tensor: can't build a tensor from NoneType"),
        ("[1, None]", ember.DTypeError, "tensor: could not infer dtype of NoneType"),
        ("3 + 2j", ember.DTypeError, "complex numbers are not supported"),
        ("np.array([1, 2], dtype=np.uint16)", ember.DTypeError, "dtype uint16"),
        ("np.array(['a'])", ember.DTypeError, "dtype <U1"),
        ("2**70", ember.DTypeError, "out of range for ember.int64"),
    ],
)
def test_tensor_errors(data, err, match):
    with pytest.raises(err, match=match):
        ember.tensor(eval(data, {"np": np}))


def test_requires_grad_needs_float():
    with pytest.raises(ember.DTypeError, match="Only Tensors of floating point and complex dtype"):
        ember.tensor([1, 2], requires_grad=True)
    with pytest.raises(ember.DTypeError, match="floating point"):
        ember.zeros(2, dtype=ember.int64, requires_grad=True)


def test_as_tensor_and_from_numpy_share_memory():
    a = np.zeros(3, dtype=np.float32)
    t = ember.as_tensor(a)
    a[0] = 1
    assert t.tolist() == [1.0, 0.0, 0.0]
    f = ember.from_numpy(a)
    f.numpy()[1] = 2
    assert a[1] == 2
    assert ember.from_numpy(np.arange(3)).dtype is ember.int64
    assert ember.as_tensor(a, dtype=ember.float64).dtype is ember.float64
    assert ember.as_tensor([1, 2]).dtype is ember.int64
    x = ember.ones(2)
    assert ember.as_tensor(x) is x
    with pytest.raises(ember.DTypeError, match="from_numpy: expected np.ndarray, got list"):
        ember.from_numpy([1])
    with pytest.raises(ember.DTypeError, match="uint16"):
        ember.from_numpy(np.zeros(2, dtype=np.uint16))


FILLED = [
    "T.zeros(2, 3)",
    "T.zeros((2, 3))",
    "T.zeros([2, 3])",
    "T.zeros(())",
    "T.zeros(0)",
    "T.zeros(T.Size([2, 3]))",
    "T.zeros(2, 0)",
    "T.ones(2, dtype=T.bool)",
    "T.ones(3, dtype=T.int8)",
    "T.zeros(2, dtype=float)",
    "T.zeros(2, dtype=int)",
    "T.ones(2, dtype=T.float)",
    "T.ones(np.int64(2), 3)",
    "T.full((2,), 7)",
    "T.full((2,), 7.0)",
    "T.full((2,), True)",
    "T.full((2,), np.float64(1.5))",
    "T.full((2,), np.int32(1))",
    "T.full((2,), T.tensor(2))",
    "T.full((2,), T.tensor(1.5, dtype=T.float64))",
    "T.full([2, 3], 1.5, dtype=T.float64)",
    "T.full((), 3)",
    "T.full((2,), -1, dtype=T.uint8)",
    "T.eye(3)",
    "T.eye(2, 3)",
    "T.eye(3, 2)",
    "T.eye(2, dtype=T.int64)",
    "T.eye(0)",
    "T.zeros_like(T.ones(2, dtype=T.int32))",
    "T.zeros_like(T.ones(2, dtype=T.int32), dtype=T.float64)",
    "T.ones_like(T.zeros(2, 3))",
    "T.full_like(T.zeros(2, dtype=T.int64), 2.7)",
    "T.full_like(T.zeros(2), 3)",
    "T.ones_like(T.ones(2), requires_grad=True)",
    "T.zeros(2, requires_grad=True)",
    "T.scalar_tensor(3)",
    "T.scalar_tensor(3, dtype=T.int64)",
    "T.ones(2, dtype=T.float64).new_ones((2,))",
    "T.zeros(2, 3).new_zeros(2)",
    "T.ones(2).new_tensor([1, 2])",
    "T.ones(2, dtype=T.float64).new_full((2,), 3)",
    "T.ones(2, dtype=T.int32).new_tensor([1.7])",
    "T.ones(1).new_zeros((2, 2), dtype=T.int64)",
    "T.ones(2, dtype=T.int64).new([1, 2])",
    "T.ones(2).new()",
]


@pytest.mark.parametrize("expr", FILLED)
def test_filled_match_torch(expr):
    _same(*_both(expr))


@pytest.mark.parametrize(
    "expr",
    [
        "T.empty(2, 3)",
        "T.empty(2, 3, dtype=T.float64)",
        "T.empty_like(T.ones(2, dtype=T.int8))",
        "T.ones(2).new_empty(3)",
        "T.Tensor(2, 3)",
        "T.Tensor(T.Size([2]))",
        "T.ones(1).new(2, 3)",
    ],
)
def test_empty_shapes_and_dtypes(expr):
    t, e = _both(expr)
    assert tuple(t.shape) == tuple(e.shape) and _dtype_name(t) == _dtype_name(e)


ARANGE = [
    "5",
    "5.0",
    "0, 1, 0.1",
    "1, 2.5, 0.5",
    "0, 10, 3",
    "10, 0, -3",
    "-1.0, 1.0, 0.3",
    "0, 0",
    "0, 1, 0.3",
    "1, 0, -0.1",
    "0, 10, 0.7",
    "0.1, 0.9, 0.2",
    "0, 1.0000001, 0.1",
    "1e8, 1e8 + 4",
    "2**40, 2**40 + 2",
    "0, 100, 0.37",
    "-3.3, 50.1, 0.11",
    "np.int32(5)",
    "T.tensor(5)",
    "T.tensor(5.0)",
    "T.tensor(0.5, dtype=T.float64), 3",
    "np.float32(0.1), 1, 0.3",
    "0, 1, 0.1, dtype=T.float64",
    "0, 100, 0.37, dtype=T.float64",
    "0.5, 5, dtype=T.int64",
    "0.5, 5.7, 1.5, dtype=T.int64",
    "0, 5, 1.5, dtype=T.int32",
    "-2.5, 3, 1.2, dtype=T.int32",
    "0, 5, 0.5, dtype=T.int16",
    "1, 4, dtype=T.float16",
    "0, 1, 0.1, dtype=T.float16",
    "0, 1, 0.1, dtype=T.bfloat16",
    "-5, 30, 0.3, dtype=T.bfloat16",
    "0, 300, 0.7, dtype=T.float16",
    "3, dtype=T.uint8",
    "2, 9, 2, dtype=T.float32",
    "0, 3, requires_grad=True, dtype=T.float32",
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32"])
def test_arange_random_ranges_match_torch(dtype):
    rng = np.random.default_rng(7)
    for _ in range(60):
        start = float(rng.uniform(-50, 50))
        step = float(rng.uniform(0.01, 3)) * float(rng.choice([-1, 1]))
        end = start + step * int(rng.integers(0, 200)) + float(rng.uniform(-1, 1)) * step
        try:
            expected = torch.arange(start, end, step, dtype=getattr(torch, dtype))
        except (RuntimeError, ValueError):  # int64 truncates |step| < 1 to 0
            with pytest.raises(ember.EmberError, match="step must be nonzero"):
                ember.arange(start, end, step, dtype=getattr(ember, dtype))
            continue
        _same(expected, ember.arange(start, end, step, dtype=getattr(ember, dtype)))


LINSPACE = [
    "0, 1, 5",
    "0, 10, 4, dtype=T.int64",
    "-1, 1, 7",
    "0, 1, 1",
    "0, 1, 0",
    "1, 0, 6",
    "0, 1, 3, dtype=T.float64",
    "0, 1.1, 11",
    "3, 10, steps=5",
    "0, 10, 7, dtype=T.int64",
    "-3, 7, 6, dtype=T.int32",
    "0, 1, 5, dtype=T.float16",
    "-2, 5, 33, dtype=T.bfloat16",
    "T.tensor(0.0), T.tensor(1.0), 3",
    "0, 1, 1000",
    "-7.5, 3.25, 257, dtype=T.float64",
    "0, 255, 10, dtype=T.uint8",
    "0, 1, 4, requires_grad=True",
]

LOGSPACE = [
    "0, 2, steps=3",
    "-2, 2, 9, base=2",
    "0, 3, 4, dtype=T.int64",
    "0.5, 3.7, 5, base=3, dtype=T.int32",
    "1, 1, 1",
    "-1.5, 1, 1",
    "0, 1, 0",
    "2, -3, 7, base=0.5, dtype=T.float64",
    "-1, 2, 6, dtype=T.float16",
    "-1, 2, 6, dtype=T.bfloat16",
    "T.tensor(0.0), T.tensor(1.0), 4",
    "0, 1, 3, requires_grad=True",
]


@pytest.mark.parametrize(
    "expr",
    [f"T.arange({a})" for a in ARANGE]
    + [f"T.linspace({a})" for a in LINSPACE]
    + [f"T.logspace({a})" for a in LOGSPACE],
)
def test_ranges_match_torch_bit_for_bit(expr):
    _same(*_both(expr))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int16"])
def test_linspace_random_ranges_match_torch(dtype):
    rng = np.random.default_rng(8)
    for _ in range(60):
        a, b = (float(v) for v in rng.uniform(-50, 50, 2))
        n = int(rng.integers(0, 300))
        _same(
            torch.linspace(a, b, n, dtype=getattr(torch, dtype)),
            ember.linspace(a, b, n, dtype=getattr(ember, dtype)),
        )


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32"])
def test_logspace_random_ranges_match_torch(dtype):
    rng = np.random.default_rng(9)
    for _ in range(60):
        a, b = (float(v) for v in rng.uniform(-6, 6, 2))
        n, base = int(rng.integers(0, 100)), float(rng.choice([10.0, 2.0, 3.5, 0.5]))
        _same(
            torch.logspace(a, b, n, base, dtype=getattr(torch, dtype)),
            ember.logspace(a, b, n, base, dtype=getattr(ember, dtype)),
        )


@pytest.mark.parametrize(
    "expr, err, match",
    [
        (
            "T.logspace(0, 1, -2)",
            ember.EmberError,
            "logspace: number of steps must be non-negative",
        ),
        ("T.zeros(-1)", ember.ShapeError, r"zeros: negative dimension -1 in size \(-1,\)"),
        ("T.ones(2.5)", ember.ShapeError, "ones: size must be a tuple of ints, got float 2.5"),
        ("T.empty((2, '3'))", ember.ShapeError, "empty: size must be a tuple of ints, got str"),
        ("T.rand(2, -3)", ember.ShapeError, "rand: negative dimension -3"),
        ("T.arange(0, 5, 0)", ember.EmberError, "arange: step must be nonzero"),
        ("T.arange(5, 0, 1)", ember.EmberError, "arange: upper bound and lower bound inconsistent"),
        ("T.arange(0, 1, -0.1)", ember.EmberError, "inconsistent with step sign"),
        ("T.arange(0, float('inf'))", ember.EmberError, "arange: unsupported range"),
        ("T.arange('a')", ember.DTypeError, "arange: start, end and step must be numbers"),
        (
            "T.linspace(0, 1, -1)",
            ember.EmberError,
            "linspace: number of steps must be non-negative",
        ),
        ("T.eye(-1)", ember.ShapeError, "eye: n and m must be non-negative"),
        ("T.full((2,), 'x')", ember.DTypeError, "full: fill_value must be a number"),
        (
            "T.full((2,), T.ones(2))",
            ember.ShapeError,
            "full: fill_value must be a number or a 1-el",
        ),
        ("T.zeros_like([1, 2])", ember.DTypeError, "expected a Tensor as input, got list"),
        (
            "T.rand(2, dtype=T.int64)",
            ember.DTypeError,
            "rand: needs a floating dtype, got ember.int64",
        ),
        ("T.randn(2, dtype=T.bool)", ember.DTypeError, "randn: needs a floating dtype"),
        ("T.randint(5, 3, (2,))", ember.EmberError, "randint: expected low < high, but got low=5"),
        ("T.randint(5)", ember.EmberError, r"randint: size is required"),
        ("T.randperm(-1)", ember.EmberError, "randperm: n must be non-negative"),
        ("T.zeros(2, dtype='float128')", ember.DTypeError, "not a dtype: 'float128'"),
        ("T.zeros(2, device='tpu')", ember.DeviceError, "unknown device type 'tpu'"),
    ],
)
def test_creation_errors(expr, err, match):
    with pytest.raises(err, match=match):
        eval(expr, {"T": ember})


@pytest.mark.parametrize(
    "expr",
    [
        "T.rand(2, 3)",
        "T.rand((2, 3))",
        "T.rand(())",
        "T.rand(2, dtype=T.float64)",
        "T.randn(4)",
        "T.randn(2, dtype=T.float16)",
        "T.randn(2, dtype=T.bfloat16)",
        "T.randint(3, (2,))",
        "T.randint(0, 3, (2,), dtype=T.float32)",
        "T.randint(-5, 5, size=(4, 2))",
        "T.randperm(5)",
        "T.randperm(5, dtype=T.int32)",
        "T.rand_like(T.ones(2, dtype=T.float64))",
        "T.randn_like(T.ones(2, 3))",
        "T.randint_like(T.ones(2), 5)",
        "T.randint_like(T.ones(2), 2, 5)",
        "T.rand(3, requires_grad=True)",
        "T.randn(2, 2, requires_grad=True, dtype=T.float64)",
    ],
)
def test_random_shapes_and_dtypes_match_torch(expr):
    t, e = _both(expr)
    assert tuple(t.shape) == tuple(e.shape)
    assert _dtype_name(t) == _dtype_name(e)
    assert t.requires_grad == e.requires_grad


def test_random_value_ranges():
    u = ember.rand(10000).numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.02
    n = ember.randn(10000).numpy()
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05
    r = ember.randint(-3, 4, (1000,)).numpy()
    assert r.min() == -3 and r.max() == 3
    assert sorted(ember.randperm(50).tolist()) == list(range(50))
    assert ember.randperm(0).shape == (0,)


def test_creation_on_cpu_device():
    for dev in ("cpu", ember.device("cpu"), None):
        assert ember.zeros(2, device=dev).device == ember.device("cpu")
        assert ember.arange(3, device=dev).device.type == "cpu"
        assert ember.tensor([1.5], device=dev).device.type == "cpu"
        assert ember.rand(2, device=dev).device.type == "cpu"
