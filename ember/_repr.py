"""PyTorch-style printing: ``tensor([1., 2.], grad_fn=<MulBackward0>)``."""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt


def _format_floats(arr: np.ndarray) -> dict:
    finite = arr[np.isfinite(arr)]
    if finite.size == 0:
        return {"float_kind": lambda v: _special(v)}
    ints = np.all(finite == np.round(finite))
    amax = np.abs(finite).max()
    amin = np.abs(finite[finite != 0]).min() if np.any(finite != 0) else 0.0
    sci = amax >= 1e8 or (amin != 0 and amin < 1e-4) or (amin != 0 and amax / amin > 1000 and not ints)
    if ints and not sci:
        return {"float_kind": lambda v: _special(v) or f"{v:.0f}."}
    if sci:
        return {"float_kind": lambda v: _special(v) or f"{v:.4e}"}
    return {"float_kind": lambda v: _special(v) or f"{v:.4f}"}


def _special(v) -> str:
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return ""


def tensor_repr(t) -> str:
    arr = np.asarray(t.numpy(force=True))
    dt = t.dtype
    if dt in (_dt.bfloat16, _dt.float16):
        arr = arr.astype(np.float32)
    prefix = "tensor("
    if arr.size == 0:
        body = "[]" if arr.ndim == 1 else f"[], size={tuple(arr.shape)}"
    else:
        opts = _format_floats(arr) if dt.is_floating_point else {}
        body = np.array2string(
            arr, separator=", ", prefix=prefix, formatter=opts or None, threshold=1000,
            edgeitems=3, max_line_width=80,
        )
    extras = []
    default_dt = dt is _dt.get_default_dtype() or dt is _dt.int64 or dt is _dt.bool_
    if not default_dt or (arr.size == 0 and dt is not _dt.get_default_dtype()):
        extras.append(f"dtype={dt!r}")
    if t.device.type != "cpu":
        extras.append(f"device='{t.device}'")
    if t._node is not None:
        extras.append(f"grad_fn=<{t._node.name()}>")
    elif t._requires_grad:
        extras.append("requires_grad=True")
    return prefix + body + "".join(", " + e for e in extras) + ")"
