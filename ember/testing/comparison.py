"""``assert_close``: PyTorch's ``torch.testing.assert_close``, its checks, default tolerances
and messages, on ember tensors, Python numbers and NumPy arrays (and sequences and mappings
of them); ``assert_allclose``, its deprecated predecessor."""

from __future__ import annotations

import cmath
import math
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from .. import dtypes as _dt
from .._tensor import Tensor
from ..functions.compare import isclose
from ..functions.creation import as_tensor, tensor

# (rtol, atol) by dtype when neither is given; other dtypes compare exactly.
TOLERANCES = {
    _dt.float16: (1e-3, 1e-5),
    _dt.bfloat16: (1.6e-2, 1e-5),
    _dt.float32: (1.3e-6, 1e-5),
    _dt.float64: (1e-7, 1e-7),
}
# assert_allclose's own table (looser; the rest as assert_close's).
ALLCLOSE_TOLERANCES = {
    **TOLERANCES,
    _dt.float16: (1e-3, 1e-3),
    _dt.float32: (1e-4, 1e-5),
    _dt.float64: (1e-5, 1e-8),
}
# Python numbers compare in the dtype PyTorch gives them.
_NUMBER_DTYPES = {bool: _dt.bool_, int: _dt.int64, float: _dt.float64}


class _Mismatch(Exception):
    """A failed check: the exception type to raise and its message (before ``msg`` and the
    item path are applied)."""

    def __init__(self, kind: type, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message


def _check_given(rtol, atol) -> None:
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}."
        )


def _tolerances(dtypes, rtol, atol, table=TOLERANCES) -> tuple[float, float]:
    if rtol is not None:
        return rtol, atol
    pairs = [table.get(d, (0.0, 0.0)) for d in dtypes]
    return max(r for r, _ in pairs), max(a for _, a in pairs)


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol) -> str:
    equality = rtol == 0 and atol == 0

    def line(kind, diff, idx, tol):
        text = (
            f"{kind.title()} difference: {diff}"
            if idx is None
            else (f"Greatest {kind} difference: {diff} at index {idx}")
        )
        return text + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    msg += line("absolute", abs_diff, abs_idx, atol) + line("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    extra = f"Expected {expected} but got {actual}."
    return _mismatch_msg("Scalars", extra, abs_diff, None, atol, rel_diff, None, rtol)


def _tensor_msg(actual: Tensor, expected: Tensor, matches: Tensor, rtol, atol) -> str:
    n = matches.numel()
    bad = n - int(matches.sum().item())
    extra = f"Mismatched elements: {bad} / {n} ({bad / n:.1%})"
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not actual.dtype.is_floating_point:
        a, e = a.long(), e.long()
    abs_diff = (a - e).abs().masked_fill(m, 0)
    rel_diff = (abs_diff / e.abs()).masked_fill(m, 0)
    (abs_max, abs_at), (rel_max, rel_at) = abs_diff.max(0), rel_diff.max(0)
    shape = tuple(matches.shape)
    return _mismatch_msg(
        "Tensor-likes",
        extra,
        abs_max.item(),
        tuple(int(i) for i in np.unravel_index(int(abs_at.item()), shape)),
        atol,
        rel_max.item(),
        tuple(int(i) for i in np.unravel_index(int(rel_at.item()), shape)),
        rtol,
    )


def _attribute(name: str, actual, expected) -> _Mismatch:
    return _Mismatch(
        AssertionError, f"The values for attribute '{name}' do not match: {actual} != {expected}."
    )


def _compare_tensors(actual: Tensor, expected: Tensor, o: dict) -> None:
    if actual.shape != expected.shape:
        raise _attribute("shape", actual.shape, expected.shape)
    if actual.layout != expected.layout:
        if o["check_layout"]:
            raise _attribute("layout", actual.layout, expected.layout)
    elif o["check_stride"] and actual.stride() != expected.stride():
        raise _attribute("stride()", actual.stride(), expected.stride())
    if o["check_device"] and actual.device != expected.device:
        raise _attribute("device", actual.device, expected.device)
    if o["check_dtype"] and actual.dtype != expected.dtype:
        raise _attribute("dtype", actual.dtype, expected.dtype)
    rtol, atol = _tolerances((actual.dtype, expected.dtype), o["rtol"], o["atol"], o["table"])
    actual, expected = actual.detach(), expected.detach()
    if actual.layout != expected.layout:
        actual, expected = actual.to_dense(), expected.to_dense()
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype != expected.dtype:
        common = _dt.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    if actual.dtype is _dt.bool_ or not actual.dtype.is_floating_point:
        matches = actual == expected
    else:
        matches = isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=o["equal_nan"])
    if bool(matches.all()):
        return
    if actual.ndim == 0:
        message = _scalar_msg(actual.item(), expected.item(), rtol, atol)
    else:
        message = _tensor_msg(actual, expected, matches, rtol, atol)
    raise _Mismatch(AssertionError, message)


