"""Creating tensors: from data, filled, ranges and random.

Every function takes ``dtype=``, ``device=`` and ``requires_grad=`` as PyTorch's does, and
infers dtypes by PyTorch's rules: Python floats give the default dtype (float32), ints int64,
bools bool, NumPy arrays and scalars and tensors keep theirs, and mixed data promotes with
``promote_types``.

>>> import ember
>>> ember.zeros(2, 3).shape, ember.arange(5).dtype, ember.tensor([1.5]).dtype
(ember.Size([2, 3]), ember.int64, ember.float32)
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _caches
from .. import backend as _backend
from .. import dtypes as _dt
from .._config import state as _state
from .._errors import DTypeError, EmberError, ShapeError
from .._tensor import Size, Tensor, _shape_of
from ..backend import CPU, Device
from ..ops.base import apply as _apply
from ..ops.random import Random

_Number = (numbers.Number, np.generic)


def _device(device) -> Device:
    return CPU if device is None else Device(device)


def _finish(arr: np.ndarray, device, requires_grad: bool) -> Tensor:
    """Wrap a host array, copying it to ``device`` first when that is not the CPU."""
    if device is not None:
        arr = _backend.to_device(arr, Device(device))
    t = Tensor._make(arr)
    if requires_grad:
        t.requires_grad = True
    return t


def _size(size, op: str) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return _shape_of(size, op)


def _dtype(dtype, default: _dt.DType) -> _dt.DType:
    return default if dtype is None else _dt.to_dtype(dtype)


# -- dtype inference for Python data ------------------------------------------------------------

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
        return np.array(src, dtype=dt.np, copy=True)
    if isinstance(data, (np.ndarray, np.generic)):
        dt = dtype or _from_numpy_dtype(data.dtype)
        return np.array(data, dtype=dt.np, copy=True)
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
        return np.array(values, dtype=dt.np)
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


# -- from data ----------------------------------------------------------------------------------


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


# -- filled -------------------------------------------------------------------------------------


def _filled(fill, shape: tuple, dt: _dt.DType, device, requires_grad: bool) -> Tensor:
    if fill is not None and fill != 0 and fill != 1:  # wrap/truncate like a C cast: -1 -> 255
        fill = np.array(fill).astype(dt.np)[()]
    t = Tensor._make(_backend.full(shape, fill, dt.np, _device(device)))
    if requires_grad:
        t.requires_grad = True
    return t


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros.

    >>> import ember
    >>> ember.zeros(2)
    tensor([0., 0.])
    """
    dt = _dtype(dtype, _dt.get_default_dtype())
    return _filled(0, _size(size, "zeros"), dt, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones.

    >>> import ember
    >>> ember.ones(2, dtype=ember.int32)
    tensor([1, 1], dtype=ember.int32)
    """
    dt = _dtype(dtype, _dt.get_default_dtype())
    return _filled(1, _size(size, "ones"), dt, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialized tensor.

    >>> import ember
    >>> ember.empty(2, 3).shape
    ember.Size([2, 3])
    """
    dt = _dtype(dtype, _dt.get_default_dtype())
    return _filled(None, _size(size, "empty"), dt, device, requires_grad)


def _fill_value(value, op: str):
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ShapeError(f"{op}: fill_value must be a number or a 1-element tensor")
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (bool, int, float)):
        raise DTypeError(f"{op}: fill_value must be a number, got {type(value).__name__}")
    return value


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value``; its dtype follows the value (bool, int64, float32).

    >>> import ember
    >>> ember.full((2,), 7), ember.full((2,), 7.0).dtype
    (tensor([7, 7]), ember.float32)
    """
    value = _fill_value(fill_value, "full")
    dt = _dtype(dtype, _dt.result_type(value))
    shape = _size((size,), "full")
    return _filled(value, shape, dt, device, requires_grad)


def _like(input: Tensor, dtype, device) -> tuple:
    if not isinstance(input, Tensor):
        raise DTypeError(f"expected a Tensor as input, got {type(input).__name__}")
    dt = input.dtype if dtype is None else _dt.to_dtype(dtype)
    return dt, (input.device if device is None else device), tuple(input._data.shape)


def zeros_like(
    input: Tensor, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None
) -> Tensor:
    """Zeros with ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.zeros_like(ember.ones(2, dtype=ember.int32))
    tensor([0, 0], dtype=ember.int32)
    """
    dt, dev, shape = _like(input, dtype, device)
    return _filled(0, shape, dt, dev, requires_grad)


def ones_like(
    input: Tensor, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None
) -> Tensor:
    """Ones with ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.ones_like(ember.zeros(2))
    tensor([1., 1.])
    """
    dt, dev, shape = _like(input, dtype, device)
    return _filled(1, shape, dt, dev, requires_grad)


def empty_like(
    input: Tensor, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None
) -> Tensor:
    """Uninitialized, with ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.empty_like(ember.zeros(2, 3)).shape
    ember.Size([2, 3])
    """
    dt, dev, shape = _like(input, dtype, device)
    return _filled(None, shape, dt, dev, requires_grad)


def full_like(
    input: Tensor,
    fill_value,
    *,
    dtype=None,
    device=None,
    requires_grad: bool = False,
    memory_format=None,
) -> Tensor:
    """``fill_value`` with ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.full_like(ember.zeros(2), 3)
    tensor([3., 3.])
    """
    dt, dev, shape = _like(input, dtype, device)
    return _filled(_fill_value(fill_value, "full_like"), shape, dt, dev, requires_grad)


# -- ranges -------------------------------------------------------------------------------------
# PyTorch's CPU kernels fix the rounding of each element; these reproduce them so that arange
# and linspace give the same bits: arange accumulates in double (float for float16/bfloat16),
# linspace steps in the output dtype from both ends, and the compiled kernels fuse
# multiply-adds, which _fma emulates.


def _two_prod_err(a: np.ndarray, b: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The exact rounding error of the float64 product ``p = a * b`` (Veltkamp/Dekker)."""
    split = 134217729.0  # 2**27 + 1

    def halves(x):
        c = split * x
        hi = c - (c - x)
        return hi, x - hi

    ah, al = halves(a)
    bh, bl = halves(b)
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _fma(a, b, c) -> np.ndarray:
    """``a * b + c`` rounded once, in float64 (emulated: NumPy has no fused multiply-add)."""
    a, b, c = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
    with np.errstate(over="ignore", invalid="ignore"):
        p = a * b
        e = _two_prod_err(a, b, p)
        s = p + c
        bb = s - p
        t = (p - (s - bb)) + (c - bb)
        out = s + (t + e)
    return np.where(np.isfinite(out), out, p + c)


