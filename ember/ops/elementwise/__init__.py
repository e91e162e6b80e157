"""Elementwise primitives, one family a module: ``arithmetic`` (add ... fmod, neg, abs, sign,
reciprocal, scalar power), ``math`` (exp, log, roots, trigonometry, ``a ** b``, rounding),
``activations`` (sigmoid, relu), ``compare`` (comparisons, logic, bitwise, isnan...),
``select`` (where, maximum / minimum, clamp) and ``cast``, on the kinds of ``kinds``. This
package re-exports them all, so every elementwise op is found in one namespace.

An op that elementwise fusion may compile declares its scalar expression once, as ``scalar``
beside its ``forward`` (see ``kinds``); a new fusable op adds that expression and a case in
``tests/static/test_fusion_table.py``, and nothing in ``ember.static.passes``.

>>> import ember
>>> from ember.ops.base import apply
>>> apply(MUL, ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
tensor([3., 8.])
"""

from .activations import Relu, ReluGrad, Sigmoid  # noqa: I001  (erf, which imports these, last)
from .arithmetic import (
    ADD,
    DIV,
    FLOOR_DIVIDE,
    MUL,
    NEG,
    SIGN,
    SUB,
    TRUNC_DIVIDE,
    ZEROS_LIKE,
    Abs,
    Add,
    Div,
    FloorDivide,
    Fmod,
    Mul,
    Neg,
    PowScalar,
    Reciprocal,
    Remainder,
    Sign,
    Sub,
    TruncDivide,
    ZerosLike,
    add,
    div,
    mul,
    neg,
    sub,
    zeros_like,
)
from .cast import Cast, _mask_to, cast
from .compare import (
    EQ,
    GE,
    GT,
    LE,
    LOGICAL_AND,
    LOGICAL_OR,
    LT,
    NE,
    Bitwise,
    BitwiseAnd,
    BitwiseNot,
    BitwiseOr,
    BitwiseXor,
    Compare,
    Eq,
    Ge,
    Gt,
    IsClose,
    IsFinite,
    IsInf,
    IsNan,
    Le,
    LogicalAnd,
    LogicalNot,
    LogicalOr,
    LogicalXor,
    Lt,
    Ne,
)
from .kinds import (
    Binary,
    Elementwise,
    Predicate,
    Unary,
    _int_zero_division,
    _require_integral,
    _torch_name,
    const_like,
)
from .math import (
    COS,
    COSH,
    EXP,
    LOG,
    POW,
    SIN,
    SINH,
    SQRT,
    Acos,
    Asin,
    Atan,
    Atan2,
    Ceil,
    Cos,
    Cosh,
    Exp,
    Expm1,
    Floor,
    Log,
    Log1p,
    Log2,
    Log10,
    LogOrZero,
    Pow,
    Round,
    Rounding,
    Rsqrt,
    Sin,
    Sinh,
    Sqrt,
    Tan,
    Tanh,
    Trunc,
    _one_minus_square,
    pow_,
)
from .select import WHERE, Clamp, ClampGrad, ClampTensor, Maximum, Minimum, Where, _Extremum, where

# The error function lives in its own file (its rational approximations are long); re-exported
# here so every elementwise primitive is found in one namespace.
from ..erf import Erf, Erfc, erf_array