def _compare_numbers(actual, expected, o: dict) -> None:
    if isinstance(actual, bool) and isinstance(expected, bool):
        if actual is not expected:
            raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
        return
    if o["check_dtype"] and type(actual) is not type(expected):
        raise _Mismatch(
            AssertionError,
            f"The (d)types do not match: {type(actual)} != {type(expected)}.",
        )
    dtypes = (_NUMBER_DTYPES[type(actual)], _NUMBER_DTYPES[type(expected)])
    rtol, atol = _tolerances(dtypes, o["rtol"], o["atol"], o["table"])
    if actual == expected or (o["equal_nan"] and cmath.isnan(actual) and cmath.isnan(expected)):
        return
    abs_diff = abs(actual - expected)
    if math.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_msg(actual, expected, rtol, atol))


def _is_number(x) -> bool:
    return type(x) in _NUMBER_DTYPES


def _compare(actual, expected, o: dict, path: str) -> None:
    """Compare ``actual`` with ``expected``, descending into sequences and mappings; a failure
    carries the path of the item it occurred for."""
    try:
        if isinstance(actual, Tensor) and isinstance(expected, Tensor):
            return _compare_tensors(actual, expected, o)
        if isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray):
            return _compare_tensors(as_tensor(actual), as_tensor(expected), o)
        if _is_number(actual) and _is_number(expected):
            return _compare_numbers(actual, expected, o)
    except _Mismatch as m:
        raise _Mismatch(
            m.kind, m.message + (f"\n\nThe failure occurred for item {path}" if path else "")
        ) from None
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(
                AssertionError,
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
            )
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, o, f"{path}[{i}]")
        return None
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        keys_a, keys_e = set(actual), set(expected)
        if keys_a != keys_e:
            missing, extra = sorted(keys_e - keys_a), sorted(keys_a - keys_e)
            raise _Mismatch(
                AssertionError,
                "The keys of the mappings do not match:\n"
                + (f"Missing keys in the actual mapping: {missing}\n" if missing else "")
                + (f"Additional keys in the actual mapping: {extra}" if extra else ""),
            )
        for k in sorted(keys_e, key=str):
            _compare(actual[k], expected[k], o, f"{path}[{k!r}]")
        return None
    raise _Mismatch(
        TypeError,
        f"No comparison pair was able to handle inputs of type {_type_name(actual)} and "
        f"{_type_name(expected)}.",
    )


def _type_name(x) -> str:
    return "<class 'ember.Tensor'>" if type(x) is Tensor else str(type(x))


def _is_sequence(x) -> bool:
    return isinstance(x, Sequence) and not isinstance(x, str)


def assert_close(
    actual,
    expected,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: str | Callable[[str], str] | None = None,
) -> None:
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` have the same shape, device
    and dtype and ``|actual - expected| <= atol + rtol * |expected|`` everywhere (defaults by
    dtype, exact for integers), as ``torch.testing.assert_close``.

    >>> import ember
    >>> a = ember.tensor([1.0, 2.0, 3.0])
    >>> ember.testing.assert_close(a, a + 1e-7)
    >>> try:
    ...     ember.testing.assert_close(a, a + 0.1)
    ... except AssertionError as e:
    ...     print(str(e).splitlines()[0])
    Tensor-likes are not close!
    """
    options = {
        "rtol": rtol,
        "atol": atol,
        "equal_nan": equal_nan,
        "check_device": check_device,
        "check_dtype": check_dtype,
        "check_layout": check_layout,
        "check_stride": check_stride,
        "table": TOLERANCES,
    }
    _run(actual, expected, options, msg)


def _run(actual, expected, options: dict, msg) -> None:
    _check_given(options["rtol"], options["atol"])
    try:
        _compare(actual, expected, options, "")
    except _Mismatch as m:
        message = m.message
        if callable(msg):
            message = msg(message)
        elif msg is not None:
            message = msg
        raise m.kind(message) from None


def assert_allclose(
    actual,
    expected,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg: str = "",
) -> None:
    """Deprecated (as in PyTorch since 1.12): ``assert_close`` with looser default tolerances,
    ``equal_nan=True``, no dtype check, and non-tensor inputs made tensors.

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.testing.assert_allclose(ember.tensor([1.0]), [1.00001])
    """
    warnings.warn(
        "`ember.testing.assert_allclose()` is deprecated (as `torch.testing.assert_allclose()` "
        "since 1.12) and will be removed in a future release. Please use "
        "`ember.testing.assert_close()` instead.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    options = {
        "rtol": rtol,
        "atol": atol,
        "equal_nan": equal_nan,
        "check_device": True,
        "check_dtype": False,
        "check_layout": True,
        "check_stride": False,
        "table": ALLCLOSE_TOLERANCES,
    }
    _run(actual, expected, options, msg or None)
