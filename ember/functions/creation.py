"""Creating tensors: from data, filled, ranges and random.

>>> import ember
>>> ember.zeros(2, 3).shape, ember.arange(5).dtype, ember.tensor([1.5]).dtype
(ember.Size([2, 3]), ember.int64, ember.float32)
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes as _dt
from .. import random as _random
from .._errors import DTypeError, EmberError
from .._tensor import Tensor
from ..backend import CPU, Device, to_device


def _finish(arr: np.ndarray, device, requires_grad: bool) -> Tensor:
    if device is not None:
        dev = Device(device)
        if dev != CPU:
            arr = to_device(arr, dev)
    t = Tensor._make(arr)
    if requires_grad:
        t.requires_grad = True
    return t


def _size(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    try:
        return tuple(int(s) for s in size)
    except TypeError:
        raise EmberError(f"expected a shape of integers, got {size!r}") from None


def _python_dtype(arr: np.ndarray) -> _dt.DType:
    if arr.dtype.kind == "f":
        return _dt.get_default_dtype()
    if arr.dtype.kind in "iu":
        return _dt.int64
    if arr.dtype.kind == "b":
        return _dt.bool_
    raise DTypeError(f"tensor: can't build a tensor from data of NumPy dtype {arr.dtype}")


def _host_array(data):
    if isinstance(data, Tensor):
        return np.asarray(data), False
    if isinstance(data, (np.ndarray, np.generic)):
        return np.asarray(data), False
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        return np.stack([np.asarray(x) for x in data]), False
    return np.asarray(data), True


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor copying ``data`` (nested lists, numbers, NumPy arrays or tensors).

    Python floats become the default dtype (float32), ints int64, bools bool; NumPy arrays
    keep their dtype.

    >>> import ember
    >>> ember.tensor([[1, 2], [3, 4]]).dtype
    ember.int64
    """
    arr, from_python = _host_array(data)
    if arr.dtype == object:
        raise DTypeError(f"tensor: can't build a tensor from {type(data).__name__} data")
    dt = _dt.to_dtype(dtype) if dtype is not None else (
        _python_dtype(arr) if from_python else _dt.from_numpy_dtype(arr.dtype)
    )
    return _finish(np.array(arr, dtype=dt.np, copy=True), device, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with a tensor or NumPy array when it can.

    >>> import ember, numpy as np
    >>> a = np.zeros(2, dtype=np.float32); ember.as_tensor(a).numpy() is a
    True
    """
    if isinstance(data, Tensor):
        out = data
        if dtype is not None:
            out = out.to(_dt.to_dtype(dtype))
        if device is not None:
            out = out.to(Device(device))
        return out
    if isinstance(data, np.ndarray) and (dtype is None or _dt.to_dtype(dtype).np == data.dtype):
        return _finish(data, device, False)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with a NumPy array, keeping its dtype.

    >>> import ember, numpy as np
    >>> ember.from_numpy(np.arange(3)).dtype
    ember.int64
    """
    if not isinstance(array, np.ndarray):
        raise DTypeError(f"from_numpy: expected np.ndarray, got {type(array).__name__}")
    _dt.from_numpy_dtype(array.dtype)
    return Tensor._make(array)


def _filled(fill, size, dtype, device, requires_grad, default=None) -> Tensor:
    dt = _dt.to_dtype(dtype) if dtype is not None else (default or _dt.get_default_dtype())
    shape = _size(size)
    dev = Device(device) if device is not None else CPU
    xp = dev.xp
    if dev == CPU:
        arr = np.full(shape, fill, dtype=dt.np) if fill is not None else np.empty(shape, dt.np)
        return _finish(arr, None, requires_grad)
    with xp.cuda.Device(dev.index or 0):
        arr = xp.full(shape, fill, dtype=dt.np) if fill is not None else xp.empty(shape, dt.np)
    return _finish(arr, None, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros.

    >>> import ember
    >>> ember.zeros(2)
    tensor([0., 0.])
    """
    return _filled(0, size, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones.

    >>> import ember
    >>> ember.ones(2, dtype=ember.int32)
    tensor([1, 1], dtype=ember.int32)
    """
    return _filled(1, size, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialized tensor.

    >>> import ember
    >>> ember.empty(2, 3).shape
    ember.Size([2, 3])
    """
    return _filled(None, size, dtype, device, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value`` (its dtype follows the value, as in PyTorch).

    >>> import ember
    >>> ember.full((2,), 7)
    tensor([7, 7])
    """
    default = _dt.result_type(fill_value) if isinstance(fill_value, numbers.Number) else None
    return _filled(fill_value, (size,) if isinstance(size, int) else tuple(size), dtype, device,
                   requires_grad, default)


def _like(input: Tensor, dtype, device):
    return (dtype if dtype is not None else input.dtype,
            device if device is not None else input.device)


def zeros_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Zeros with ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.zeros_like(ember.ones(2, dtype=ember.int32))
    tensor([0, 0], dtype=ember.int32)
    """
    dt, dev = _like(input, dtype, device)
    return _filled(0, tuple(input.shape), dt, dev, requires_grad)


def ones_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Ones with ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.ones_like(ember.zeros(2))
    tensor([1., 1.])
    """
    dt, dev = _like(input, dtype, device)
    return _filled(1, tuple(input.shape), dt, dev, requires_grad)


def empty_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uninitialized, with ``input``'s shape, dtype and device."""
    dt, dev = _like(input, dtype, device)
    return _filled(None, tuple(input.shape), dt, dev, requires_grad)


def full_like(input: Tensor, fill_value, *, dtype=None, device=None,
              requires_grad: bool = False) -> Tensor:
    """``fill_value`` with ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.full_like(ember.zeros(2), 3)
    tensor([3., 3.])
    """
    dt, dev = _like(input, dtype, device)
    return _filled(fill_value, tuple(input.shape), dt, dev, requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """Values from ``start`` up to (not including) ``end`` by ``step``.

    >>> import ember
    >>> ember.arange(1, 2.5, 0.5)
    tensor([1.0000, 1.5000, 2.0000])
    """
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if vals[2] == 0:
        raise EmberError("arange: step must be nonzero")
    dt = _dt.to_dtype(dtype) if dtype is not None else _dt.result_type(*vals)
    if dt.is_floating_point:
        n = max(0, int(np.ceil((vals[1] - vals[0]) / vals[2])))
        arr = (vals[0] + np.arange(n, dtype=np.float64) * vals[2]).astype(dt.np)
    else:
        arr = np.arange(vals[0], vals[1], vals[2]).astype(dt.np)
    return _finish(arr, device, requires_grad)


def linspace(start, end, steps: int, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    >>> import ember
    >>> ember.linspace(0, 1, 3)
    tensor([0.0000, 0.5000, 1.0000])
    """
    dt = _dt.to_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
    arr = np.linspace(float(start), float(end), int(steps)).astype(dt.np)
    return _finish(arr, device, requires_grad)


def eye(n: int, m: int | None = None, *, dtype=None, device=None,
        requires_grad: bool = False) -> Tensor:
    """The identity matrix (n x m).

    >>> import ember
    >>> ember.eye(2)
    tensor([[1., 0.],
            [0., 1.]])
    """
    dt = _dt.to_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
    return _finish(np.eye(n, m, dtype=dt.np), device, requires_grad)


def _random_float(dtype) -> _dt.DType:
    dt = _dt.to_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
    if not dt.is_floating_point:
        raise DTypeError(f"random floats need a floating dtype, got {dt}")
    return dt


def _sample(dt: _dt.DType, draw) -> np.ndarray:
    native = dt.np if dt.np in (np.dtype(np.float32), np.dtype(np.float64)) else np.float32
    return draw(native).astype(dt.np, copy=False)


def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform random numbers in [0, 1).

    >>> import ember
    >>> ember.rand(2, 3).shape
    ember.Size([2, 3])
    """
    dt, shape, g = _random_float(dtype), _size(size), _random.rng(generator)
    return _finish(_sample(dt, lambda t: g.random(shape, dtype=t)), device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Standard normal random numbers.

    >>> import ember
    >>> ember.randn(4).dtype
    ember.float32
    """
    dt, shape, g = _random_float(dtype), _size(size), _random.rng(generator)
    return _finish(_sample(dt, lambda t: g.standard_normal(shape, dtype=t)), device, requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """Random integers in [low, high) (``randint(high, size)`` means low = 0).

    >>> import ember
    >>> ember.randint(0, 10, (3,)).dtype
    ember.int64
    """
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise EmberError("randint: size is required, e.g. randint(0, 10, (3,))")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    dt = _dt.to_dtype(dtype) if dtype is not None else _dt.int64
    arr = _random.rng(generator).integers(low, high, size=tuple(size)).astype(dt.np)
    return _finish(arr, device, requires_grad)


def rand_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform random numbers with ``input``'s shape, dtype and device."""
    dt, dev = _like(input, dtype, device)
    return rand(*input.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def randn_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Normal random numbers with ``input``'s shape, dtype and device."""
    dt, dev = _like(input, dtype, device)
    return randn(*input.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def randint_like(input: Tensor, low, high=None, *, dtype=None, device=None) -> Tensor:
    """Random integers with ``input``'s shape."""
    dt, dev = _like(input, dtype, device)
    return randint(low, high, tuple(input.shape), dtype=dt, device=dev)


def randperm(n: int, *, generator=None, dtype=None, device=None) -> Tensor:
    """A random permutation of 0..n-1.

    >>> import ember
    >>> sorted(ember.randperm(4).tolist())
    [0, 1, 2, 3]
    """
    dt = _dt.to_dtype(dtype) if dtype is not None else _dt.int64
    return _finish(_random.rng(generator).permutation(n).astype(dt.np), device, False)


__all__ = [
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "zeros_like",
    "ones_like", "empty_like", "full_like", "arange", "linspace", "eye", "rand", "randn",
    "randint", "rand_like", "randn_like", "randint_like", "randperm",
]
TENSOR_METHODS: dict = {}
