"""dtypes and PyTorch's type-promotion rules.

>>> import ember
>>> ember.promote_types(ember.uint8, ember.int8)
ember.int16
>>> (ember.ones(2, dtype=ember.int32) + 2.5).dtype
ember.float32
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ._errors import DTypeError

BOOL, INT, FLOAT = 0, 1, 2  # promotion categories, in order


class DType:
    """An element type: wraps a NumPy dtype and knows its promotion category."""

    __slots__ = ("name", "np", "category", "itemsize", "is_floating_point", "is_signed")

    def __init__(self, name: str, np_dtype, category: int) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category
        self.itemsize = self.np.itemsize
        self.is_floating_point = category == FLOAT
        self.is_signed = category == FLOAT or (category == INT and self.np.kind == "i")

    def __repr__(self) -> str:
        return f"ember.{self.name}"

    def __reduce__(self):
        return (to_dtype, (self.name,))

    @property
    def is_complex(self) -> bool:
        return False

    def to_real(self) -> DType:
        return self


bool_ = DType("bool", np.bool_, BOOL)
uint8 = DType("uint8", np.uint8, INT)
int8 = DType("int8", np.int8, INT)
int16 = DType("int16", np.int16, INT)
int32 = DType("int32", np.int32, INT)
int64 = DType("int64", np.int64, INT)
float16 = DType("float16", np.float16, FLOAT)
bfloat16 = DType("bfloat16", ml_dtypes.bfloat16, FLOAT)
float32 = DType("float32", np.float32, FLOAT)
float64 = DType("float64", np.float64, FLOAT)

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
FLOAT_DTYPES = (float16, bfloat16, float32, float64)
INT_DTYPES = (uint8, int8, int16, int32, int64)

_BY_NP = {d.np: d for d in ALL_DTYPES}
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NAME.update(
    {
        "float": float32,
        "double": float64,
        "half": float16,
        "long": int64,
        "int": int32,
        "short": int16,
        "char": int8,
        "byte": uint8,
    }
)

_default_float = [float32]


_BF16_NP = np.dtype(ml_dtypes.bfloat16)


def is_float_np(np_dtype) -> bool:
    """Whether a NumPy dtype holds floats, counting bfloat16 (ml_dtypes gives it kind ``'V'``).

    >>> import numpy as np
    >>> from ember import dtypes
    >>> dtypes.is_float_np(np.dtype(np.float16)), dtypes.is_float_np(dtypes.bfloat16.np)
    (True, True)
    """
    return np_dtype.kind == "f" or np_dtype == _BF16_NP


def widen_half(a):
    """``a`` in float32 when it holds 2-byte floats (float16, bfloat16), else ``a`` itself.

    Sums, softmax and the like accumulate half-precision inputs in float32 (as PyTorch does)
    and cast back, since a bfloat16 running sum loses whole units after a few hundred terms.

    >>> import numpy as np
    >>> from ember import dtypes
    >>> dtypes.widen_half(np.ones(2, dtypes.bfloat16.np)).dtype
    dtype('float32')
    """
    return a.astype(np.float32) if a.dtype.itemsize == 2 and is_float_np(a.dtype) else a


def get_default_dtype() -> DType:
    """The dtype of float literals and of ``ember.tensor([1.5])``: float32 unless changed.

    >>> import ember
    >>> ember.get_default_dtype()
    ember.float32
    """
    return _default_float[0]


def set_default_dtype(dtype) -> None:
    """Set the default floating dtype (float32 or float64, as in PyTorch).

    >>> import ember
    >>> ember.set_default_dtype(ember.float64); ember.tensor([1.5]).dtype
    ember.float64
    >>> ember.set_default_dtype(ember.float32)
    """
    d = to_dtype(dtype)
    if not d.is_floating_point:
        raise DTypeError(f"set_default_dtype: only floating dtypes are allowed, got {d}")
    _default_float[0] = d


def from_numpy_dtype(np_dtype) -> DType:
    """The ember dtype of a NumPy dtype (errors for dtypes ember has no counterpart for)."""
    d = _BY_NP.get(np_dtype)
    if d is None:
        d = _BY_NP.get(np.dtype(np_dtype))
        if d is None:
            raise DTypeError(f"ember has no dtype for NumPy's {np.dtype(np_dtype)}")
    return d


def to_dtype(spec) -> DType:
    """Turn a dtype spelling (ember dtype, NumPy dtype, Python type, name) into an ember DType.

    Python's ``float`` means float64 and ``int`` int64, as ``dtype=float`` does in PyTorch.

    >>> import ember
    >>> ember.dtypes.to_dtype("float64"), ember.dtypes.to_dtype(float), ember.dtypes.to_dtype(int)
    (ember.float64, ember.float64, ember.int64)
    """
    if isinstance(spec, DType):
        return spec
    if spec is float:
        return float64
    if spec is int:
        return int64
    if spec is bool:
        return bool_
    if isinstance(spec, str):
        d = _BY_NAME.get(spec.removeprefix("ember.").removeprefix("torch."))
        if d is not None:
            return d
    legacy = getattr(spec, "_ember_dtype", None)
    if legacy is not None:
        return legacy
    if isinstance(spec, str) or spec is None:
        raise DTypeError(f"not a dtype: {spec!r}")
    try:
        return from_numpy_dtype(np.dtype(spec))
    except TypeError:
        raise DTypeError(f"not a dtype: {spec!r}") from None


def _int_promote(a: DType, b: DType) -> DType:
    return _BY_NP[np.promote_types(a.np, b.np)]


def promote_types(a: DType, b: DType) -> DType:
    """The smallest dtype both ``a`` and ``b`` convert to, by PyTorch's table.

    >>> import ember
    >>> ember.promote_types(ember.float16, ember.bfloat16)
    ember.float32
    """
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == INT:
        return _int_promote(a, b)
    if a.category == FLOAT:
        if a.itemsize == b.itemsize:  # float16 with bfloat16
            return float32
        return a if a.itemsize > b.itemsize else b
    return a


def _scalar_category(x) -> int:
    if isinstance(x, (bool, np.bool_)):
        return BOOL
    if isinstance(x, (int, np.integer)):
        return INT
    if isinstance(x, (float, np.floating)):
        return FLOAT
    raise DTypeError(f"unsupported scalar type {type(x).__name__} ({x!r})")


def _default_for(category: int) -> DType:
    return (bool_, int64, get_default_dtype())[category]


def result_type(*operands) -> DType:
    """The dtype PyTorch gives an op over these tensors and Python scalars.

    Dimensioned tensors decide; 0-d tensors and Python scalars only move the result to a higher
    category (bool < integer < floating), never to a wider type of the same category.

    >>> import ember
    >>> ember.result_type(ember.ones(2, dtype=ember.int32), 2.5)
    ember.float32
    >>> half, double = ember.float16, ember.float64
    >>> ember.result_type(ember.ones(2, dtype=half), ember.tensor(1.0, dtype=double))
    ember.float16
    """
    dim = zero = None
    scalar_cat = -1
    for x in operands:
        dt = getattr(x, "dtype", None)
        if isinstance(dt, DType):
            if x.ndim:
                dim = dt if dim is None else promote_types(dim, dt)
            else:
                zero = dt if zero is None else promote_types(zero, dt)
        else:
            scalar_cat = max(scalar_cat, _scalar_category(x))
    result = dim
    if zero is not None and (result is None or zero.category > result.category):
        result = zero if result is None else promote_types(result, zero)
    if scalar_cat >= 0 and (result is None or scalar_cat > result.category):
        result = _default_for(scalar_cat)
    return result


def can_cast(src: DType, dst: DType) -> bool:
    """Whether an in-place op may write a ``src`` result into a ``dst`` tensor (PyTorch's rule).

    >>> import ember
    >>> ember.can_cast(ember.int32, ember.float16), ember.can_cast(ember.float32, ember.int64)
    (True, False)
    """
    return src.category <= dst.category


def is_floating_point(input) -> bool:
    """Whether a tensor's dtype is a floating type.

    >>> import ember
    >>> ember.is_floating_point(ember.ones(1)), ember.is_floating_point(ember.arange(2))
    (True, False)
    """
    return input.dtype.is_floating_point


class finfo:
    """Machine limits of a floating dtype: ``eps``, ``max``, ``min``, ``tiny``, ``resolution``.

    >>> import ember
    >>> ember.finfo(ember.float32).eps, ember.finfo(ember.float16).max, ember.finfo().bits
    (1.1920928955078125e-07, 65504.0, 32)
    """

    def __init__(self, type: DType | None = None) -> None:  # noqa: A002  (PyTorch's name)
        d = get_default_dtype() if type is None else to_dtype(type)
        if not d.is_floating_point:
            raise DTypeError(f"finfo: needs a floating dtype, got {d}; use ember.iinfo for it")
        info = ml_dtypes.finfo(d.np)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)
        self.dtype = d.name

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


class iinfo:
    """Limits of an integer dtype: ``min``, ``max``, ``bits``.

    >>> import ember
    >>> ember.iinfo(ember.int32).max, ember.iinfo(ember.uint8).min
    (2147483647, 0)
    """

    def __init__(self, type: DType) -> None:  # noqa: A002  (PyTorch's name)
        d = to_dtype(type)
        if d.category != INT:
            raise DTypeError(f"iinfo: needs an integer dtype, got {d}; use ember.finfo for it")
        info = np.iinfo(d.np)
        self.bits, self.min, self.max, self.dtype = (
            int(info.bits),
            int(info.min),
            int(info.max),
            d.name,
        )

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


dtype = DType  # ``isinstance(x.dtype, ember.dtype)`` as in PyTorch
