"""Comparisons, logical and bitwise ops and the float tests (isnan...): no gradients.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(LT, ember.tensor([1.0, 3.0]), ember.tensor([2.0, 2.0]))
tensor([ True, False])
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import dtypes as _dt
from ..._shape import broadcast_shapes
from ..base import Spec
from .kinds import Binary, Predicate, Unary, _require_integral


@dataclass(frozen=True)
class IsNan(Predicate):
    def forward(self, xp, x):
        return xp.isnan(x)


@dataclass(frozen=True)
class IsInf(Predicate):
    def forward(self, xp, x):
        return xp.isinf(x)


@dataclass(frozen=True)
class IsFinite(Predicate):
    def forward(self, xp, x):
        return xp.isfinite(x)


@dataclass(frozen=True)
class LogicalNot(Predicate):
    def forward(self, xp, x):
        return xp.logical_not(x)


@dataclass(frozen=True)
class BitwiseNot(Unary):
    differentiable = False

    def forward(self, xp, x):
        return xp.invert(x)

    def infer(self, x):
        _require_integral("bitwise_not", x)
        return Spec(tuple(x.shape), x.dtype)


class Compare(Binary):
    differentiable = False

    def infer(self, a, b):
        name = self.fname or self.name.lower()
        return Spec(broadcast_shapes(name, tuple(a.shape), tuple(b.shape)), _dt.bool_)


@dataclass(frozen=True)
class Eq(Compare):
    def forward(self, xp, a, b):
        return xp.equal(a, b)


@dataclass(frozen=True)
class Ne(Compare):
    def forward(self, xp, a, b):
        return xp.not_equal(a, b)


@dataclass(frozen=True)
class Lt(Compare):
    def forward(self, xp, a, b):
        return xp.less(a, b)


@dataclass(frozen=True)
class Le(Compare):
    def forward(self, xp, a, b):
        return xp.less_equal(a, b)


@dataclass(frozen=True)
class Gt(Compare):
    def forward(self, xp, a, b):
        return xp.greater(a, b)


@dataclass(frozen=True)
class Ge(Compare):
    def forward(self, xp, a, b):
        return xp.greater_equal(a, b)


@dataclass(frozen=True)
class IsClose(Compare):
    """|a - b| <= atol + rtol * |b| (or equal, or both NaN with ``equal_nan``)."""

    rtol: float = 1e-5
    atol: float = 1e-8
    equal_nan: bool = False
    fname = "isclose"

    def forward(self, xp, a, b):
        if a.dtype.kind == "b":
            return xp.equal(a, b)
        return xp.isclose(a, b, rtol=self.rtol, atol=self.atol, equal_nan=self.equal_nan)


@dataclass(frozen=True)
class LogicalAnd(Compare):
    fname = "logical_and"

    def forward(self, xp, a, b):
        return xp.logical_and(a, b)


@dataclass(frozen=True)
class LogicalOr(Compare):
    fname = "logical_or"

    def forward(self, xp, a, b):
        return xp.logical_or(a, b)


@dataclass(frozen=True)
class LogicalXor(Compare):
    fname = "logical_xor"

    def forward(self, xp, a, b):
        return xp.logical_xor(a, b)


class Bitwise(Binary):
    differentiable = False

    def infer(self, a, b):
        _require_integral(self.fname, a, b)
        return Binary.infer(self, a, b)


@dataclass(frozen=True)
class BitwiseAnd(Bitwise):
    fname = "bitwise_and"

    def forward(self, xp, a, b):
        return xp.bitwise_and(a, b)


@dataclass(frozen=True)
class BitwiseOr(Bitwise):
    fname = "bitwise_or"

    def forward(self, xp, a, b):
        return xp.bitwise_or(a, b)


@dataclass(frozen=True)
class BitwiseXor(Bitwise):
    fname = "bitwise_xor"

    def forward(self, xp, a, b):
        return xp.bitwise_xor(a, b)


EQ, NE, LT, LE, GT, GE = Eq(), Ne(), Lt(), Le(), Gt(), Ge()
LOGICAL_AND, LOGICAL_OR = LogicalAnd(), LogicalOr()
