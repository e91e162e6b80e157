"""Per-channel sums and adds on the CPU, shaped by the array's memory layout.

NumPy walks an array in memory order, one inner loop per run along the fastest axis. A
channels-last (N, C, H, W) activation has C as that axis, so NumPy's ``x.sum((0, 2, 3))`` and
``x + bias.reshape(1, C, 1, 1)`` run an inner loop of C values (6 in LeNet's first layer) per
pixel: 1.1 ms and 0.45 ms for 64x6x28x28 float32 on the development machine, where PyTorch took
0.11 and 0.26 ms. Both are overrides of the NumPy bodies of ``SumTo`` and ``Add`` (their
registrations are beside those ops), for float32 and float64 host arrays, dense in some axis
order:

- ``sum_by_products(x, axes)``: the sum as one or two matrix-vector products with a vector of
  ones, where the kept axes are one run in memory order (leading, trailing, or between two
  summed runs: (N, C, H, W) memory summed to C is (N, C, HW) @ ones(HW), then ones(N) @ (N, C)).
  64x6x28x28 channels-last: 87 us; NCHW: 101 -> 30 us.
- ``add_trailing(a, b)``: ``a + b`` where ``b`` varies only along ``a``'s fastest axes (a bias
  on channels-last memory) and those hold fewer than ``SHORT`` values: the flat array viewed as
  rows of ``b`` repeated to at least ``SHORT`` values, so that NumPy's inner loop is long.

Each answers None where it does not apply (other dtypes or layouts, small arrays) and the op's
NumPy body runs; the tests check both against that body.

>>> x = np.ones((2, 3, 4, 5), np.float32).transpose(0, 3, 1, 2)  # channels-last (2, 5, 3, 4)
>>> sum_by_products(np.ascontiguousarray(x), (0, 2, 3)) is None  # too small to pay
True
"""

from __future__ import annotations

import numpy as np

from ..backend.blas import FLOATS  # the dtypes BLAS's matrix-vector products serve

MIN_SIZE = 1 << 14  # below this NumPy's own sum or add is as fast as the checks here
SHORT = 64  # add_trailing's rows reach at least this many values


def memory_order(x) -> tuple | None:
    """The axes of ``x`` from the slowest to the fastest in memory, where ``x`` is dense in
    that order (``x.transpose(order)`` is C-contiguous); else None.

    >>> memory_order(np.ones((2, 3, 4)).transpose(2, 0, 1))
    (1, 2, 0)
    """
    if x.flags.c_contiguous:
        return tuple(range(x.ndim))
    order = tuple(sorted(range(x.ndim), key=lambda i: -x.strides[i]))
    return order if x.transpose(order).flags.c_contiguous else None


def _served(x) -> bool:
    return type(x) is np.ndarray and x.dtype in FLOATS and x.size >= MIN_SIZE


def sum_by_products(x, axes: tuple):
    """``x.sum(axes)`` (the kept axes in ``x``'s order, no kept dims) as matrix-vector products
    with ones, or None where the kept axes are not one run of ``x``'s memory order.

    >>> x = np.arange(8 * 3 * 32 * 32, dtype=np.float64).reshape(8, 3, 32, 32)
    >>> bool(np.allclose(sum_by_products(x, (0, 2, 3)), x.sum((0, 2, 3))))
    True
    """
    if not _served(x) or (x.flags.c_contiguous and axes == tuple(range(len(axes)))):
        return None  # leading axes of C-contiguous memory: NumPy adds whole rows already
    order = memory_order(x)
    if order is None:
        return None
    runs: list = []  # [summed?, size] along memory order, size-1 axes left out
    kept = []
    for ax in order:
        size = x.shape[ax]
        if size == 1:
            continue
        summed = ax in axes
        if not summed:
            kept.append(ax)
        if runs and runs[-1][0] == summed:
            runs[-1][1] *= size
        else:
            runs.append([summed, size])
    pattern = tuple(r[0] for r in runs)
    flat = x.transpose(order).reshape(-1)
    ones = np.ones(max(r[1] for r in runs), x.dtype)
    if pattern == (True, False):
        out = ones[: runs[0][1]] @ flat.reshape(runs[0][1], runs[1][1])
    elif pattern == (False, True):
        out = flat.reshape(runs[0][1], runs[1][1]) @ ones[: runs[1][1]]
    elif pattern == (True, False, True):
        inner = flat.reshape(runs[0][1] * runs[1][1], runs[2][1]) @ ones[: runs[2][1]]
        out = ones[: runs[0][1]] @ inner.reshape(runs[0][1], runs[1][1])
    else:
        return None
    out = out.reshape([x.shape[a] for a in kept])
    if kept != sorted(kept):
        out = out.transpose(np.argsort(kept))
    return out.reshape([n for a, n in enumerate(x.shape) if a not in axes])