def _arange_float(start: float, step: float, n: int, dt: _dt.DType) -> np.ndarray:
    """PyTorch's CPU arange: vectorized chunks of 2*W lanes computed from a chunk base, the tail
    element by element; accumulating in float64 (float32 for float16/bfloat16)."""
    idx = np.arange(n, dtype=np.float64)
    if dt is _dt.float64 or dt is _dt.float32:
        lanes = 4 if dt is _dt.float64 else 8
        out = _fma(step, idx, start)
        full_chunks = (n // (2 * lanes)) * 2 * lanes
        if full_chunks:
            base = _fma(step, idx[:full_chunks:lanes], start).astype(dt.np).astype(np.float64)
            j = np.tile(np.arange(lanes, dtype=np.float64), full_chunks // lanes)
            out[:full_chunks] = _fma(j, step, np.repeat(base, lanes))
        return out.astype(dt.np)
    lanes = 16  # float16 / bfloat16: float32 accumulation
    s, st = float(np.float32(start)), float(np.float32(step))
    out = _fma(st, idx, s).astype(np.float32)
    full_chunks = (n // (2 * lanes)) * 2 * lanes
    if full_chunks:
        base = _fma(st, idx[:full_chunks:lanes], s).astype(np.float32).astype(dt.np)
        j = np.tile(np.arange(lanes, dtype=np.float64), full_chunks // lanes)
        out[:full_chunks] = _fma(j, st, np.repeat(base.astype(np.float64), lanes))
    return out.astype(dt.np)


def arange(
    start, end=None, step=1, *, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """Values from ``start`` up to (not including) ``end`` by ``step``.

    The dtype is int64 when all arguments are integers, else the default float dtype; the
    length is ``ceil((end - start) / step)`` and the values round as PyTorch's do.

    >>> import ember
    >>> ember.arange(1, 2.5, 0.5)
    tensor([1.0000, 1.5000, 2.0000])
    >>> ember.arange(5)
    tensor([0, 1, 2, 3, 4])
    """
    if end is None:
        start, end = 0, start
    vals = []
    for v in (start, end, step):
        if isinstance(v, (Tensor, np.generic)):
            v = v.item()
        if not isinstance(v, (int, float)):
            raise DTypeError(f"arange: start, end and step must be numbers, got {v!r}")
        vals.append(v)
    start, end, step = vals
    dt = _dtype(dtype, _dt.result_type(*vals))
    if not all(math.isfinite(v) for v in vals):
        raise EmberError(f"arange: unsupported range: {start} -> {end} (step {step})")
    istart, istep = int(start), int(step)  # integer outputs accumulate in (truncated) int64
    if dt is _dt.int64:  # PyTorch checks and sizes int64 ranges in integer arithmetic
        iend = int(end)
        if istep == 0:
            raise EmberError("arange: step must be nonzero")
        _check_range(istart, iend, istep, istep)
        num = iend - istart + istep - (1 if istep > 0 else -1)
        n = (abs(num) // abs(istep)) * (1 if (num >= 0) == (istep > 0) else -1)
    else:
        if step == 0:
            raise EmberError("arange: step must be nonzero")
        _check_range(start, end, step, step)
        n = math.ceil((end - start) / step)
    n = max(0, n)
    if dt.is_floating_point:
        arr = _arange_float(float(start), float(step), n, dt)
    else:
        arr = (istart + istep * np.arange(n, dtype=np.int64)).astype(dt.np)
    return _finish(arr, device, requires_grad)


def _check_range(start, end, step, sign_of_step) -> None:
    if not ((sign_of_step > 0 and end >= start) or (sign_of_step < 0 and end <= start)):
        raise EmberError(
            f"arange: upper bound and lower bound inconsistent with step sign "
            f"(start={start}, end={end}, step={step})"
        )


def linspace(
    start, end, steps: int, *, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive (default float dtype).

    >>> import ember
    >>> ember.linspace(0, 1, 3)
    tensor([0.0000, 0.5000, 1.0000])
    """
    start = start.item() if isinstance(start, (Tensor, np.generic)) else start
    end = end.item() if isinstance(end, (Tensor, np.generic)) else end
    steps = int(steps)
    if steps < 0:
        raise EmberError(f"linspace: number of steps must be non-negative, got {steps}")
    dt = _dtype(dtype, _dt.get_default_dtype())
    arr = _linspace_values(start, end, steps, dt)
    return _finish(arr, device, requires_grad)


def _linspace_values(start, end, steps: int, dt: _dt.DType) -> np.ndarray:
    """PyTorch's CPU linspace: the first half steps up from ``start``, the second half down
    from ``end``; the step is computed in the output dtype (float64 for integer outputs)."""
    if steps == 0:
        return np.empty(0, dt.np)
    if steps == 1:
        return np.array([start], dtype=np.float64).astype(dt.np)
    k = np.arange(steps)
    half = steps // 2
    lower = k < half
    if not dt.is_floating_point:
        s, e = int(start), int(end)
        step = (e - s) / (steps - 1)
        vals = np.where(lower, _fma(step, k, s), _fma(-step, steps - k - 1, e))
        return np.trunc(vals).astype(dt.np)
    if dt is _dt.float64 or dt is _dt.float32:
        s, e = dt.np.type(start), dt.np.type(end)
        step = dt.np.type((e - s) / dt.np.type(steps - 1))
        vals = np.where(lower, _fma(step, k, s), _fma(-step, steps - k - 1, e))
        return vals.astype(dt.np)
    # float16 / bfloat16: every operation rounds to the dtype
    s, e = np.array(start).astype(dt.np), np.array(end).astype(dt.np)
    step = ((e - s).astype(dt.np) / np.array(steps - 1).astype(dt.np)).astype(dt.np)
    up = (s + (step * k.astype(dt.np)).astype(dt.np)).astype(dt.np)
    down = (e - (step * (steps - k - 1).astype(dt.np)).astype(dt.np)).astype(dt.np)
    return np.where(lower, up, down)


def eye(
    n: int, m: int | None = None, *, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """The identity matrix (n x m).

    >>> import ember
    >>> ember.eye(2)
    tensor([[1., 0.],
            [0., 1.]])
    """
    m = n if m is None else m
    if n < 0 or m < 0:
        raise ShapeError(f"eye: n and m must be non-negative, got n={n}, m={m}")
    dt = _dtype(dtype, _dt.get_default_dtype())
    return _finish(np.eye(int(n), int(m), dtype=dt.np), device, requires_grad)


# -- random -------------------------------------------------------------------------------------
# Every draw is an op (``ember.ops.random.Random``, with side effects): eager mode runs it now,
# ``ember.compile`` records it, so a compiled function draws fresh numbers on every call (with
# the same seed, the same numbers as eager). Numbers are drawn where the tensor lives
# (ember.random: NumPy on the CPU, cuRAND on a GPU), never on the host and copied. The op reads
# only the dtype and device of its one input, the *anchor*: a new empty array, or the
# ``_like`` functions' input when dtype and device match.


def _random_float(dtype, op: str) -> _dt.DType:
    dt = _dtype(dtype, _dt.get_default_dtype())
    if not dt.is_floating_point:
        raise DTypeError(f"{op}: needs a floating dtype, got {dt}")
    return dt


def _anchor(dt: _dt.DType, device) -> Tensor:
    """An empty array (no data to read or save) that gives a draw its dtype and device."""
    if device is None:
        return Tensor._make(np.empty(0, dt.np))
    return Tensor._make(_backend.full((0,), None, dt.np, Device(device)))


_RANDOM_OPS: dict = {}  # (dist, shape, params) -> Random: init code draws the same shapes often
_caches.register("random draw ops", _RANDOM_OPS.clear, _RANDOM_OPS.__len__)


def _random_op(dist: str, shape: tuple, params: tuple, generator) -> Random:
    if generator is not None:
        return Random(dist, shape, params, generator)
    key = (dist, shape, params)
    op = _RANDOM_OPS.get(key)
    if op is None:
        if len(_RANDOM_OPS) >= 256:
            _RANDOM_OPS.clear()
        op = _RANDOM_OPS[key] = Random(dist, shape, params)
    return op


def _drawn(op: Random, anchor: Tensor, requires_grad: bool) -> Tensor:
    t = _apply(op, anchor)
    if requires_grad:
        t.requires_grad = True
    return t


def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform random numbers in [0, 1).

    >>> import ember
    >>> ember.rand(2, 3).shape
    ember.Size([2, 3])
    """
    dt, shape = _random_float(dtype, "rand"), _size(size, "rand")
    return _drawn(_random_op("uniform", shape, (), generator), _anchor(dt, device), requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Standard normal random numbers.

    >>> import ember
    >>> ember.randn(4).dtype
    ember.float32
    """
    dt, shape = _random_float(dtype, "randn"), _size(size, "randn")
    return _drawn(_random_op("normal", shape, (), generator), _anchor(dt, device), requires_grad)


def _int_bounds(low, high, op: str) -> tuple[int, int]:
    low, high = int(low), int(high)
    if low >= high:
        raise EmberError(f"{op}: expected low < high, but got low={low} >= high={high}")
    return low, high


def randint(
    low,
    high=None,
    size=None,
    *,
    generator=None,
    dtype=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """Random integers in [low, high); ``randint(high, size)`` means low = 0.

    >>> import ember
    >>> ember.randint(0, 10, (3,)).dtype
    ember.int64
    >>> ember.randint(5, (2, 2)).shape
    ember.Size([2, 2])
    """
    if size is None:
        if high is None or not isinstance(high, (tuple, list, Size)):
            raise EmberError("randint: size is required, e.g. randint(0, 10, (3,))")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    bounds = _int_bounds(low, high, "randint")
    dt = _dtype(dtype, _dt.int64)
    shape = _size((size,), "randint")
    op = _random_op("integers", shape, bounds, generator)
    return _drawn(op, _anchor(dt, device), requires_grad)


def _like_anchor(input: Tensor, dtype, device) -> tuple:
    """``(dtype, shape, anchor)`` for a ``_like`` function: ``input`` itself anchors the draw
    when it has the dtype and device asked for (no new array)."""
    dt, dev, shape = _like(input, dtype, device)
    if dt is input.dtype and (device is None or Device(device) == input.device):
        return dt, shape, input
    tracer = _state.tracer
    if tracer is not None and tracer.define and getattr(input._data, "is_symbol", False):
        # a symbolic input in a graph being defined: anchor on it (cast), so the draw is a node
        # of the graph like the rest of the ``_like`` forms, not a constant drawn now
        return dt, shape, input.to(device=dev, dtype=dt)
    return dt, shape, _anchor(dt, dev)


def rand_like(
    input: Tensor,
    *,
    generator=None,
    dtype=None,
    device=None,
    requires_grad: bool = False,
    memory_format=None,
) -> Tensor:
    """Uniform random numbers with ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.rand_like(ember.zeros(2, dtype=ember.float64)).dtype
    ember.float64
    """
    dt, shape, anchor = _like_anchor(input, dtype, device)
    _random_float(dt, "rand_like")
    return _drawn(_random_op("uniform", shape, (), generator), anchor, requires_grad)


def randn_like(
    input: Tensor,
    *,
    generator=None,
    dtype=None,
    device=None,
    requires_grad: bool = False,
    memory_format=None,
) -> Tensor:
    """Normal random numbers with ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.randn_like(ember.zeros(2, 3)).shape
    ember.Size([2, 3])
    """
    dt, shape, anchor = _like_anchor(input, dtype, device)
    _random_float(dt, "randn_like")
    return _drawn(_random_op("normal", shape, (), generator), anchor, requires_grad)


def randint_like(
    input: Tensor,
    low,
    high=None,
    *,
    generator=None,
    dtype=None,
    device=None,
    requires_grad: bool = False,
    memory_format=None,
) -> Tensor:
    """Random integers in [low, high) with ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.randint_like(ember.zeros(3), 5).dtype
    ember.float32
    """
    if high is None:
        low, high = 0, low
    bounds = _int_bounds(low, high, "randint_like")
    dt, shape, anchor = _like_anchor(input, dtype, device)
    return _drawn(_random_op("integers", shape, bounds, generator), anchor, requires_grad)


def randperm(
    n: int, *, generator=None, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """A random permutation of 0..n-1.

    >>> import ember
    >>> sorted(ember.randperm(4).tolist())
    [0, 1, 2, 3]
    """
    if n < 0:
        raise EmberError(f"randperm: n must be non-negative, got {n}")
    dt = _dtype(dtype, _dt.int64)
    op = _random_op("permutation", (int(n),), (), generator)
    return _drawn(op, _anchor(dt, device), requires_grad)


# -- Tensor.new_* : same dtype and device as the tensor unless given ----------------------------


def new_tensor(
    self: Tensor, data, *, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """A tensor from ``data`` with this tensor's dtype and device (unless given).

    >>> import ember
    >>> ember.ones(1, dtype=ember.float64).new_tensor([1, 2])
    tensor([1., 2.], dtype=ember.float64)
    """
    return tensor(
        data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


def new_zeros(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Zeros of ``size`` with this tensor's dtype and device.

    >>> import ember
    >>> ember.ones(1, dtype=ember.int32).new_zeros(2)
    tensor([0, 0], dtype=ember.int32)
    """
    return zeros(
        *size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


def new_ones(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Ones of ``size`` with this tensor's dtype and device.

    >>> import ember
    >>> ember.zeros(1).new_ones((2,))
    tensor([1., 1.])
    """
    return ones(
        *size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


def new_empty(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uninitialized, of ``size``, with this tensor's dtype and device.

    >>> import ember
    >>> ember.zeros(1).new_empty(2, 3).shape
    ember.Size([2, 3])
    """
    return empty(
        *size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


def new_full(
    self: Tensor, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """``fill_value`` of ``size`` with this tensor's dtype and device.

    >>> import ember
    >>> ember.zeros(1, dtype=ember.float64).new_full((2,), 3)
    tensor([3., 3.], dtype=ember.float64)
    """
    return full(
        size,
        fill_value,
        dtype=dtype or self.dtype,
        device=device or self.device,
        requires_grad=requires_grad,
    )


def new(self: Tensor, *args) -> Tensor:
    """Legacy ``x.new(...)``: like ``ember.Tensor(...)`` with this tensor's dtype and device.

    >>> import ember
    >>> ember.ones(1, dtype=ember.int64).new([1, 2])
    tensor([1, 2])
    """
    return Tensor(*args, dtype=self.dtype, device=self.device)


__all__ = [
    "tensor",
    "as_tensor",
    "from_numpy",
    "scalar_tensor",
    "zeros",
    "ones",
    "empty",
    "full",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "arange",
    "linspace",
    "eye",
    "rand",
    "randn",
    "randint",
    "rand_like",
    "randn_like",
    "randint_like",
    "randperm",
]
TENSOR_METHODS = {
    "new_tensor": new_tensor,
    "new_zeros": new_zeros,
    "new_ones": new_ones,
    "new_empty": new_empty,
    "new_full": new_full,
    "new": new,
}
