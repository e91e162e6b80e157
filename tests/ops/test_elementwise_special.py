"""Elementwise edge cases against PyTorch: ties, kinks, zeros, NaN/Inf, signs, erf accuracy."""

import math

import numpy as np
import pytest
import torch

import ember

NAN, INF = float("nan"), float("inf")


def run_both(fn, *arrays, grad=True, weight=None):
    """fn on ember and torch tensors (float inputs require grad); returns both outputs and grads."""
    results = []
    for m in (ember, torch):
        xs = []
        for a in arrays:
            t = m.tensor(np.asarray(a))
            if grad and t.dtype.is_floating_point:
                t.requires_grad_()
            xs.append(t)
        out = fn(m, *xs)
        grads = None
        if grad and out.requires_grad:
            w = np.ones(tuple(out.shape)) if weight is None else weight
            out.backward(m.tensor(w, dtype=out.dtype))
            grads = [None if x.grad is None else x.grad.numpy() for x in xs]
        results.append((out.detach().numpy(), str(out.dtype).split(".")[-1], grads))
    return results


def assert_parity(fn, *arrays, grad=True, atol=1e-12, rtol=1e-12):
    (eo, edt, eg), (to, tdt, tg) = run_both(fn, *arrays, grad=grad)
    assert edt == tdt
    np.testing.assert_allclose(eo.astype(np.float64), to.astype(np.float64), atol=atol, rtol=rtol)
    if grad and tg is not None:
        for e, t in zip(eg, tg):
            if t is None:
                assert e is None or not np.any(e)
            else:
                np.testing.assert_allclose(e, t, atol=atol, rtol=rtol)


# -- erf ---------------------------------------------------------------------------------------


def test_erf_matches_math_erf_to_float64_precision():
    x = np.concatenate(
        [
            np.linspace(-7, 7, 20001),
            np.array([0.0, -0.0, 0.46875, -0.46875, 4.0, -4.0, 1e-300, 5e-324, 26.5, 27.0, 1e3]),
        ]
    )
    got = ember.erf(ember.tensor(x)).numpy()
    want = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(got, want, rtol=2e-15, atol=1e-300)
    got_c = ember.erfc(ember.tensor(x)).numpy()
    want_c = np.array([math.erfc(v) for v in x])
    np.testing.assert_allclose(got_c, want_c, rtol=5e-14, atol=1e-300)


def test_erf_special_values_and_torch_parity():
    x = np.array([NAN, INF, -INF, 0.0, 30.0, -30.0, 0.3, 2.0, 5.0])
    assert_parity(lambda m, t: m.erf(t), x, grad=False)
    assert_parity(lambda m, t: m.erfc(t), x, grad=False)
    x32 = np.linspace(-5, 5, 101).astype(np.float32)
    assert_parity(lambda m, t: m.erf(t), x32, grad=False, atol=1e-7, rtol=1e-6)
    assert_parity(lambda m, t: m.erf(t), np.linspace(-3, 3, 13), atol=1e-12)


def test_erf_low_precision_dtypes():
    for dt in (ember.float16, ember.bfloat16):
        x = ember.linspace(-3, 3, 7, dtype=dt)
        y = ember.erf(x)
        assert y.dtype is dt
        np.testing.assert_allclose(
            y.float().numpy(), [math.erf(v) for v in x.float().numpy()], atol=1e-2
        )


# -- kinks and ties ----------------------------------------------------------------------------


def test_maximum_minimum_split_ties_and_nan():
    a = np.array([1.0, 2.0, 3.0, NAN, 0.0])
    b = np.array([1.0, 3.0, 2.0, 1.0, NAN])
    assert_parity(lambda m, x, y: m.maximum(x, y), a, b)
    assert_parity(lambda m, x, y: m.minimum(x, y), a, b)
    assert_parity(lambda m, x, y: m.maximum(x, y), [[1.0, 2.0]], [[1.0], [2.0]])


def test_clamp_gradients_at_bounds_and_crossed_bounds():
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, NAN])
    assert_parity(lambda m, t: m.clamp(t, 0.0, 1.0), x)
    assert_parity(lambda m, t: m.clamp(t, min=1.5, max=0.5), x)
    lo = np.array([0.0, 0.0, 0.7, 1.0, 3.0, 0.0])
    hi = np.array([1.0, 0.0, 0.6, 1.0, 2.0, 1.0])
    assert_parity(lambda m, t, a, b: m.clamp(t, a, b), x, lo, hi)
    assert_parity(lambda m, t, a: m.clamp(t, min=a), x, lo)
    assert_parity(lambda m, t, b: m.clamp(t, max=b), x, hi)


def test_clamp_dtypes():
    i = np.array([1, 5, 9])
    for kw in ({"min": 2}, {"min": 2.5}, {"max": 4}, {"min": 2, "max": 7.5}):
        assert_parity(lambda m, t, kw=kw: m.clamp(t, **kw), i, grad=False)
    assert_parity(lambda m, t, b: m.clamp(t, min=b), i, np.array(2.5, np.float32), grad=False)


def test_abs_relu_sqrt_sign_at_zero():
    x = np.array([-1.0, 0.0, -0.0, 2.0])
    assert_parity(lambda m, t: m.abs(t), x)
    assert_parity(lambda m, t: m.relu(t), x)
    assert_parity(lambda m, t: m.sign(t), np.array([NAN, -2.0, 0.0, 3.0]))
    assert_parity(lambda m, t: m.sqrt(t), np.array([0.0, 1.0, 4.0]))


