"""``make_tensor``: a tensor of a shape and dtype with values drawn from ember's generator in
``[low, high)``, with PyTorch's default ranges and checks."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

from .. import dtypes as _dt
from .._tensor import Tensor
from ..functions.creation import empty, randint


def _low_high(low, high, dtype, lowest, highest, default_low, default_high):
    """PyTorch's ``modify_low_high``: defaults, checks, clamping to what ``dtype`` holds."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype.is_floating_point:
        warnings.warn(
            "Passing `low==high` to `ember.testing.make_tensor` for floating types is "
            "deprecated (as in PyTorch since 2.1); use `ember.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lowest}, {highest})"
        )
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if not dtype.is_floating_point:
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(
    *shape: int | Sequence[int],
    dtype: _dt.DType,
    device,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format=None,
) -> Tensor:
    """A ``shape`` tensor of ``dtype`` on ``device`` with values in ``[low, high)`` (floats:
    [-9, 9), integers: [-9, 10), bools: both), as ``torch.testing.make_tensor``.

    >>> import ember
    >>> t = ember.testing.make_tensor(2, 3, dtype=ember.float32, device="cpu", low=0, high=1)
    >>> t.shape, bool(((t >= 0) & (t < 1)).all())
    (ember.Size([2, 3]), True)
    """
    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
            f"noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    integral = not dtype.is_floating_point
    if requires_grad and integral:
        raise ValueError(
            "`requires_grad=True` is not supported for boolean and integral dtypes, "
            f"but got dtype={dtype}"
        )
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is _dt.bool_:
        low, high = _low_high(low, high, dtype, 0, 2, 0, 2)
        result = randint(low, high, shape, dtype=dtype, device=device)
    elif integral:
        info = _dt.iinfo(dtype)
        top = info.max + (1 if dtype is not _dt.int64 else 0)
        low, high = _low_high(low, high, dtype, info.min, top, -9, 10)
        result = randint(low, high, shape, dtype=dtype, device=device)
    else:
        info = _dt.finfo(dtype)
        low, high = _low_high(low, high, dtype, info.min, info.max, -9, 9)
        result = empty(shape, dtype=dtype, device=device)
        if high - low >= info.max:  # uniform_ needs high - low to be finite in the dtype
            result.uniform_(low / 2, high / 2).mul_(2)
        else:
            result.uniform_(low, high)
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.contiguous(memory_format=memory_format)
    if exclude_zero:
        result.masked_fill_(result == 0, 1 if integral else _dt.finfo(dtype).tiny)
    if not integral:
        result.requires_grad_(requires_grad)
    return result
