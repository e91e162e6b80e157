"""Tensors from data: ``tensor``, ``as_tensor``, ``from_numpy``, ``scalar_tensor``, with
PyTorch's dtype inference for Python data (floats give the default dtype, ints int64,
bools bool; mixed data promotes) and its errors for ragged nesting.
"""

from __future__ import annotations

import numbers

import numpy as np

from ... import backend as _backend
from ... import dtypes as _dt
from ..._errors import DTypeError, ShapeError
from ..._tensor import Tensor
from ...backend import Device
from ...backend.arrays import castable, converted
from ._arguments import _dtype, _finish, _Number

__all__ = ["tensor", "as_tensor", "from_numpy", "scalar_tensor"]


_PY_KIND = {bool: _dt.bool_, int: _dt.int64}


def _promote(a: _dt.DType | None, b: _dt.DType) -> _dt.DType:
    return b if a is None else _dt.promote_types(a, b)


def _scan(data, acc: _dt.DType | None) -> _dt.DType | None:
    """The dtype PyTorch infers for nested sequences: ``promote_types`` over the elements."""
    kinds = set(map(type, data))
    if kinds <= {int, float, bool}:  # the common case: one pass in C
        if float in kinds:
            return _promote(acc, _dt.get_default_dtype())
        for k in (int, bool):
            if k in kinds:
                return _promote(acc, _PY_KIND[k])
        return acc
    for x in data:
        t = type(x)
        if t is float:
            acc = _promote(acc, _dt.get_default_dtype())
        elif t is int or t is bool:
            acc = _promote(acc, _PY_KIND[t])
        elif isinstance(x, (list, tuple)):
            acc = _scan(x, acc)
        elif isinstance(x, Tensor):
            acc = _promote(acc, x.dtype)
        elif isinstance(x, (np.ndarray, np.generic)):
            acc = _promote(acc, _from_numpy_dtype(x.dtype))
        elif isinstance(x, numbers.Integral):
            acc = _promote(acc, _dt.int64)
        elif isinstance(x, numbers.Real):
            acc = _promote(acc, _dt.get_default_dtype())
        else:
            raise DTypeError(f"tensor: could not infer dtype of {type(x).__name__} ({x!r})")
    return acc


def _from_numpy_dtype(np_dtype) -> _dt.DType:
    try:
        return _dt.from_numpy_dtype(np_dtype)
    except DTypeError:
        raise DTypeError(
            f"tensor: can't convert NumPy data of dtype {np_dtype}; ember supports bool, uint8, "
            "int8/16/32/64, float16, bfloat16, float32 and float64"
        ) from None


def _ragged(data, op: str) -> ShapeError:
    """Name the first place where nested sequences stop being rectangular (PyTorch's wording)."""

    def walk(x, dim):
        if not isinstance(x, (list, tuple)) or not x:
            return None
        lens = [len(e) if isinstance(e, (list, tuple)) else None for e in x]
        first = lens[0]
        for n in lens:
            if n != first:
                if first is None or n is None:
                    return f"expected a sequence or a number consistently at dim {dim + 1}"
                return f"expected sequence of length {first} at dim {dim + 1} (got {n})"
        for e in x:
            msg = walk(e, dim + 1)
            if msg:
                return msg
        return None

    return ShapeError(f"{op}: {walk(data, 0) or 'nested sequences are not rectangular'}")


