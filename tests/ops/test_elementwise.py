"""Op table for the elementwise family: forward vs NumPy, float64 gradcheck (broadcast,
non-contiguous, 0-d and 0-size variants), second order for smooth ops, PyTorch parity."""

import math

import numpy as np
import pytest

import ember

from .harness import OpCase, ember_inputs, generate

ERF = np.vectorize(math.erf, otypes=[float])
ERFC = np.vectorize(math.erfc, otypes=[float])
UNARY_SHAPES = [[(3, 4)], [()], [(0, 3)]]
BINARY_SHAPES = [[(3, 4), (4,)], [(2, 1, 3), (4, 1)], [(), (3,)], [(0, 3), (3,)]]


def uniform(lo, hi, shapes, dtype="float64"):
    return lambda rng: [rng.uniform(lo, hi, s).astype(dtype) for s in shapes]


def away_from(points, lo, hi, shapes, gap=0.1):
    """Uniform values in [lo, hi] at least ``gap`` away from each of ``points`` (kinks)."""

    def make(rng):
        out = []
        for s in shapes:
            a = rng.uniform(lo, hi, s)
            for p in points:
                near = np.abs(a - p) < gap
                a = np.where(near, p + np.where(a >= p, gap, -gap) * 2, a)
            out.append(a)
        return out

    return make


def mod_pair(shapes):
    """(a, b) with a / b at least 0.2 away from an integer: remainder is smooth there."""

    def make(rng):
        b = rng.uniform(1.0, 2.0, shapes[1]) * rng.choice([-1.0, 1.0], shapes[1])
        n = rng.integers(-3, 4, shapes[0]) + rng.uniform(0.2, 0.8, shapes[0])
        return [n * b, b]

    return make


def distinct_pair(shapes):
    """Two inputs whose elements differ by at least 0.2 (maximum/minimum are smooth there)."""

    def make(rng):
        a = rng.standard_normal(shapes[0])
        b = rng.standard_normal(shapes[1])
        d = a - b
        return [np.where(np.abs(d) < 0.2, a + 0.5, a), b]

    return make


def unary(name, fn, ref, lo=-2.0, hi=2.0, kinks=(), smooth=True, **kw):
    cases = []
    for shapes in UNARY_SHAPES:
        make = away_from(kinks, lo, hi, shapes) if kinks else uniform(lo, hi, shapes)
        cases.append(OpCase(name, fn, shapes, ref=ref, make=make, gradgrad=smooth, **kw))
    make = away_from(kinks, lo, hi, [(4, 3)]) if kinks else uniform(lo, hi, [(4, 3)])
    cases.append(
        OpCase(name + "_T", fn, [(4, 3)], ref=ref, make=make, gradgrad=smooth, transpose=True, **kw)
    )
    return cases


def binary(name, fn, ref, make=None, smooth=True, **kw):
    cases = []
    for shapes in BINARY_SHAPES + [[(4, 3), (4, 3)]]:
        mk = make(shapes) if make is not None else None
        transpose = shapes[0] == (4, 3)
        cases.append(
            OpCase(
                name + ("_T" if transpose else ""),
                fn,
                shapes,
                ref=ref,
                make=mk,
                gradgrad=smooth,
                transpose=transpose,
                **kw,
            )
        )
    return cases


def positive_pair(shapes):
    return uniform(0.5, 2.0, shapes)


def nonzero_second(shapes):
    def make(rng):
        a = rng.standard_normal(shapes[0])
        b = rng.uniform(0.5, 2.0, shapes[1]) * rng.choice([-1.0, 1.0], shapes[1])
        return [a, b]

    return make


def where_inputs(shapes):
    def make(rng):
        return [rng.random(shapes[0]) < 0.5] + [rng.standard_normal(s) for s in shapes[1:]]

    return make


def sigmoid(a):
    return 1 / (1 + np.exp(-a))


def np_round(a):
    return np.round(a)


