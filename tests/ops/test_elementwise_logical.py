"""Logical and bitwise ops, ``& | ^ ~``: op table, PyTorch parity, errors on floats."""

import numpy as np
import pytest
import torch

import ember

from .harness import OpCase, generate


def bools(*shapes):
    return lambda rng: [rng.random(s) < 0.5 for s in shapes]


def ints(*shapes, dtype="int64"):
    return lambda rng: [rng.integers(-8, 9, s).astype(dtype) for s in shapes]


def mixed(rng):
    return [rng.integers(-1, 2, (3, 4)).astype(np.float64), rng.random(4) < 0.5]


B2 = [(3, 4), (4,)]
CASES = [
    OpCase("logical_and", lambda m, a, b: m.logical_and(a, b), B2, ref=np.logical_and, make=mixed),
    OpCase("logical_or", lambda m, a, b: m.logical_or(a, b), B2, ref=np.logical_or, make=mixed),
    OpCase("logical_xor", lambda m, a, b: m.logical_xor(a, b), B2, ref=np.logical_xor, make=mixed),
    OpCase("logical_not", lambda m, a: m.logical_not(a), [(3, 4)], ref=np.logical_not,
           make=lambda rng: [rng.integers(-1, 2, (3, 4)).astype(np.float64)]),
    OpCase("logical_and_method", lambda m, a, b: a.logical_and(b), B2, ref=np.logical_and,
           make=bools(*B2)),
    OpCase("and_bool", lambda m, a, b: a & b, B2, ref=np.logical_and, make=bools(*B2)),
    OpCase("or_bool", lambda m, a, b: a | b, B2, ref=np.logical_or, make=bools(*B2)),
    OpCase("xor_bool", lambda m, a, b: a ^ b, B2, ref=np.logical_xor, make=bools(*B2)),
    OpCase("invert_bool", lambda m, a: ~a, [(3, 4)], ref=np.logical_not, make=bools((3, 4))),
    OpCase("and_int", lambda m, a, b: a & b, B2, ref=np.bitwise_and, make=ints(*B2)),
    OpCase("or_int", lambda m, a, b: a | b, B2, ref=np.bitwise_or, make=ints(*B2)),
    OpCase("xor_int", lambda m, a, b: m.bitwise_xor(a, b), B2, ref=np.bitwise_xor, make=ints(*B2)),
    OpCase("invert_int", lambda m, a: ~a, [(3, 4)], ref=np.invert, make=ints((3, 4))),
    OpCase("invert_uint8", lambda m, a: m.bitwise_not(a), [(5,)], ref=np.invert,
           make=lambda rng: [rng.integers(0, 255, 5).astype(np.uint8)]),
    OpCase("and_int_bool", lambda m, a, b: a & b, B2, ref=np.bitwise_and,
           make=lambda rng: [rng.integers(-8, 9, (3, 4)), rng.random(4) < 0.5]),
    OpCase("and_rscalar", lambda m, a: 6 & a, [(4,)], ref=lambda a: 6 & a, make=ints((4,))),
    OpCase("or_rscalar", lambda m, a: 6 | a, [(4,)], ref=lambda a: 6 | a, make=ints((4,))),
    OpCase("and_0d", lambda m, a, b: a & b, [(), (3,)], ref=np.bitwise_and,
           make=ints((), (3,), dtype="int32")),
    OpCase("and_empty", lambda m, a, b: a & b, [(0, 2), (2,)], ref=np.bitwise_and,
           make=ints((0, 2), (2,), dtype="int16")),
    OpCase("bitwise_and", lambda m, a, b: m.bitwise_and(a, b), B2, ref=np.bitwise_and,
           make=ints(*B2)),
    OpCase("bitwise_or", lambda m, a, b: m.bitwise_or(a, b), B2, ref=np.bitwise_or,
           make=bools(*B2)),
    OpCase("bitwise_xor", lambda m, a, b: a.bitwise_xor(b), B2, ref=np.bitwise_xor,
           make=ints(*B2, dtype="int32")),
    OpCase("bitwise_not", lambda m, a: m.bitwise_not(a), [(3, 4)], ref=np.invert,
           make=ints((3, 4))),
]  # fmt: skip
for _c in CASES:
    _c.grad = False
generate(globals(), CASES)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x & 1,
        lambda m, x: x | x,
        lambda m, x: m.bitwise_xor(x, 1),
        lambda m, x: ~x,
        lambda m, x: m.bitwise_not(x),
        lambda m, x: m.tensor([3]) & x,
    ],
)
def test_bitwise_on_floats_is_an_error(fn):
    with pytest.raises((NotImplementedError, TypeError)):
        fn(torch, torch.ones(2))
    with pytest.raises(ember.DTypeError, match=r"bitwise_\w+.*not implemented for 'Float'"):
        fn(ember, ember.ones(2))


def test_bitwise_dtypes_follow_promotion():
    u8 = [5, 6]
    for fn in (
        lambda m: m.tensor(u8, dtype=m.uint8) ^ m.tensor(u8, dtype=m.int8),
        lambda m: m.tensor([True, False]) & 1,
        lambda m: m.tensor([True, False]) & True,
        lambda m: m.tensor(u8, dtype=m.int16) | m.tensor(3),
    ):
        e, t = fn(ember), fn(torch)
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert e.tolist() == t.tolist()


def test_logical_results_are_bool_and_have_no_grad():
    x = ember.tensor([0.0, 1.5], requires_grad=True)
    y = ember.logical_and(x, x)
    assert y.dtype is ember.bool and not y.requires_grad
