"""NumPy-side preparation of what ``SummaryWriter`` logs: host arrays, checks, histograms, images.

Everything here follows ``torch.utils.tensorboard.summary`` (same histogram buckets, same image
scaling and grids) but names the ``SummaryWriter`` method in every error.

>>> import numpy as np
>>> from ember.utils.tensorboard._convert import image_hwc
>>> image_hwc(np.zeros((1, 4, 5), np.float32), "CHW", "add_image").shape
(4, 5, 3)
"""

from __future__ import annotations

import numbers

import numpy as np

from ..._errors import DTypeError, EmberError, ShapeError
from ..._tensor import Tensor


def to_numpy(x, where: str, name: str) -> np.ndarray:
    """``x`` (ember tensor on any device, NumPy array, number, torch tensor) as a host array."""
    if isinstance(x, Tensor):
        arr = x.detach().numpy(force=True)
    elif isinstance(x, np.ndarray):
        arr = x
    elif isinstance(x, (numbers.Number, np.generic)):
        arr = np.asarray(x)
    elif hasattr(x, "detach") and hasattr(x, "cpu") and hasattr(x, "numpy"):  # torch.Tensor
        x = x.detach().cpu()
        if str(getattr(x, "dtype", "")) == "torch.bfloat16":
            x = x.float()
        arr = x.numpy()
    elif isinstance(x, (list, tuple)):
        try:
            arr = np.asarray(x)
        except ValueError as exc:
            raise ShapeError(f"{where}: {name} is a ragged nested sequence ({exc})") from None
    else:
        raise DTypeError(
            f"{where}: {name} must be an ember Tensor, a NumPy array or a number, "
            f"got {type(x).__name__}"
        )
    kind = arr.dtype.kind
    if kind in "biuf":
        return arr
    if kind == "V":  # ml_dtypes (bfloat16, float8...): widen to float32
        try:
            return arr.astype(np.float32)
        except (TypeError, ValueError):
            pass
    raise DTypeError(f"{where}: {name} must hold real numbers, got dtype {arr.dtype}")


def scalar_value(x, where: str, name: str = "scalar_value") -> float:
    """The one number in ``x`` (a one-element tensor of any shape, as PyTorch's ``squeeze``)."""
    if isinstance(x, (bool, int, float)):
        return float(x)
    if isinstance(x, str):
        raise DTypeError(f"{where}: {name} must be a number or a one-element tensor, got str {x!r}")
    arr = to_numpy(x, where, name)
    if arr.size != 1:
        raise ShapeError(
            f"{where}: {name} must hold exactly one element, got shape {tuple(arr.shape)}; "
            "log a single number, e.g. loss.item() or tensor.mean()"
        )
    return float(arr.reshape(()))


def step_value(step, where: str, name: str = "global_step") -> int | None:
    """``global_step`` as an ``int`` (``None`` stays ``None``), as PyTorch's ``int(step)``."""
    if step is None or isinstance(step, int):
        return step
    if isinstance(step, str):
        raise DTypeError(f"{where}: {name} must be an integer, got str {step!r}")
    return int(scalar_value(step, where, name))


def walltime_value(walltime, where: str) -> float | None:
    return None if walltime is None else scalar_value(walltime, where, "walltime")


_DEFAULT_BINS: list[float] | None = None


def default_bins() -> list[float]:
    """TensorFlow's histogram bucket limits: +-1e-12 growing by 10% to 1e20, and 0."""
    global _DEFAULT_BINS
    if _DEFAULT_BINS is None:
        v, pos = 1e-12, []
        while v < 1e20:
            pos.append(v)
            v *= 1.1
        _DEFAULT_BINS = [-b for b in reversed(pos)] + [0] + pos
    return _DEFAULT_BINS


def histogram(values, bins, max_bins, where: str = "add_histogram") -> dict:
    """The fields of a ``HistogramProto`` for ``values`` (PyTorch's ``make_histogram``)."""
    arr = to_numpy(values, where, "values").astype(np.float64).reshape(-1)
    if arr.size == 0:
        raise ShapeError(f"{where}: values is empty (shape {tuple(np.shape(values))})")
    if isinstance(bins, str) and bins == "tensorflow":
        bins = default_bins()
    elif isinstance(bins, Tensor | np.ndarray):
        bins = to_numpy(bins, where, "bins")
    try:
        counts, limits = np.histogram(arr, bins=bins)
    except (ValueError, TypeError) as exc:
        raise EmberError(
            f"{where}: cannot bin values of shape {tuple(np.shape(values))} with bins={bins!r} "
            f"({exc}); use 'tensorflow', a NumPy bin rule such as 'auto', a count or edges"
        ) from None
    if max_bins is not None and len(counts) > max_bins:
        sub = len(counts) // max_bins
        rem = len(counts) % sub
        if rem:
            counts = np.pad(counts, [[0, sub - rem]], mode="constant", constant_values=0)
        counts = counts.reshape(-1, sub).sum(axis=-1)
        new_limits = np.empty((counts.size + 1,), limits.dtype)
        new_limits[:-1] = limits[:-1:sub]
        new_limits[-1] = limits[-1]
        limits = new_limits
    # keep the buckets from the first non-empty one to the last, plus one empty on the left
    cum = np.cumsum(np.greater(counts, 0))
    start, end = (int(i) for i in np.searchsorted(cum, [0, cum[-1] - 1], side="right"))
    end += 1
    counts = counts[start - 1 : end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start : end + 1]
    if counts.size == 0 or limits.size == 0:
        raise EmberError(
            f"{where}: none of the {arr.size} values (shape {tuple(np.shape(values))}) falls in "
            "a bucket: they are NaN or outside the bins"
        )
    return dict(
        min=float(arr.min()),
        max=float(arr.max()),
        num=float(arr.size),
        sum=float(arr.sum()),
        sum_squares=float(arr.dot(arr)),
        bucket_limit=limits.tolist(),
        bucket=counts.tolist(),
    )


