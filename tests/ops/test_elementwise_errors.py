"""Bad inputs to elementwise ops give named errors (never a raw NumPy traceback)."""

import numpy as np
import pytest

import ember


@pytest.mark.parametrize(
    "fn, name",
    [
        (lambda a, b: a + b, "add"),
        (lambda a, b: a - b, "sub"),
        (lambda a, b: a * b, "mul"),
        (lambda a, b: a / b, "div"),
        (lambda a, b: a**b, "pow"),
        (lambda a, b: a // b, "floor_divide"),
        (lambda a, b: a % b, "remainder"),
        (lambda a, b: ember.fmod(a, b), "fmod"),
        (lambda a, b: ember.maximum(a, b), "maximum"),
        (lambda a, b: ember.atan2(a, b), "atan2"),
        (lambda a, b: a == b, "eq"),
        (lambda a, b: a >= b, "ge"),
        (lambda a, b: ember.where(a > 0, a, b), "where"),
        (lambda a, b: ember.logical_or(a, b), "logical_or"),
        (lambda a, b: ember.clamp(a, min=b), "clamp"),
    ],
)
def test_broadcast_mismatch_names_op_shapes_and_dimension(fn, name):
    a, b = ember.ones(2, 3), ember.ones(4)
    with pytest.raises(
        ember.ShapeError,
        match=rf"(^|\n){name}: shapes .*\(2, 3\).*\(4,\) cannot be broadcast together: "
        r"dimension -1 has sizes 3 and 4",
    ):
        fn(a, b)


def test_broadcast_mismatch_in_a_middle_dimension():
    with pytest.raises(ember.ShapeError, match=r"dimension -2 has sizes 3 and 5"):
        ember.ones(2, 3, 1) + ember.ones(5, 4)


def test_bool_subtraction_and_negation():
    b = ember.tensor([True, False])
    with pytest.raises(
        ember.DTypeError, match=r"sub: Subtraction, the `-` operator, with two bool"
    ):
        _ = b - b
    with pytest.raises(ember.DTypeError, match=r"neg: Negation, the `-` operator, on a bool"):
        _ = -b
    with pytest.raises(ember.DTypeError, match="abs"):
        ember.abs(b)
    for fn in (lambda: b // b, lambda: b % b, lambda: b**b, lambda: ember.floor(b)):
        with pytest.raises(ember.DTypeError, match="not implemented for 'Bool'"):
            fn()


def test_bitwise_on_floats():
    with pytest.raises(ember.DTypeError, match=r"bitwise_and: .*not implemented for 'Float'"):
        ember.ones(2) & ember.ones(2)
    with pytest.raises(ember.DTypeError, match=r"bitwise_not: .*not implemented for 'Double'"):
        ~ember.ones(2, dtype=ember.float64)
    with pytest.raises(ember.DTypeError, match=r"bitwise_or: .*not implemented for 'Float'"):
        ember.tensor([1]) | 1.5


def test_integer_division_by_zero():
    x = ember.tensor([1, 2])
    for fn, name in (
        (lambda: x // 0, "floor_divide"),
        (lambda: x % ember.tensor([1, 0]), "remainder"),
        (lambda: ember.fmod(x, 0), "fmod"),
        (lambda: ember.div(x, 0, rounding_mode="trunc"), "div"),
    ):
        with pytest.raises(ember.EmberError, match=rf"{name}: ZeroDivisionError"):
            fn()
    assert (x / 0).tolist() == [float("inf")] * 2  # true division is float


def test_integer_negative_power():
    with pytest.raises(ember.EmberError, match="Integers to negative integer powers"):
        ember.tensor([2]) ** -1
    with pytest.raises(ember.EmberError, match="Integers to negative integer powers"):
        ember.tensor([2]) ** ember.tensor([-1])


def test_where_and_masked_fill_need_bool_masks():
    x = ember.ones(2)
    with pytest.raises(ember.DTypeError, match="where: expected condition to be a boolean tensor"):
        ember.where(ember.tensor([1, 0]), x, x)
    with pytest.raises(ember.DTypeError, match="masked_fill: expected mask to be a boolean"):
        x.masked_fill(ember.tensor([1.0, 0.0]), 0)
    with pytest.raises(ember.EmberError, match="0-dimensional value tensor"):
        x.masked_fill(ember.tensor([True, False]), ember.ones(2))
    with pytest.raises(ember.ShapeError, match=r"masked_fill: shapes \(2,\) and \(3,\)"):
        x.masked_fill(ember.tensor([True, False, True]), 0)


def test_argument_errors():
    x = ember.ones(2)
    with pytest.raises(ember.EmberError, match="at least one of 'min' or 'max'"):
        ember.clamp(x)
    with pytest.raises(ember.EmberError, match="rounding_mode"):
        ember.div(x, 2, rounding_mode="round")
    with pytest.raises(ember.DTypeError, match="alpha must not be a floating point"):
        ember.add(ember.tensor([1]), ember.tensor([2]), alpha=0.5)
    with pytest.raises(ember.DTypeError, match="NumPy array"):
        x + np.ones(2)
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(ember.DTypeError, match="expected at least one Tensor"):
        ember.add(1, 2)


def test_non_tensor_arguments():
    with pytest.raises(ember.DTypeError, match="exp: unsupported operand of type str"):
        ember.exp("x")
    assert ember.exp(0.0).item() == 1.0