def _host_array(data, dtype: _dt.DType | None, op: str) -> np.ndarray:
    """A new host array holding ``data`` with PyTorch's inferred (or the given) dtype."""
    if isinstance(data, Tensor):
        src = data.numpy(force=True)
        dt = dtype or data.dtype
        return np.array(castable(src, dt.np), dtype=dt.np, copy=True)
    if isinstance(data, (np.ndarray, np.generic)):
        dt = dtype or _from_numpy_dtype(data.dtype)
        return np.array(castable(data, dt.np), dtype=dt.np, copy=True)
    if isinstance(data, (list, tuple)):
        dt = dtype or _scan(data, None) or _dt.get_default_dtype()
        values = data
        if any(isinstance(x, Tensor) for x in data) or not all(
            isinstance(x, (int, float, bool, list, tuple)) for x in data
        ):
            values = _to_host_nested(data)
    elif isinstance(data, (bool, int, float)) or isinstance(data, _Number):
        if isinstance(data, complex):
            raise DTypeError(f"{op}: complex numbers are not supported (got {data!r})")
        dt = dtype or _scan([data], None)
        values = data
    else:
        raise DTypeError(f"{op}: can't build a tensor from {type(data).__name__} data ({data!r})")
    try:
        return converted(values, dt.np)
    except OverflowError as e:
        raise DTypeError(f"{op}: value out of range for {dt}: {e}") from None
    except (ValueError, TypeError):
        raise _ragged(data, op) from None


def _to_host_nested(data):
    """Nested lists with tensors and NumPy values replaced by host arrays NumPy can stack."""
    if isinstance(data, (list, tuple)):
        return [_to_host_nested(x) for x in data]
    if isinstance(data, Tensor):
        arr = data.numpy(force=True)
        return arr.astype(np.float32) if arr.dtype == _dt.bfloat16.np else arr
    return data


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor copying ``data`` (nested lists, numbers, NumPy arrays or tensors).

    Python floats become the default dtype (float32), ints int64, bools bool; NumPy arrays
    keep their dtype; mixed data promotes (``[1, 2.5]`` is float32).

    >>> import ember
    >>> ember.tensor([[1, 2], [3, 4]]).dtype, ember.tensor([1, 2.5]).dtype
    (ember.int64, ember.float32)
    >>> ember.tensor([ember.tensor(1.0), ember.tensor(2.0)])
    tensor([1., 2.])
    """
    dt = None if dtype is None else _dt.to_dtype(dtype)
    gpu = _gpu_tensor(data)
    if gpu is not None:  # copied on its GPU, and kept there unless ``device`` says otherwise
        out = gpu.detach().clone() if dt is None or dt is gpu.dtype else gpu.detach().to(dt)
        return _finish(out._data, device or out.device, requires_grad)
    return _finish(_host_array(data, dt, "tensor"), device, requires_grad)


def _gpu_tensor(data) -> Tensor | None:
    """``data`` as a tensor when it lives on a GPU (a cuda tensor or a CuPy array), else None."""
    if isinstance(data, Tensor):
        return data if data.device.type == "cuda" else None
    if _backend.device_of(data).type != "cuda":
        return None
    _from_numpy_dtype(data.dtype)
    return Tensor._make(data)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with a tensor or NumPy array when it can.

    >>> import ember, numpy as np
    >>> a = np.zeros(2, dtype=np.float32); ember.as_tensor(a).numpy() is a
    True
    """
    if isinstance(data, Tensor):
        out = data
        if device is not None:
            out = out.to(Device(device))
        if dtype is not None:
            out = out.to(_dt.to_dtype(dtype))
        return out
    shareable = isinstance(data, np.ndarray) or _gpu_tensor(data) is not None
    if shareable and (dtype is None or _dt.to_dtype(dtype).np == data.dtype):
        _from_numpy_dtype(data.dtype)
        return _finish(data, device, False)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with a NumPy array, keeping its dtype.

    >>> import ember, numpy as np
    >>> ember.from_numpy(np.arange(3)).dtype
    ember.int64
    """
    if not isinstance(ndarray, np.ndarray):
        raise DTypeError(f"from_numpy: expected np.ndarray, got {type(ndarray).__name__}")
    _from_numpy_dtype(ndarray.dtype)
    return Tensor._make(ndarray)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding ``s`` (default float dtype, as in PyTorch).

    >>> import ember
    >>> ember.scalar_tensor(3)
    tensor(3.)
    """
    dt = _dtype(dtype, _dt.get_default_dtype())
    return _finish(np.array(s, dtype=dt.np), device, requires_grad)