def repeats(rows: int, period: int) -> int:
    """How many times to repeat a pattern of ``period`` values so that rows of it hold at
    least ``SHORT`` values while ``rows`` of one pattern still divide into whole rows (small
    prime factors of ``rows``); 1 where none does.

    >>> repeats(64 * 28 * 28, 6), repeats(7, 6)
    (16, 7)
    """
    repeat = 1
    while period * repeat < SHORT:
        f = next((f for f in (2, 3, 5, 7) if rows % (repeat * f) == 0), None)
        if f is None:
            break
        repeat *= f
    return repeat


def add_trailing(a, b):
    """``a + b`` for ``b`` broadcast along all but ``a``'s fastest axes (holding fewer than
    ``SHORT`` values, one dtype with ``a``), in ``a``'s memory layout; else None.

    >>> a = np.zeros((64, 4, 8, 8), np.float32).transpose(0, 2, 3, 1).copy().transpose(0, 3, 1, 2)
    >>> out = add_trailing(a, np.arange(4, dtype=np.float32).reshape(1, 4, 1, 1))
    >>> out[1, :, 2, 3].tolist(), out.transpose(0, 2, 3, 1).flags.c_contiguous
    ([0.0, 1.0, 2.0, 3.0], True)
    """
    if not _served(a) or type(b) is not np.ndarray or b.dtype != a.dtype:
        return None
    if not 1 <= b.ndim <= a.ndim:
        return None  # a 0-d b is NumPy's scalar loop already
    if a.flags.c_contiguous and (b.shape[-1] == 1 or a.shape[-1] >= SHORT):
        return None  # b constant along a's fastest axis, or rows long already
    order = memory_order(a)
    if order is None:
        return None
    lead = a.ndim - b.ndim
    shape_b = (1,) * lead + b.shape
    if any(s != 1 and s != t for s, t in zip(shape_b, a.shape)):
        return None
    period = 1
    inner_axes: list = []  # the fastest axes, along which b varies, slowest first
    inner = True
    for ax in reversed(order):
        if a.shape[ax] == 1:
            continue
        if inner and shape_b[ax] == a.shape[ax]:
            inner_axes.insert(0, ax)
            period *= a.shape[ax]
        elif shape_b[ax] == 1:
            inner = False
        else:
            return None  # b varies along a slower axis too
    if period == 1 or period >= SHORT:
        return None
    repeat = repeats(a.size // period, period)
    if repeat == 1:
        return None
    logical = sorted(inner_axes)
    values = b.reshape(shape_b)[tuple(slice(None) if i in logical else 0 for i in range(a.ndim))]
    pattern = np.tile(values.transpose([logical.index(ax) for ax in inner_axes]).ravel(), repeat)
    out = np.empty_like(a)
    dst = out.transpose(order)
    if not dst.flags.c_contiguous:
        return None
    width = period * repeat
    np.add(a.transpose(order).reshape(-1, width), pattern, out=dst.reshape(-1, width))
    return out
