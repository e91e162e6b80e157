"""``kernels/vectorized.py``: the 16-byte-access elementwise kernel on the emulated CuPy (g++
runs its source), against NumPy, for each operand layout it takes and the ones it declines."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ember.backend.kernels import row_copy
from ember.backend.kernels.vectorized import Vectorized

from . import _emulator, _nvrtc

pytestmark = pytest.mark.skipif(not _emulator.available(), reason="needs g++ to emulate kernels")


def _fma(dtype: str) -> Vectorized:
    return Vectorized(
        f"{dtype} x, {dtype} y",
        f"{dtype} z",
        "z = x * y + (z0_t)i;".replace(
            "z0_t", {"float32": "float", "float64": "double", "uint16": "unsigned short"}[dtype]
        ),
        "ember_test_fma",
    )


@pytest.mark.parametrize("dtype", ["float32", "float64", "uint16"])
@pytest.mark.parametrize(
    "shape,y_shape",
    [
        ((1,), (1,)),
        ((7,), (7,)),
        ((8,), (8,)),
        ((3, 37), (3, 37)),  # a tail after the vectors
        ((4, 6, 5), ()),  # one value
        ((4, 6, 5), (1, 1)),
        ((4, 6, 5), (5,)),  # trailing: a bias
        ((4, 6, 5), (6, 5)),
        ((4, 6, 5), (4, 1, 1)),  # leading: a value per row
        ((4, 6, 5), (4, 6, 1)),
    ],
)
def test_vectorized_matches_numpy(xp, dtype, shape, y_shape):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 50, shape).astype(dtype)
    y = rng.integers(0, 50, y_shape).astype(dtype)
    z = np.empty(shape, dtype)
    assert _fma(dtype).run(xp, x, y, z)
    want = (x * y + np.arange(x.size).reshape(shape)).astype(dtype)
    np.testing.assert_array_equal(z, want)


@pytest.mark.parametrize("dtype", ["float32", "uint16"])
@pytest.mark.parametrize(
    "make",
    [
        lambda d: np.arange(2 * 6 * 16).astype(d).reshape(6, 2, 16).transpose(1, 0, 2),
        lambda d: np.arange(5 * 64).astype(d).reshape(5, 64)[:, 16:48],  # rows of a slice
        lambda d: np.arange(3 * 4 * 2 * 8).astype(d).reshape(2, 3, 4, 8).transpose(1, 2, 0, 3),
        lambda d: np.arange(4 * 16).astype(d).reshape(4, 16)[::-1],  # rows in reverse
    ],
)
def test_vectorized_reads_rows_of_strided_views(xp, dtype, make):
    """A view whose last axis is contiguous (attention's transposed heads): vectors from each
    row's own place, beside a full operand and a value."""
    x = make(dtype)
    assert not x.flags.c_contiguous
    y = np.ones(x.shape, dtype)
    z = np.empty(x.shape, dtype)
    assert _fma(dtype).run(xp, x, y, z)
    np.testing.assert_array_equal(z, (x * y + np.arange(x.size).reshape(x.shape)).astype(dtype))
    assert _fma(dtype).run(xp, y, x, z)  # the rows operand second
    np.testing.assert_array_equal(z, (y * x + np.arange(x.size).reshape(x.shape)).astype(dtype))


@pytest.mark.parametrize(
    "x",
    [
        np.ones((2, 6, 10), np.float32).transpose(1, 0, 2),  # rows of 10: not a multiple of 4
        np.ones((8, 8), np.float32)[:, 2:6][::2],  # rows at 8-byte offsets
        np.ones((2, 2, 2, 2, 8), np.float32).transpose(1, 0, 2, 3, 4),  # five axes
    ],
)
def test_vectorized_declines_rows_it_cannot_align(xp, x):
    y, z = np.ones(x.shape, np.float32), np.zeros(x.shape, np.float32)
    assert not _fma("float32").run(xp, x, y, z)


def test_vectorized_mixes_widths_and_reads_outputs(xp):
    """A 2-byte input beside 4-byte ones (4 elements a thread), and an output the operation
    reads (loaded before the operation runs)."""
    v = Vectorized("uint16 a, float32 b", "float32 acc", "acc = acc + (float)a * b;", "ember_t")
    a = np.arange(21, dtype=np.uint16)
    b = np.full(21, 0.5, np.float32)
    acc = np.ones(21, np.float32)
    assert v.run(xp, a, b, acc)
    np.testing.assert_array_equal(acc, 1 + a * np.float32(0.5))


@pytest.mark.parametrize(
    "case",
    ["strided", "transposed", "misaligned", "middle broadcast", "dtype", "output layout", "numpy"],
)
def test_vectorized_declines_what_it_does_not_serve(xp, case):
    """Returns False, touching nothing, where the caller's ElementwiseKernel must run."""
    x = np.ones((4, 8), np.float32)
    y = np.ones((4, 8), np.float32)
    z = np.zeros((4, 8), np.float32)
    module = xp
    if case == "strided":
        x = np.ones((4, 16), np.float32)[:, ::2]
    elif case == "transposed":
        x = np.ones((8, 4), np.float32).T
    elif case == "misaligned":
        x = np.ones(33, np.float32)[1:].reshape(4, 8)
    elif case == "middle broadcast":
        y = np.ones((1, 4, 1), np.float32)
        x, z = np.ones((2, 4, 8), np.float32), np.zeros((2, 4, 8), np.float32)
    elif case == "dtype":
        y = y.astype(np.float64)
    elif case == "output layout":
        z = np.zeros((8, 4), np.float32).T
    elif case == "numpy":
        module = np
    assert not _fma("float32").run(module, x, y, z)
    assert not z.any()


def test_vectorized_source_reads_sixteen_bytes():
    src = Vectorized("uint16 x", "uint16 y", "y = x;", "ember_copy").source(("v",), 8, False)
    assert "struct alignas(16) ember_vec_2 { unsigned short v[8]; };" in src
    assert "((const ember_vec_2*)x_p)[k]" in src and "((ember_vec_2*)y_p)[k] = y_v;" in src


@pytest.mark.skipif(not _nvrtc.available(), reason="needs CuPy, NVRTC and CUDA's headers")
@pytest.mark.parametrize("dtype,vec", [("uint16", 8), ("float32", 4)])
def test_vectorized_kernels_compile_to_sixteen_byte_accesses(dtype, vec):
    """What the 16-byte accesses are for, as NVIDIA's compiler emits it: one 128-bit load per
    operand and one 128-bit store a thread in the vector loop (``ld/st.global.v4``)."""
    v = Vectorized(f"{dtype} x0, {dtype} x1", f"{dtype} y", "y = x0 + x1;", "ember_add_probe")
    text = _nvrtc.ptx(v.source(("v", "v"), vec, False))
    assert len(re.findall("ld" + _nvrtc.SIXTEEN_BYTES, text)) == 2, text
    assert len(re.findall("st" + _nvrtc.SIXTEEN_BYTES, text)) == 1, text
    copy = _nvrtc.ptx(row_copy.source(16))
    for access in ("ld", "st"):
        assert re.search(access + _nvrtc.SIXTEEN_BYTES, copy), access


def test_vectorized_refuses_placeholder_types():
    with pytest.raises(ValueError, match="'T x' is not '<dtype> <name>'"):
        Vectorized("T x", "T y", "y = x;", "ember_bad")
