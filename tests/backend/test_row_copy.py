"""``kernels/row_copy.py`` on the emulated CuPy (g++ runs its source): strided arrays copied
into C order a row piece at a time, against NumPy, and the layouts it leaves to CuPy."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ember.backend import kernels
from ember.backend.kernels import row_copy

from . import _emulator

pytestmark = pytest.mark.skipif(not _emulator.available(), reason="needs g++ to emulate kernels")

_R = np.random.default_rng(0)


def _a(*shape, dtype=np.float32):
    return _R.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize(
    "make,width",
    [
        (lambda: _a(2, 3, 4, 8).transpose(0, 2, 1, 3), 16),  # heads split: rows of 32 bytes
        (lambda: _a(2, 3, 4, 16, dtype=ml_dtypes.bfloat16).transpose(0, 2, 1, 3), 16),
        (lambda: _a(5, 6, 7, 2).transpose(2, 0, 1, 3), 8),  # rows of 8 bytes
        (lambda: _a(3, 10)[:, 2:6], 8),  # rows at 8-byte offsets
        (lambda: _a(3, 10)[::-1, 1:6], 4),  # negative strides, rows of 20 bytes
        (lambda: _a(2, 3, 5, 4, 4).transpose(1, 0, 2, 3, 4)[:, :, ::2], 16),  # 4 outer axes
        (lambda: _a(6, 8), 16),  # already C order: one row
    ],
)
def test_row_copy_matches_numpy(xp, monkeypatch, make, width):
    monkeypatch.setattr(row_copy, "BLOCK", 32)
    a = make()
    out = row_copy.c_order(xp, a)
    assert out.flags.c_contiguous and out.dtype == a.dtype
    np.testing.assert_array_equal(out, a)
    assert ("row_copy", width) in kernels._cache


@pytest.mark.parametrize(
    "case",
    [
        "the last axis strided",
        "rows of 3 bytes",
        "five outer axes",
        "no elements",
        "no kernels",
    ],
)
def test_row_copy_declines(xp, case):
    module = xp
    a = {
        "the last axis strided": lambda: _a(4, 4).T,
        "rows of 3 bytes": lambda: np.ones((3, 5), np.uint8)[:, 1:4],
        "five outer axes": lambda: _a(2, 2, 2, 2, 2, 4).transpose(4, 3, 2, 1, 0, 5),
        "no elements": lambda: np.zeros((0, 4), np.float32),
        "no kernels": lambda: _a(2, 3, 4, 8).transpose(0, 2, 1, 3),
    }[case]()
    if case == "no kernels":
        module = np
    assert row_copy.c_order(module, a) is NotImplemented


def test_cublas_operands_are_copied_by_rows(xp, monkeypatch):
    """A batched product's operand with no single batch stride (heads split from rows, or
    broadcast) is copied by the row kernel before cuBLAS reads it; where that declines, by
    CuPy."""
    from ember.backend.kernels import cublas

    monkeypatch.setattr(row_copy, "BLOCK", 32)
    heads = _a(2, 5, 3, 8).transpose(0, 2, 1, 3)  # (2, 3, 5, 8): batch strides differ
    shared = np.broadcast_to(_a(1, 5, 8), (3, 5, 8))
    for x in (heads, shared, _a(4, 6).T):
        out = cublas.c_order(xp, x)
        assert out.flags.c_contiguous
        np.testing.assert_array_equal(out, x)
    assert ("row_copy", 16) in kernels._cache
