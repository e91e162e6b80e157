"""Comparisons (== != < <= > >=), NaN/Inf tests, isclose / allclose / equal.

Operands are promoted to a common dtype first (``int_tensor < 2.5`` compares as floats); the
results are bool tensors with no gradient.

>>> import ember
>>> ember.tensor([1, 2, 3]) >= 2
tensor([False,  True,  True])
"""

from __future__ import annotations

import numbers

import numpy as np

from .._errors import DTypeError
from .._tensor import Tensor
from ..ops import elementwise as E
from ..ops.base import apply
from ._promote import as_tensor_arg, binary

_ISNAN, _ISINF, _ISFINITE = E.IsNan(), E.IsInf(), E.IsFinite()


def _comparison(name: str, op, doc: str):
    """The public function ``name(input, other)``: promote both operands, then apply ``op``."""

    def compare(input, other) -> Tensor:
        a, b = binary(input, other, name)
        return apply(op, a, b)

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = doc
    return compare


def _elementwise_test(name: str, op, doc: str):
    """The public function ``name(input)``: apply the bool-valued unary ``op``."""

    def test(input) -> Tensor:
        return apply(op, as_tensor_arg(input, name))

    test.__name__ = test.__qualname__ = name
    test.__doc__ = doc
    return test


eq = _comparison(
    "eq",
    E.EQ,
    """``input == other`` elementwise.

    >>> import ember
    >>> ember.eq(ember.tensor([1, 2]), 2)
    tensor([False,  True])
    """,
)
ne = _comparison(
    "ne",
    E.NE,
    """``input != other`` elementwise.

    >>> import ember
    >>> ember.ne(ember.tensor([1, 2]), 2)
    tensor([ True, False])
    """,
)
lt = _comparison(
    "lt",
    E.LT,
    """``input < other`` elementwise.

    >>> import ember
    >>> ember.lt(ember.tensor([1, 3]), 2)
    tensor([ True, False])
    """,
)
le = _comparison(
    "le",
    E.LE,
    """``input <= other`` elementwise.

    >>> import ember
    >>> ember.le(ember.tensor([1, 3]), 1)
    tensor([ True, False])
    """,
)
gt = _comparison(
    "gt",
    E.GT,
    """``input > other`` elementwise.

    >>> import ember
    >>> ember.gt(ember.tensor([1, 3]), 2)
    tensor([False,  True])
    """,
)
ge = _comparison(
    "ge",
    E.GE,
    """``input >= other`` elementwise.

    >>> import ember
    >>> ember.ge(ember.tensor([1, 3]), 3)
    tensor([False,  True])
    """,
)
isnan = _elementwise_test(
    "isnan",
    _ISNAN,
    """Where elements are NaN.

    >>> import ember
    >>> ember.isnan(ember.tensor([1.0, float("nan")]))
    tensor([False,  True])
    """,
)
isinf = _elementwise_test(
    "isinf",
    _ISINF,
    """Where elements are +-infinity.

    >>> import ember
    >>> ember.isinf(ember.tensor([1.0, float("-inf")]))
    tensor([False,  True])
    """,
)
isfinite = _elementwise_test(
    "isfinite",
    _ISFINITE,
    """Where elements are neither NaN nor infinite.

    >>> import ember
    >>> ember.isfinite(ember.tensor([1.0, float("inf"), float("nan")]))
    tensor([ True, False, False])
    """,
)


def isposinf(input) -> Tensor:
    """Where elements are +infinity.

    >>> import ember
    >>> ember.isposinf(ember.tensor([float("inf"), float("-inf")]))
    tensor([ True, False])
    """
    x = as_tensor_arg(input, "isposinf")
    return apply(E.LOGICAL_AND, apply(_ISINF, x), apply(E.GT, x, E.const_like(x, 0)))


def isneginf(input) -> Tensor:
    """Where elements are -infinity.

    >>> import ember
    >>> ember.isneginf(ember.tensor([float("inf"), float("-inf")]))
    tensor([False,  True])
    """
    x = as_tensor_arg(input, "isneginf")
    return apply(E.LOGICAL_AND, apply(_ISINF, x), apply(E.LT, x, E.const_like(x, 0)))


def isclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor:
    """Where ``|input - other| <= atol + rtol * |other|`` (both tensors of one dtype).

    >>> import ember
    >>> ember.isclose(ember.tensor([1.0, 2.0]), ember.tensor([1.0 + 1e-9, 2.1]))
    tensor([ True, False])
    """
    a = as_tensor_arg(input, "isclose")
    b = as_tensor_arg(other, "isclose", a.dtype if not isinstance(other, Tensor) else None)
    if a.dtype is not b.dtype:
        raise DTypeError(
            f"isclose: expected both tensors to have the same dtype, got {a.dtype} and {b.dtype} "
            f"({E._torch_name(a.dtype)} did not match {E._torch_name(b.dtype)})"
        )
    if rtol < 0 or atol < 0:
        raise DTypeError(
            f"isclose: rtol and atol must be non-negative, got rtol={rtol}, atol={atol}"
        )
    return apply(E.IsClose(float(rtol), float(atol), bool(equal_nan)), a, b)


def allclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """Whether ``isclose`` holds everywhere (a Python bool).

    >>> import ember
    >>> ember.allclose(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0 + 1e-7]))
    True
    """
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input: Tensor, other: Tensor) -> bool:
    """Whether both tensors have the same shape and elements (a Python bool).

    >>> import ember
    >>> ember.equal(ember.tensor([1, 2]), ember.tensor([1.0, 2.0]))
    True
    """
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(eq(input, other)._data.all())


def _dunder(fn):
    """The operator form: NotImplemented for operands that are not tensors or numbers, so
    ``t == None`` is False and ``t == 'a'`` is False, as in PyTorch."""

    def op(self, other):
        if not isinstance(other, (Tensor, numbers.Number, np.generic)):
            return NotImplemented
        return fn(self, other)

    op.__name__ = f"__{fn.__name__}__"
    op.__doc__ = fn.__doc__
    return op


greater = gt
greater_equal = ge
less = lt
less_equal = le
not_equal = ne

__all__ = [
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
    "not_equal", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isclose", "allclose",
    "equal",
]  # fmt: skip

TENSOR_METHODS = {name: globals()[name] for name in __all__}
TENSOR_METHODS.update(
    {
        "__eq__": _dunder(eq),
        "__ne__": _dunder(ne),
        "__lt__": _dunder(lt),
        "__le__": _dunder(le),
        "__gt__": _dunder(gt),
        "__ge__": _dunder(ge),
    }
)
