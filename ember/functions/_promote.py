"""Turning mixed operands (tensors of several dtypes, Python scalars) into same-dtype tensors."""

from __future__ import annotations

import numbers

import numpy as np

from .. import _caches
from .. import dtypes as _dt
from .._errors import DTypeError
from .._tensor import Tensor
from ..backend import to_device
from ..backend.arrays import converted, freeze
from ..ops.elementwise import cast

# (type, value, numpy dtype, device or None for the host) -> 0-d array, read-only: a Python
# number becomes an array once per device, so a step on a GPU copies no constants to it
_CONSTANTS: dict = {}
_caches.register("scalar constants", _CONSTANTS.clear, _CONSTANTS.__len__)


def scalar_tensor(value, dtype: _dt.DType, like: Tensor | None = None) -> Tensor:
    """A 0-d constant on ``like``'s device, cached per device (the tensor is read-only: ember's
    in-place ops refuse to write it).

    Integers that don't fit the dtype wrap around like a C cast, as PyTorch does
    (``uint8_tensor + 300`` adds 44).

    >>> import ember
    >>> scalar_tensor(2.5, ember.float32)._data is scalar_tensor(2.5, ember.float32)._data
    True
    """
    if like is not None and getattr(like._data, "is_symbol", False):
        # a graph being built: a fresh array, which the graph keeps as a constant
        return Tensor._make(to_device(_host_scalar(value, dtype), like.device))
    host = like is None or type(like._data) is np.ndarray
    key = (type(value), value, dtype.np, None if host else like.device)
    arr = _CONSTANTS.get(key)
    if arr is None:
        arr = freeze(_host_scalar(value, dtype))
        if not host:
            arr = to_device(arr, like.device)
        if len(_CONSTANTS) < 4096:
            _CONSTANTS[key] = arr
    t = Tensor._make(arr)
    t._readonly = True
    return t


def _host_scalar(value, dtype: _dt.DType) -> np.ndarray:
    try:
        return converted(value, dtype.np)
    except OverflowError:
        return np.asarray(value).astype(dtype.np)


def _scalar_result(x: Tensor, s) -> _dt.DType | None:
    """The result dtype of tensor ``x`` with Python number ``s`` when it is ``x``'s own."""
    kind = x._data.dtype.kind
    ts = type(s)
    if kind == "f":
        if ts is float or ts is int:
            return _dt.from_numpy_dtype(x._data.dtype)
    elif kind in "iu" and ts is int:
        return _dt.from_numpy_dtype(x._data.dtype)
    return None


def binary(a, b, op: str) -> tuple[Tensor, Tensor]:
    """``a`` and ``b`` as tensors of their PyTorch result dtype (fast when both already agree)."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            if a._data.dtype == b._data.dtype:
                return a, b
            dt = _dt.result_type(a, b)
            return cast(a, dt), cast(b, dt)
        dt = _scalar_result(a, b)
        if dt is not None:
            return a, scalar_tensor(b, dt, a)
        dt = _dt.result_type(a, _check_scalar(b, op))
        return cast(a, dt), scalar_tensor(b, dt, a)
    if isinstance(b, Tensor):
        dt = _scalar_result(b, a)
        if dt is not None:
            return scalar_tensor(a, dt, b), b
        dt = _dt.result_type(_check_scalar(a, op), b)
        return scalar_tensor(a, dt, b), cast(b, dt)
    raise DTypeError(
        f"{op}: expected at least one Tensor, got {type(a).__name__} and {type(b).__name__}"
    )


def _check_scalar(x, op: str):
    if isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, complex):
        return x
    if isinstance(x, np.ndarray):
        raise DTypeError(
            f"{op}: got a NumPy array; wrap it with ember.from_numpy() or ember.tensor() first"
        )
    raise DTypeError(f"{op}: unsupported operand of type {type(x).__name__}")


def as_tensor_arg(x, op: str, dtype: _dt.DType | None = None) -> Tensor:
    """A Tensor argument, accepting Python scalars where PyTorch does."""
    if isinstance(x, Tensor):
        return x if dtype is None else cast(x, dtype)
    _check_scalar(x, op)
    return scalar_tensor(x, dtype or _dt.result_type(x))


def to_float(x: Tensor) -> Tensor:
    """``x`` itself when floating, else converted to the default float dtype (as exp(int) does)."""
    if x._data.dtype.kind == "f" or x.dtype.is_floating_point:
        return x
    return cast(x, _dt.get_default_dtype())
