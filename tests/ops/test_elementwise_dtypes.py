"""Result dtypes (and values) of every elementwise op for every input dtype, against PyTorch.

Where PyTorch refuses a dtype (abs of bool, bitwise ops on floats...), ember must refuse too.
"""

import numpy as np
import pytest
import torch

import ember

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64"]  # fmt: skip

UNARY = {
    "neg": lambda m, x: -x,
    "abs": lambda m, x: m.abs(x),
    "sign": lambda m, x: m.sign(x),
    "reciprocal": lambda m, x: m.reciprocal(x),
    "square": lambda m, x: m.square(x),
    "exp": lambda m, x: m.exp(x),
    "exp2": lambda m, x: m.exp2(x),
    "expm1": lambda m, x: m.expm1(x),
    "log": lambda m, x: m.log(x),
    "log1p": lambda m, x: m.log1p(x),
    "log2": lambda m, x: m.log2(x),
    "log10": lambda m, x: m.log10(x),
    "sqrt": lambda m, x: m.sqrt(x),
    "rsqrt": lambda m, x: m.rsqrt(x),
    "sin": lambda m, x: m.sin(x),
    "cos": lambda m, x: m.cos(x),
    "tan": lambda m, x: m.tan(x),
    "sinh": lambda m, x: m.sinh(x),
    "cosh": lambda m, x: m.cosh(x),
    "asin": lambda m, x: m.asin(x * 0),
    "acos": lambda m, x: m.acos(x * 0),
    "atan": lambda m, x: m.atan(x),
    "tanh": lambda m, x: m.tanh(x),
    "sigmoid": lambda m, x: m.sigmoid(x),
    "relu": lambda m, x: m.relu(x),
    "frac": lambda m, x: m.frac(x),
    "positive": lambda m, x: +x,
    "erf": lambda m, x: m.erf(x),
    "erfc": lambda m, x: m.erfc(x),
    "floor": lambda m, x: m.floor(x),
    "ceil": lambda m, x: m.ceil(x),
    "round": lambda m, x: m.round(x),
    "trunc": lambda m, x: m.trunc(x),
    "isnan": lambda m, x: m.isnan(x),
    "isinf": lambda m, x: m.isinf(x),
    "isfinite": lambda m, x: m.isfinite(x),
    "logical_not": lambda m, x: m.logical_not(x),
    "bitwise_not": lambda m, x: ~x,
    "pow2": lambda m, x: x**2,
    "pow_half": lambda m, x: x**0.5,
    "rpow": lambda m, x: 2**x,
    "rpow_float": lambda m, x: 2.5**x,
    "add_int": lambda m, x: x + 1,
    "add_float": lambda m, x: x + 1.5,
    "add_bool": lambda m, x: x + True,
    "mul_int": lambda m, x: x * 3,
    "div_int": lambda m, x: x / 2,
    "rdiv": lambda m, x: 2 / x,
    "floordiv_int": lambda m, x: x // 2,
    "mod_float": lambda m, x: x % 1.5,
    "gt_float": lambda m, x: x > 1.5,
    "eq_int": lambda m, x: x == 1,
    "clamp_int": lambda m, x: m.clamp(x, 0, 2),
    "clamp_float": lambda m, x: m.clamp(x, max=1.5),
    "where_scalar": lambda m, x: m.where(x > 1, x, 0.5),
    "masked_fill": lambda m, x: x.masked_fill(x > 1, 7),
    "and_int": lambda m, x: x & 1,
    "xor_bool": lambda m, x: x ^ True,
    "maximum_self": lambda m, x: m.maximum(x, x),
}


def _torch_dtype(name):
    return getattr(torch, name)


def _outcome(m, fn, name):
    x = m.tensor([1, 2, 3], dtype=getattr(m, name))
    try:
        out = fn(m, x)
    except Exception as e:  # noqa: BLE001  (recording which ops refuse which dtypes)
        return e
    return out


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_result_dtypes_match_torch(op):
    fn = UNARY[op]
    for name in DTYPES:
        t = _outcome(torch, fn, name)
        e = _outcome(ember, fn, name)
        if isinstance(t, Exception):
            assert isinstance(e, Exception), f"{op}({name}): torch raises {t!r}, ember gives {e!r}"
            assert isinstance(e, ember.EmberError), f"{op}({name}): not an EmberError: {e!r}"
            continue
        assert not isinstance(e, Exception), f"{op}({name}): ember raises {e!r}"
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (op, name)
        want = t.to(torch.float64).numpy()
        got = e.numpy().astype(np.float64)
        tol = 1e-2 if name in ("float16", "bfloat16") else 1e-6
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"{op}({name})")


def test_float_ops_follow_default_dtype():
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    try:
        x, tx = ember.tensor([1, 2]), torch.tensor([1, 2])
        for fn in (UNARY["exp"], UNARY["div_int"], UNARY["add_float"], UNARY["sigmoid"]):
            assert str(fn(ember, x).dtype).split(".")[-1] == str(fn(torch, tx).dtype).split(".")[-1]
        assert (ember.ones(2) * 2.5).dtype is ember.float64
    finally:
        torch.set_default_dtype(torch.float32)
        ember.set_default_dtype(ember.float32)
    assert (ember.tensor([1, 2]) / 2).dtype is ember.float32
