"""Ranges: ``arange``, ``linspace`` and ``eye``.

PyTorch's CPU kernels fix the rounding of each element; these reproduce them so that arange
and linspace give the same bits: arange accumulates in double (float for float16/bfloat16),
linspace steps in the output dtype from both ends, and the compiled kernels fuse
multiply-adds, which ``_fma`` emulates.
"""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as _dt
from ..._errors import DTypeError, EmberError, ShapeError
from ..._tensor import Tensor
from ._arguments import _dtype, _finish

__all__ = ["arange", "linspace", "logspace", "eye"]


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


def logspace(
    start,
    end,
    steps: int,
    base: float = 10.0,
    *,
    dtype=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """``base`` to the powers ``linspace(start, end, steps)`` (default float dtype).

    >>> import ember
    >>> ember.logspace(0, 2, steps=3)
    tensor([  1.,  10., 100.])
    """
    start = start.item() if isinstance(start, (Tensor, np.generic)) else start
    end = end.item() if isinstance(end, (Tensor, np.generic)) else end
    steps = int(steps)
    if steps < 0:
        raise EmberError(f"logspace: number of steps must be non-negative, got {steps}")
    dt = _dtype(dtype, _dt.get_default_dtype())
    return _finish(_logspace_values(start, end, steps, float(base), dt), device, requires_grad)


def _logspace_values(start, end, steps: int, base: float, dt: _dt.DType) -> np.ndarray:
    """PyTorch's CPU logspace: ``start`` and ``end`` rounded to the dtype, the step and the
    powers in float64 (the first half from ``start``, the second from ``end``), then cast (a
    C++ cast: truncated for integers, through float32 for float16 / bfloat16), the powers with
    the C library's ``pow``."""
    if steps <= 1:
        exps = np.full(steps, float(start))
    else:
        s, e = np.array([start, end]).astype(dt.np)
        step = float(np.subtract(e, s, dtype=dt.np)) / (steps - 1)
        k = np.arange(steps)
        exps = np.where(k < steps // 2, float(s) + step * k, float(e) - step * (steps - k - 1))
    # the C library's pow, as PyTorch's kernel: NumPy's vectorized power can differ from it in
    # the last bit (on AVX-512 CPUs)
    vals = np.fromiter((math.pow(base, x) for x in exps.tolist()), np.float64, steps)
    if not dt.is_floating_point:
        return np.trunc(vals).astype(dt.np)
    return vals.astype(np.float32 if dt.itemsize < 4 else dt.np).astype(dt.np)


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
