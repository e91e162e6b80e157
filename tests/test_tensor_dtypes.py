"""dtypes: names, aliases, default dtype, promotion table and result_type against PyTorch."""

from __future__ import annotations

import itertools

import pytest
import torch

import ember

NAMES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
]
ALIASES = {
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "long": "int64",
    "int": "int32",
    "short": "int16",
}


def test_dtype_list_and_aliases():
    for name in NAMES:
        d = getattr(ember, name)
        assert isinstance(d, ember.dtype) and repr(d) == f"ember.{name}"
        t = getattr(torch, name)
        assert d.is_floating_point == t.is_floating_point
        assert d.is_signed == t.is_signed
        assert d.itemsize == t.itemsize
    for alias, name in ALIASES.items():
        assert getattr(ember, alias) is getattr(ember, name)
    assert ember.bool is ember.dtypes.bool_


@pytest.mark.parametrize("a, b", list(itertools.product(NAMES, NAMES)))
def test_promote_types_matches_torch(a, b):
    expected = torch.promote_types(getattr(torch, a), getattr(torch, b))
    assert repr(ember.promote_types(getattr(ember, a), getattr(ember, b))) == repr(
        expected
    ).replace("torch", "ember")


OPERANDS = {
    "int32 vec": lambda T: T.ones(2, dtype=T.int32),
    "uint8 vec": lambda T: T.ones(2, dtype=T.uint8),
    "bool vec": lambda T: T.ones(2, dtype=T.bool),
    "float16 vec": lambda T: T.ones(2, dtype=T.float16),
    "bfloat16 vec": lambda T: T.ones(2, dtype=T.bfloat16),
    "float64 vec": lambda T: T.ones(2, dtype=T.float64),
    "int64 0-d": lambda T: T.tensor(1),
    "float64 0-d": lambda T: T.tensor(1.0, dtype=T.float64),
    "float32 0-d": lambda T: T.tensor(1.0),
    "int8 0-d": lambda T: T.tensor(1, dtype=T.int8),
    "python int": lambda T: 2,
    "python float": lambda T: 2.5,
    "python bool": lambda T: True,
}


@pytest.mark.parametrize("a, b", list(itertools.combinations(OPERANDS, 2)))
def test_result_type_matches_torch(a, b):
    fa, fb = OPERANDS[a], OPERANDS[b]
    if not any(isinstance(f(torch), torch.Tensor) for f in (fa, fb)):
        pytest.skip("needs a tensor")
    expected = torch.result_type(fa(torch), fb(torch))
    got = ember.result_type(fa(ember), fb(ember))
    assert repr(got) == repr(expected).replace("torch", "ember")


def test_default_dtype():
    assert ember.get_default_dtype() is ember.float32
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.tensor([1.5]).dtype is ember.float64
        assert ember.zeros(2).dtype is ember.float64
        assert ember.arange(0, 1, 0.5).dtype is ember.float64
        assert ember.tensor([1]).dtype is ember.int64
        assert ember.result_type(ember.tensor([1]), 2.5) is ember.float64
    finally:
        ember.set_default_dtype(ember.float32)
    with pytest.raises(ember.DTypeError, match="only floating dtypes are allowed, got ember.int32"):
        ember.set_default_dtype(ember.int32)


def test_to_dtype_spellings():
    to = ember.dtypes.to_dtype
    assert to(float) is ember.float64 and to(int) is ember.int64 and to(bool) is ember.bool
    assert to("float16") is ember.float16 and to("torch.long") is ember.int64
    assert to("ember.double") is ember.float64
    import numpy as np

    assert to(np.float32) is ember.float32 and to(np.dtype("uint8")) is ember.uint8
    assert to(ember.FloatTensor) is ember.float32
    for bad in ("float128", None, [1], "cpu"):
        with pytest.raises(ember.DTypeError, match="not a dtype"):
            to(bad)


def test_can_cast_matches_torch():
    for a, b in itertools.product(NAMES, NAMES):
        assert ember.can_cast(getattr(ember, a), getattr(ember, b)) == torch.can_cast(
            getattr(torch, a), getattr(torch, b)
        ), (a, b)


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_finfo_matches_torch(name):
    e, t = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(e, attr) == getattr(t, attr), attr
    assert repr(e) == repr(t)


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_torch(name):
    e, t = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
    assert (e.bits, e.min, e.max, e.dtype) == (t.bits, t.min, t.max, t.dtype)
    assert repr(e) == repr(t)


def test_info_errors():
    assert ember.finfo().bits == 32
    with pytest.raises(ember.DTypeError, match="finfo: needs a floating dtype, got ember.int32"):
        ember.finfo(ember.int32)
    with pytest.raises(ember.DTypeError, match="iinfo: needs an integer dtype, got ember.float32"):
        ember.iinfo(ember.float32)


def test_dtype_pickles_to_the_same_object():
    import pickle

    for name in NAMES:
        d = getattr(ember, name)
        assert pickle.loads(pickle.dumps(d)) is d


@pytest.mark.parametrize(
    "fn",
    ["floor", "ceil", "trunc", "round", "frac", "sign", "floor_", "round_"],
)
def test_bfloat16_rounding_matches_torch(device, fn):
    values = [1.5, -2.5, 0.3, -0.7, 2.0, 0.0]
    got = getattr(ember.tensor(values, dtype=ember.bfloat16, device=device), fn)()
    want = getattr(torch.tensor(values, dtype=torch.bfloat16), fn)()
    assert got.dtype == ember.bfloat16
    assert got.float().tolist() == want.float().tolist()


def test_bfloat16_max_pool_with_padding(device):
    x = torch.randn(2, 3, 7, 7).to(torch.bfloat16)
    got = ember.nn.functional.max_pool2d(
        ember.tensor(x.float().numpy(), device=device).to(ember.bfloat16), 3, 2, 1
    )
    want = torch.nn.functional.max_pool2d(x, 3, 2, 1)
    assert got.dtype == ember.bfloat16
    assert got.float().cpu().tolist() == want.float().tolist()


HALF_ACCUMULATING = {
    "sum": lambda m, x: x.sum(),
    "mean": lambda m, x: x.mean(1),
    "cumsum": lambda m, x: x.cumsum(1),
    "softmax": lambda m, x: m.softmax(x, 1),
    "log_softmax": lambda m, x: m.log_softmax(x, 1),
    "cross_entropy": lambda m, x: m.nn.functional.cross_entropy(
        x, m.zeros(4, dtype=m.int64, device=x.device)
    ),
    "layer_norm": lambda m, x: m.nn.functional.layer_norm(x * 3 + 5, (1000,)),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("fn", list(HALF_ACCUMULATING))
def test_half_reductions_accumulate_in_float32(device, fn, dtype):
    """A bfloat16 running sum over 1,000 terms is off by whole units; PyTorch accumulates half
    inputs in float32 and rounds once, and so must ember."""
    x = torch.randn(4, 1000, generator=torch.Generator().manual_seed(0)).to(getattr(torch, dtype))
    want = HALF_ACCUMULATING[fn](torch, x).float()
    e = ember.tensor(x.float().numpy(), device=device).to(getattr(ember, dtype))
    got = HALF_ACCUMULATING[fn](ember, e)
    assert got.dtype == getattr(ember, dtype)
    tol = 2**-7 if dtype == "bfloat16" else 2**-10
    assert torch.allclose(torch.tensor(got.float().cpu().numpy()), want, rtol=tol, atol=tol * 4)