CASES = (
    # -- arithmetic
    binary("add", lambda m, a, b: m.add(a, b), np.add)
    + binary("add_alpha", lambda m, a, b: m.add(a, b, alpha=2), lambda a, b: a + 2 * b)
    + binary("sub", lambda m, a, b: a - b, np.subtract)
    + binary("sub_alpha", lambda m, a, b: m.sub(a, b, alpha=0.5), lambda a, b: a - 0.5 * b)
    + binary("mul", lambda m, a, b: a * b, np.multiply)
    + binary("div", lambda m, a, b: a / b, np.divide, make=nonzero_second)
    + binary("pow", lambda m, a, b: a**b, np.power, make=positive_pair)
    + binary("atan2", lambda m, a, b: m.atan2(a, b), np.arctan2, make=nonzero_second)
    + binary(
        "maximum", lambda m, a, b: m.maximum(a, b), np.maximum, make=distinct_pair, smooth=False
    )
    + binary(
        "minimum", lambda m, a, b: m.minimum(a, b), np.minimum, make=distinct_pair, smooth=False
    )
    + binary("remainder", lambda m, a, b: a % b, np.remainder, make=mod_pair, smooth=False)
    + binary("fmod", lambda m, a, b: m.fmod(a, b), np.fmod, make=mod_pair, smooth=False)
    + binary(
        "div_floor",
        lambda m, a, b: m.div(a, b, rounding_mode="floor"),
        np.floor_divide,
        make=mod_pair,
        smooth=False,
    )
    + binary(
        "div_trunc",
        lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
        lambda a, b: np.trunc(a / b),
        make=mod_pair,
        smooth=False,
    )
    + [
        OpCase("rsub_scalar", lambda m, a: 3 - a, [(3, 4)], ref=lambda a: 3 - a),
        OpCase(
            "rdiv_scalar",
            lambda m, a: 2 / a,
            [(3,)],
            ref=lambda a: 2 / a,
            make=uniform(0.5, 2, [(3,)]),
        ),
        OpCase("rpow_scalar", lambda m, a: 2**a, [(3, 4)], ref=lambda a: 2.0**a),
        OpCase("pow_scalar_2", lambda m, a: a**2, [(3, 4)], ref=np.square, transpose=True),
        OpCase("pow_scalar_3", lambda m, a: a**3, [()], ref=lambda a: a**3),
        OpCase(
            "pow_scalar_half",
            lambda m, a: a**0.5,
            [(3,)],
            ref=np.sqrt,
            make=uniform(0.5, 2, [(3,)]),
        ),
        OpCase(
            "pow_scalar_neg",
            lambda m, a: m.pow(a, -1.5),
            [(3,)],
            ref=lambda a: a**-1.5,
            make=uniform(0.5, 2, [(3,)]),
        ),
        OpCase("pow_scalar_0", lambda m, a: a**0, [(3,)], ref=lambda a: a**0),
        OpCase(
            "pow_0d_exponent",
            lambda m, a, b: a**b,
            [(3,), ()],
            ref=np.power,
            make=uniform(0.5, 2, [(3,), ()]),
        ),
        OpCase(
            "floor_divide_op",
            lambda m, a, b: a // b,
            [(3, 4), (4,)],
            ref=np.floor_divide,
            make=mod_pair([(3, 4), (4,)]),
            grad=False,
        ),
        OpCase("neg_op", lambda m, a: -a, [(3, 4)], ref=np.negative, transpose=True),
    ]  # fmt: skip
    # -- unary
    + unary("neg", lambda m, a: m.neg(a), np.negative)
    + unary("abs", lambda m, a: m.abs(a), np.abs, kinks=(0,), smooth=False)
    + unary("sign", lambda m, a: m.sign(a), np.sign, kinks=(0,), smooth=False)
    + unary("reciprocal", lambda m, a: m.reciprocal(a), np.reciprocal, 0.5, 2.0)
    + unary("square", lambda m, a: m.square(a), np.square)
    + unary("exp", lambda m, a: m.exp(a), np.exp)
    + unary("exp2", lambda m, a: m.exp2(a), np.exp2)
    + unary("expm1", lambda m, a: m.expm1(a), np.expm1)
    + unary("log", lambda m, a: m.log(a), np.log, 0.5, 3.0)
    + unary("log1p", lambda m, a: m.log1p(a), np.log1p, -0.5, 2.0)
    + unary("log2", lambda m, a: m.log2(a), np.log2, 0.5, 3.0)
    + unary("log10", lambda m, a: m.log10(a), np.log10, 0.5, 3.0)
    + unary("sqrt", lambda m, a: m.sqrt(a), np.sqrt, 0.5, 3.0)
    + unary("rsqrt", lambda m, a: m.rsqrt(a), lambda a: 1 / np.sqrt(a), 0.5, 3.0)
    + unary("sin", lambda m, a: m.sin(a), np.sin)
    + unary("cos", lambda m, a: m.cos(a), np.cos)
    + unary("tan", lambda m, a: m.tan(a), np.tan, -1.2, 1.2)
    + unary("sinh", lambda m, a: m.sinh(a), np.sinh)
    + unary("cosh", lambda m, a: m.cosh(a), np.cosh)
    + unary("asin", lambda m, a: m.asin(a), np.arcsin, -0.9, 0.9)
    + unary("acos", lambda m, a: m.acos(a), np.arccos, -0.9, 0.9)
    + unary("atan", lambda m, a: m.atan(a), np.arctan)
    + unary("tanh", lambda m, a: m.tanh(a), np.tanh)
    + unary("sigmoid", lambda m, a: m.sigmoid(a), sigmoid, -6.0, 6.0)
    + unary("relu", lambda m, a: m.relu(a), lambda a: np.maximum(a, 0), kinks=(0,), smooth=False)
    + unary("erf", lambda m, a: m.erf(a), ERF, -3.0, 3.0, atol=1e-14, rtol=1e-13)
    + unary("erfc", lambda m, a: m.erfc(a), ERFC, -3.0, 6.0, atol=1e-14, rtol=1e-12)
    + unary("floor", lambda m, a: m.floor(a), np.floor, kinks=(-1, 0, 1), smooth=False)
    + unary("ceil", lambda m, a: m.ceil(a), np.ceil, kinks=(-1, 0, 1), smooth=False)
    + unary("trunc", lambda m, a: m.trunc(a), np.trunc, kinks=(-1, 0, 1), smooth=False)
    + unary("round", lambda m, a: m.round(a), np_round, kinks=(-1.5, -0.5, 0.5, 1.5), smooth=False)
    + unary("frac", lambda m, a: m.frac(a), lambda a: a - np.trunc(a), kinks=(-1, 0, 1))
    # -- clamping, selection
    + unary(
        "clamp",
        lambda m, a: m.clamp(a, -0.5, 0.7),
        lambda a: np.clip(a, -0.5, 0.7),
        kinks=(-0.5, 0.7),
        smooth=False,
    )
    + unary(
        "clamp_min",
        lambda m, a: a.clamp(min=0.3),
        lambda a: np.maximum(a, 0.3),
        kinks=(0.3,),
        smooth=False,
    )
    + unary(
        "clamp_max",
        lambda m, a: m.clamp(a, max=0.3),
        lambda a: np.minimum(a, 0.3),
        kinks=(0.3,),
        smooth=False,
    )
    + [
        OpCase(
            "clamp_tensor",
            lambda m, x, lo, hi: m.clamp(x, lo, hi),
            [(3, 4), (4,), (3, 1)],
            ref=lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
            gradgrad=False,
            make=lambda rng: [
                rng.uniform(-3, 3, (3, 4)),
                rng.uniform(-2, -1, (4,)),
                rng.uniform(1, 2, (3, 1)),
            ],
        ),
        OpCase(
            "clamp_tensor_min",
            lambda m, x, lo: m.clamp(x, min=lo),
            [(3, 4), (4,)],
            ref=np.maximum,
            gradgrad=False,
            make=distinct_pair([(3, 4), (4,)]),
        ),
        OpCase(
            "clamp_tensor_max",
            lambda m, x, hi: m.clamp(x, max=hi),
            [(3, 4), ()],
            ref=np.minimum,
            gradgrad=False,
            make=distinct_pair([(3, 4), ()]),
        ),
        OpCase(
            "where",
            lambda m, c, a, b: m.where(c, a, b),
            [(3, 4), (3, 4), (4,)],
            ref=np.where,
            make=where_inputs([(3, 4), (3, 4), (4,)]),
        ),
        OpCase(
            "where_bcast",
            lambda m, c, a, b: m.where(c, a, b),
            [(3, 1), (4,), ()],
            ref=np.where,
            make=where_inputs([(3, 1), (4,), ()]),
        ),
        OpCase(
            "where_scalar",
            lambda m, c, a: m.where(c, a, 0.5),
            [(3, 4), (3, 4)],
            ref=lambda c, a: np.where(c, a, 0.5),
            make=where_inputs([(3, 4), (3, 4)]),
        ),
        OpCase(
            "where_method",
            lambda m, c, a, b: a.where(c, b),
            [(2, 3), (2, 3), (2, 3)],
            ref=np.where,
            make=where_inputs([(2, 3), (2, 3), (2, 3)]),
        ),
        OpCase(
            "where_empty",
            lambda m, c, a, b: m.where(c, a, b),
            [(0, 3), (0, 3), (3,)],
            ref=np.where,
            make=where_inputs([(0, 3), (0, 3), (3,)]),
        ),
        OpCase(
            "masked_fill",
            lambda m, a, c: a.masked_fill(c, -2.0),
            [(3, 4), (4,)],
            ref=lambda a, c: np.where(c, -2.0, a),
            make=lambda rng: [rng.standard_normal((3, 4)), rng.random(4) < 0.5],
        ),
        OpCase(
            "masked_fill_tensor",
            lambda m, a, c, v: m.masked_fill(a, c, v),
            [(3, 4), (3, 1), ()],
            ref=lambda a, c, v: np.where(c, v, a),
            make=lambda rng: [
                rng.standard_normal((3, 4)),
                rng.random((3, 1)) < 0.5,
                np.float64(0.7),
            ],
        ),
    ]  # fmt: skip
)
generate(globals(), CASES)


class _InferChecker:
    """A stand-in tracer: every op's ``infer`` must predict its forward's shape and dtype."""

    def __init__(self):
        self.seen = set()

    def record(self, op, inputs):
        from ember._config import state
        from ember.ops.base import apply

        spec = op.infer(*inputs)
        state.tracer = None
        try:
            out = apply(op, *inputs)
        finally:
            state.tracer = self
        assert tuple(spec.shape) == tuple(out.shape), (op, spec, out.shape)
        assert spec.dtype is out.dtype, (op, spec, out.dtype)
        self.seen.add(type(op).__name__)
        return out


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_infer_matches_forward(case):
    from ember._config import state

    xs = ember_inputs(case, case.arrays(), False)
    checker = _InferChecker()
    state.tracer = checker
    try:
        case.fn(ember, *xs)
    finally:
        state.tracer = None
    assert checker.seen
