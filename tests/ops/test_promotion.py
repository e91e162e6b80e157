"""Type promotion and broadcasting against PyTorch, by Hypothesis.

Operands are dimensioned tensors, 0-d tensors and Python scalars (bool/int/float) of every
dtype; ``ember.result_type`` and the dtypes (and values) of arithmetic and comparison results
must equal PyTorch's, under both default float dtypes.
"""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64"]  # fmt: skip

tensor_operand = st.tuples(st.sampled_from(["dim", "0d"]), st.sampled_from(DTYPES))
scalar_operand = st.tuples(
    st.just("py"), st.sampled_from(["bool", "int", "float"])
)  # fmt: skip
operand = st.one_of(tensor_operand, scalar_operand)


def build(m, spec, which):
    kind, dt = spec
    if kind == "py":
        return {"bool": True, "int": 3 + which, "float": 1.5 + which}[dt]
    values = [1, 2] if kind == "dim" else 3 - which
    return m.tensor(values, dtype=getattr(m, dt))


def name_of(dtype):
    return str(dtype).split(".")[-1]


def outcome(fn, *args):
    try:
        out = fn(*args)
    except Exception as e:  # noqa: BLE001  (both libraries must refuse the same operands)
        return e
    return out


BINARY = {
    "add": lambda m, a, b: m.add(a, b) if isinstance(a, m.Tensor) or isinstance(b, m.Tensor)
    else None,
    "op_add": lambda m, a, b: a + b,
    "op_sub": lambda m, a, b: a - b,
    "op_mul": lambda m, a, b: a * b,
    "op_div": lambda m, a, b: a / b,
    "op_floordiv": lambda m, a, b: a // b,
    "op_mod": lambda m, a, b: a % b,
    "op_pow": lambda m, a, b: a**b,
    "op_lt": lambda m, a, b: a < b,
    "op_eq": lambda m, a, b: a == b,
    "op_and": lambda m, a, b: a & b,
    "where": lambda m, a, b: m.where(m.tensor([True, False]), a, b),
}  # fmt: skip


def check_pair(sa, sb, default):
    if sa[0] == "py" and sb[0] == "py":
        return
    ember.set_default_dtype(getattr(ember, default))
    torch.set_default_dtype(getattr(torch, default))
    try:
        ea, eb = build(ember, sa, 0), build(ember, sb, 1)
        ta, tb = build(torch, sa, 0), build(torch, sb, 1)
        assert name_of(ember.result_type(ea, eb)) == name_of(torch.result_type(ta, tb)), (sa, sb)
        for op, fn in BINARY.items():
            e, t = outcome(fn, ember, ea, eb), outcome(fn, torch, ta, tb)
            if isinstance(t, Exception):
                assert isinstance(e, Exception), f"{op}{sa, sb}: torch raises {t!r}, ember gave {e}"
                continue
            assert not isinstance(e, Exception), f"{op}{sa, sb}: ember raises {e!r}"
            assert name_of(e.dtype) == name_of(t.dtype), (op, sa, sb)
            assert tuple(e.shape) == tuple(t.shape)
            np.testing.assert_allclose(
                e.numpy().astype(np.float64), t.to(torch.float64).numpy(), rtol=1e-2, atol=1e-2,
                err_msg=f"{op}{sa, sb}",
            )  # fmt: skip
    finally:
        ember.set_default_dtype(ember.float32)
        torch.set_default_dtype(torch.float32)


@settings(max_examples=150, deadline=None)
@given(operand, operand, st.sampled_from(["float32", "float64"]))
def test_binary_promotion_matches_torch(sa, sb, default):
    check_pair(sa, sb, default)


@pytest.mark.parametrize("a", DTYPES)
@pytest.mark.parametrize("kind", ["dim", "0d"])
def test_every_tensor_dtype_pair(a, kind):
    """The full table (Hypothesis samples it; this walks it once)."""
    for b in DTYPES:
        check_pair(("dim", a), (kind, b), "float32")
    for s in ("bool", "int", "float"):
        check_pair((kind, a), ("py", s), "float32")


shape_dims = st.lists(st.sampled_from([1, 2, 3]), min_size=0, max_size=4)


@settings(max_examples=200, deadline=None)
@given(shape_dims, shape_dims, st.data())
def test_broadcasting_matches_torch(s1, s2, data):
    # make the shapes compatible by setting some dims to 1, or leave them clashing
    s2 = list(s2)
    clash = data.draw(st.booleans())
    for i in range(1, min(len(s1), len(s2)) + 1):
        if not clash and s1[-i] != s2[-i] and s1[-i] != 1:
            s2[-i] = data.draw(st.sampled_from([1, s1[-i]]))
    a, b = np.ones(s1), np.full(s2, 2.0)
    t = outcome(lambda: torch.tensor(a) * torch.tensor(b))
    e = outcome(lambda: ember.tensor(a) * ember.tensor(b))
    if isinstance(t, Exception):
        assert isinstance(e, ember.ShapeError)
        assert f"mul: shapes {tuple(s1)} and {tuple(s2)} cannot be broadcast" in str(e)
        assert str(e).splitlines()[0] == str(t).splitlines()[0]  # PyTorch's first line
    else:
        assert tuple(e.shape) == tuple(t.shape)
        assert ember.broadcast_shapes(s1, s2) == tuple(t.shape)


def test_literal_rules():
    i = ember.tensor([1, 2])
    assert (i / 2).dtype is ember.float32
    assert (i / i).dtype is ember.float32
    assert (i * 2.0).dtype is ember.float32
    assert (i * 2).dtype is ember.int64
    assert (ember.tensor([1, 2], dtype=ember.int8) + 1000 * 0 + 5).dtype is ember.int8
    assert (ember.ones(2, dtype=ember.float16) * 3.5).dtype is ember.float16
    assert (ember.ones(2, dtype=ember.float16) + ember.tensor(1.0, dtype=ember.float64)).dtype \
        is ember.float16  # fmt: skip
    assert (ember.tensor([True]) + ember.tensor([True])).dtype is ember.bool
    assert (ember.tensor([True]) + 1).dtype is ember.int64
    ember.set_default_dtype(ember.float64)
    assert (i / 2).dtype is ember.float64
    assert (i * 2.0).dtype is ember.float64
    assert ember.exp(i).dtype is ember.float64
    assert (ember.ones(2, dtype=ember.float32) * 2.0).dtype is ember.float32
    ember.set_default_dtype(ember.float32)