def test_pow_gradients_at_zero():
    base = np.array([0.0, 0.0, 0.0, 2.0, -1.5, 0.0])
    expo = np.array([0.0, 1.0, 2.0, 0.0, 2.0, -1.0])
    assert_parity(lambda m, a, b: m.pow(a, b), base, expo)
    for e in (0, 1, 2, 0.5, -1.0, 3):
        assert_parity(lambda m, a, e=e: a**e, np.array([0.0, 1.5, 2.0]))
    assert_parity(lambda m, b: 2.0**b, np.array([0.0, -1.0, 3.0]))
    assert_parity(lambda m, b: 0.0**b, np.array([0.0, 1.0, 3.0]))


def test_sigmoid_extremes():
    x = np.array([-800.0, -40.0, -1.0, 0.0, 1.0, 40.0, 800.0])
    assert_parity(lambda m, t: m.sigmoid(t), x, rtol=1e-12, atol=0)
    x32 = x.astype(np.float32)
    assert_parity(lambda m, t: m.sigmoid(t), x32, rtol=1e-6, atol=0)


def test_tanh_exp_log_special_values():
    x = np.array([NAN, INF, -INF, 0.0, 1e-300])
    for f in ("tanh", "exp", "expm1", "atan", "sigmoid"):
        assert_parity(lambda m, t, f=f: getattr(m, f)(t), x, grad=False)
    with np.errstate(all="ignore"):
        for f in ("log", "log1p", "log2", "log10", "sqrt", "rsqrt"):
            assert_parity(lambda m, t, f=f: getattr(m, f)(t), np.array([-1.0, 0.0, INF, NAN]),
                          grad=False)  # fmt: skip


# -- integer and rounding semantics ------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.float32, np.float64])
def test_division_family_signs(dtype):
    a = np.array([-7, -6, -1, 0, 1, 6, 7], dtype=dtype)
    b = np.array([2, -2, 3, -3, -2, 4, -4], dtype=dtype)
    for fn in (
        lambda m, x, y: m.floor_divide(x, y),
        lambda m, x, y: m.div(x, y, rounding_mode="floor"),
        lambda m, x, y: m.div(x, y, rounding_mode="trunc"),
        lambda m, x, y: m.div(x, y),
        lambda m, x, y: m.remainder(x, y),
        lambda m, x, y: m.fmod(x, y),
        lambda m, x, y: x % y,
        lambda m, x, y: x // y,
        lambda m, x, y: m.remainder(x, 3),
        lambda m, x, y: m.remainder(-5, y),
        lambda m, x, y: 7 // y,
        lambda m, x, y: -7 % y,
    ):
        assert_parity(fn, a, b, grad=False, rtol=1e-6)


def test_float_division_by_zero_like_torch():
    a = np.array([1.0, -1.0, 0.0, 5.5])
    b = np.array([0.0, 0.0, 0.0, 0.0])
    with np.errstate(all="ignore"):
        for fn in (
            lambda m, x, y: x / y,
            lambda m, x, y: x // y,
            lambda m, x, y: m.div(x, y, rounding_mode="trunc"),
            lambda m, x, y: x % y,
            lambda m, x, y: m.fmod(x, y),
        ):
            assert_parity(fn, a, b, grad=False)


def test_remainder_fmod_gradients():
    a = np.array([-5.5, 5.5, 3.2, -3.2])
    b = np.array([2.0, -2.0, 1.5, 1.5])
    assert_parity(lambda m, x, y: m.remainder(x, y), a, b)
    assert_parity(lambda m, x, y: m.fmod(x, y), a, b)
    assert_parity(lambda m, x, y: m.div(x, y, rounding_mode="floor"), a, b)


def test_round_half_even_and_decimals():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1.2345, -1.2355, 123.456])
    assert_parity(lambda m, t: m.round(t), x)
    for d in (1, 2, -1):
        assert_parity(lambda m, t, d=d: m.round(t, decimals=d), x, rtol=1e-12)
    i = np.array([-3, 4])
    for f in ("round", "floor", "ceil", "trunc", "sign", "abs", "neg", "relu", "square"):
        assert_parity(lambda m, t, f=f: getattr(m, f)(t), i, grad=False)


def test_integer_power():
    i = np.array([-3, 0, 2, 5])
    assert_parity(lambda m, t: t**2, i, grad=False)
    assert_parity(lambda m, t: t**0, i, grad=False)
    assert_parity(lambda m, t: 2 ** t.abs(), i, grad=False)
    assert_parity(lambda m, t: t**2.5, np.abs(i), grad=False, rtol=1e-6)
    assert_parity(lambda m, t: m.pow(t, t.abs()), i, grad=False)


def test_results_are_new_tensors_for_integer_rounding():
    x = ember.tensor([1, 2])
    y = ember.floor(x)
    y += 1
    assert x.tolist() == [1, 2]


def test_second_order_through_where_and_extremes():
    x = ember.tensor([0.5, -1.0, 2.0], dtype=ember.float64, requires_grad=True)
    y = ember.where(x > 0, x**3, ember.maximum(x, x * 2))
    (g,) = ember.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [3.0, 0.0, 12.0])