_FORMATS = {2: ("HW",), 3: ("CHW", "HWC"), 4: ("NCHW", "NHWC")}


def _check_format(dataformats, where: str) -> str:
    if not isinstance(dataformats, str):
        raise DTypeError(
            f"{where}: dataformats must be a string such as 'CHW', got {dataformats!r}"
        )
    fmt = dataformats.upper()
    ok = (
        2 <= len(fmt) <= 4
        and len(set(fmt)) == len(fmt)
        and set(fmt) <= set("NCHW")
        and {"H", "W"} <= set(fmt)
        and (len(fmt) == 2 or "C" in fmt)
        and (len(fmt) < 4 or "N" in fmt)
    )
    if not ok:
        raise EmberError(
            f"{where}: dataformats={dataformats!r} is not an image layout; use a permutation of "
            "'HW', 'CHW' (or 'HWC') or 'NCHW' (or 'NHWC')"
        )
    return fmt


def image_hwc(img, dataformats: str, where: str) -> np.ndarray:
    """``img`` laid out as ``dataformats`` -> a uint8 ``(H, W, 1|3|4)`` array ready for PNG.

    Floats and other non-uint8 types are taken as 0..1 and scaled by 255 (then clipped and
    truncated, as PyTorch does); uint8 is used as is. Batches become one grid of at most 8
    columns; grayscale becomes RGB.
    """
    fmt = _check_format(dataformats, where)
    arr = to_numpy(img, where, "img_tensor")
    shape = tuple(arr.shape)
    if arr.ndim != len(fmt):
        hint = " or ".join(repr(f) for f in _FORMATS.get(arr.ndim, ()))
        raise ShapeError(
            f"{where}: img_tensor of shape {shape} has {arr.ndim} dims but "
            f"dataformats={dataformats!r} expects {len(fmt)} ({', '.join(fmt)})"
            + (f"; pass dataformats={hint}" if hint else "")
        )
    dims = dict(zip(fmt, shape, strict=True))
    if "C" in dims and dims["C"] not in (1, 3, 4):
        hint = ""
        if len(fmt) == 3 and fmt.index("C") == 0 and shape[-1] in (1, 3, 4):
            hint = "; for channels-last images pass dataformats='HWC'"
        elif len(fmt) == 4 and fmt.index("C") == 1 and shape[-1] in (1, 3, 4):
            hint = "; for channels-last images pass dataformats='NHWC'"
        raise ShapeError(
            f"{where}: img_tensor of shape {shape} with dataformats={dataformats!r} has "
            f"{dims['C']} channels; expected 1 (grayscale), 3 (RGB) or 4 (RGBA){hint}"
        )
    if 0 in shape:
        raise ShapeError(f"{where}: img_tensor of shape {shape} is empty")
    if arr.dtype == np.uint8:
        pixels = arr
    else:
        scaled = arr.astype(np.float32) * np.float32(255)
        pixels = np.nan_to_num(np.clip(scaled, 0, 255), nan=0.0).astype(np.uint8)
    if len(fmt) == 2:
        hw = pixels.transpose([fmt.index(c) for c in "HW"])
        return np.stack([hw, hw, hw], axis=2)
    if len(fmt) == 3:
        hwc = pixels.transpose([fmt.index(c) for c in "HWC"])
    else:
        hwc = _grid(pixels.transpose([fmt.index(c) for c in "NHWC"]))
    if hwc.shape[2] == 1:
        hwc = np.concatenate([hwc, hwc, hwc], axis=2)
    return np.ascontiguousarray(hwc)


def _grid(nhwc: np.ndarray, ncols: int = 8) -> np.ndarray:
    """Images ``(N, H, W, C)`` tiled row by row, ``min(N, 8)`` per row (PyTorch's make_grid)."""
    n, h, w, c = nhwc.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((nrows * h, ncols * w, c), dtype=nhwc.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[y * h : (y + 1) * h, x * w : (x + 1) * w] = nhwc[i]
    return canvas


def encode_png(hwc: np.ndarray, where: str) -> bytes:
    """PNG bytes of a uint8 ``(H, W, 3|4)`` array (Pillow, imported here)."""
    try:
        import io

        from PIL import Image
    except ImportError as exc:
        from ._tbx import MissingDependencyError

        raise MissingDependencyError(
            f"{where}: encoding images needs Pillow: pip install pillow"
        ) from exc
    buf = io.BytesIO()
    Image.fromarray(hwc).save(buf, format="PNG")
    return buf.getvalue()
