"""PyTorch-style printing: ``tensor([1.0000, 2.5000], grad_fn=<MulBackward0>)``.

The layout rules are PyTorch's (``torch/_tensor_str.py``): one format for all elements
(integral floats as ``1.``, 4 decimals, or scientific notation when the magnitudes span more
than 1000x, exceed 1e8 or go below 1e-4), right-aligned columns, lines wrapped at 80
characters, tensors over 1000 elements summarized with ``...``, and suffixes for non-default
dtypes, devices and autograd state. Formatting works on a host NumPy copy.

>>> import ember
>>> ember.tensor([[1.0, 2.5], [-3.0, 100.0]])
tensor([[  1.0000,   2.5000],
        [ -3.0000, 100.0000]])
>>> ember.tensor([1e-5, 1.0])
tensor([1.0000e-05, 1.0000e+00])
>>> ember.tensor([True, False])
tensor([ True, False])
"""

from __future__ import annotations

import contextlib
import dataclasses
import math

import numpy as np

from . import dtypes as _dt


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print (the same options and profiles as PyTorch).

    >>> import ember
    >>> ember.set_printoptions(precision=2)
    >>> ember.tensor([1.12345])
    tensor([1.12])
    >>> ember.set_printoptions(profile="default")
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(
                f"set_printoptions: unknown profile {profile!r} (default, short, full)"
            )
        for k, v in _PROFILES[profile].items():
            setattr(PRINT_OPTS, k, v)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options, as keyword arguments for ``set_printoptions``.

    >>> import ember
    >>> ember.get_printoptions()["precision"]
    4
    """
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Change the print options inside a ``with`` block.

    >>> import ember
    >>> with ember.printoptions(precision=1):
    ...     print(ember.tensor([1.25]))
    tensor([1.2])
    """
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """One format (width, int/sci/fixed mode) for every element of a tensor."""

    def __init__(self, arr: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = arr.reshape(-1)
        p = PRINT_OPTS.precision
        if not floating:
            if flat.size:
                self.max_width = max(len(str(v)) for v in flat.tolist())
            return
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            return
        absv = np.abs(vals.astype(np.float64))
        vmin, vmax = float(absv.min()), float(absv.max())
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        values = vals.tolist()
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{p}e}") for v in values)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in values)
        else:
            self.max_width = max(len(f"{v:.{p}f}") for v in values)

    def format(self, value) -> str:
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _vector_str(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    element_length = fmt.max_width + 2
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * edge:
        data = (
            [fmt.format(v) for v in arr[:edge].tolist()]
            + [" ..."]
            + [fmt.format(v) for v in arr[-edge:].tolist()]
        )
    else:
        data = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(arr: np.ndarray, indent: int, summarize: bool, fmt) -> str:
    ndim = arr.ndim
    if ndim == 0:
        return fmt.format(arr.item())
    if ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    edge = PRINT_OPTS.edgeitems
    if summarize and arr.shape[0] > 2 * edge:
        rows = list(range(edge)) + [None] + list(range(arr.shape[0] - edge, arr.shape[0]))
    else:
        rows = range(arr.shape[0])
    slices = [
        "..." if i is None else _tensor_str_with_formatter(arr[i], indent + 1, summarize, fmt)
        for i in rows
    ]
    return "[" + ("," + "\n" * (ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized(arr: np.ndarray) -> np.ndarray:
    """The elements a summarized print shows (what the formatter must fit)."""
    edge = PRINT_OPTS.edgeitems
    if arr.ndim == 0:
        return arr
    if arr.ndim == 1:
        if arr.shape[0] > 2 * edge:
            return np.concatenate((arr[:edge], arr[-edge:]))
        return arr
    if not edge:
        return arr[(slice(0, 0),) * arr.ndim]
    if arr.shape[0] > 2 * edge:
        rows = [arr[i] for i in range(edge)] + [arr[i] for i in range(len(arr) - edge, len(arr))]
    else:
        rows = list(arr)
    return np.stack([_summarized(r) for r in rows])


def _host_values(t) -> np.ndarray:
    """The data on the host, with float16/bfloat16 widened to float32 (exactly)."""
    arr = t._data
    if type(arr) is not np.ndarray:
        from .backend import CPU, to_device

        arr = to_device(arr, CPU)
    if arr.dtype == _dt.bfloat16.np or arr.dtype == np.float16:
        arr = arr.astype(np.float32)
    return arr


def tensor_str(t, indent: int) -> str:
    """The bracketed body of a tensor's repr, as PyTorch lays it out."""
    arr = _host_values(t)
    if arr.size == 0:
        return "[]"
    summarize = arr.size > PRINT_OPTS.threshold
    fmt = _Formatter(_summarized(arr) if summarize else arr, t.dtype.is_floating_point)
    return _tensor_str_with_formatter(arr, indent, summarize, fmt)


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _symbolic_repr(t, prefix: str) -> str:
    """A value inside a graph being traced has no numbers: show its shape and dtype."""
    dims = ", ".join("?" if not isinstance(s, int) else str(s) for s in t._data.shape)
    extra = f", grad_fn=<{t._node.name()}>" if t._node is not None else ""
    return f"{prefix}<symbolic {t.dtype.name}[{dims}]>{extra})"


def tensor_repr(t) -> str:
    """``repr(tensor)``: PyTorch's text with ``torch`` spelled ``ember``."""
    from ._tensor import Tensor

    cls = type(t)
    prefix = "tensor(" if cls is Tensor or cls.__name__ == "Parameter" else f"{cls.__name__}("
    if not hasattr(t._data, "__array_interface__") and not hasattr(
        t._data, "__cuda_array_interface__"
    ):
        return _symbolic_repr(t, prefix)
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    dt = t.dtype
    default = _dt.get_default_dtype()
    if t._data.size == 0:
        if t._data.ndim != 1:
            suffixes.append(f"size={tuple(t._data.shape)}")
        if dt is not default:
            suffixes.append(f"dtype={dt!r}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(t._data.shape)}")
        if dt is not default and dt is not _dt.int64 and dt is not _dt.bool_:
            suffixes.append(f"dtype={dt!r}")
        body = tensor_str(t, indent)
    if t._node is not None:
        suffixes.append(f"grad_fn=<{t._node.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
