"""ember.dtypes against PyTorch: promote_types, result_type, can_cast, default dtype, spellings."""

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from ember import dtypes as D

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
         "float64"]  # fmt: skip


def name_of(dtype):
    return str(dtype).split(".")[-1]


@pytest.mark.parametrize("a, b", list(itertools.product(NAMES, NAMES)))
def test_promote_types_table(a, b):
    got = ember.promote_types(getattr(ember, a), getattr(ember, b))
    assert name_of(got) == name_of(torch.promote_types(getattr(torch, a), getattr(torch, b)))


@pytest.mark.parametrize("a, b", list(itertools.product(NAMES, NAMES)))
def test_can_cast_table(a, b):
    got = ember.can_cast(getattr(ember, a), getattr(ember, b))
    assert got == torch.can_cast(getattr(torch, a), getattr(torch, b))


NUMERIC = NAMES[1:]
clamp_operand = st.tuples(st.sampled_from(["dim", "0d"]), st.sampled_from(NUMERIC))


@settings(max_examples=150, deadline=None)
@given(clamp_operand, clamp_operand, clamp_operand)
def test_result_type_of_three_tensors_matches_torch_clamp(x, lo, hi):
    def make(m, spec):
        kind, dt = spec
        return m.tensor([1, 2] if kind == "dim" else 1, dtype=getattr(m, dt))

    ex, elo, ehi = (make(ember, s) for s in (x, lo, hi))
    tx, tlo, thi = (make(torch, s) for s in (x, lo, hi))
    want = torch.clamp(tx, tlo, thi)
    assert name_of(ember.result_type(ex, elo, ehi)) == name_of(want.dtype)
    got = ember.clamp(ex, elo, ehi)
    assert name_of(got.dtype) == name_of(want.dtype)
    assert got.tolist() == pytest.approx(want.tolist())


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_scalars_follow_the_default_dtype(default):
    ember.set_default_dtype(getattr(ember, default))
    torch.set_default_dtype(getattr(torch, default))
    try:
        for a, b in [(1.5, True), (2, 3.5), (True, False), (7, True)]:
            t = torch.result_type(torch.tensor(a), b)
            assert name_of(ember.result_type(ember.tensor(a), b)) == name_of(t)
        assert ember.result_type(ember.ones(2, dtype=ember.int16), 2.0) is getattr(ember, default)
        assert ember.result_type(ember.ones(2, dtype=ember.float16), 2.0) is ember.float16
        assert ember.result_type(ember.ones(2, dtype=ember.int16), 2) is ember.int16
        assert ember.get_default_dtype() is getattr(ember, default)
        assert ember.tensor([1.5]).dtype is getattr(ember, default)
    finally:
        ember.set_default_dtype(ember.float32)
        torch.set_default_dtype(torch.float32)


def test_set_default_dtype_refuses_integers():
    with pytest.raises(ember.DTypeError, match="only floating dtypes"):
        ember.set_default_dtype(ember.int64)
    assert ember.get_default_dtype() is ember.float32


def test_numpy_scalars_count_as_python_scalars():
    x = ember.ones(2, dtype=ember.int32)
    assert ember.result_type(x, np.float64(1.5)) is ember.float32
    assert ember.result_type(x, np.int64(3)) is ember.int32
    assert ember.result_type(x, np.bool_(True)) is ember.int32


def test_spellings():
    assert D.to_dtype("float64") is ember.float64
    assert D.to_dtype("torch.int32") is ember.int32
    assert D.to_dtype("ember.half") is ember.float16
    assert D.to_dtype(np.float32) is ember.float32
    assert D.to_dtype(np.dtype("uint8")) is ember.uint8
    assert D.to_dtype(bool) is ember.bool
    assert D.to_dtype(int) is ember.int64
    assert ember.float is ember.float32 and ember.double is ember.float64
    assert ember.long is ember.int64 and ember.half is ember.float16
    with pytest.raises(ember.DTypeError, match="not a dtype"):
        D.to_dtype("complex_thing")


def test_dtype_properties_match_torch():
    for n in NAMES:
        e, t = getattr(ember, n), getattr(torch, n)
        assert e.is_floating_point == t.is_floating_point, n
        assert e.is_signed == t.is_signed, n
        assert e.itemsize == t.itemsize, n
        assert repr(e) == f"ember.{n}"
