"""The blocked transposing copy (ember.ops._transpose_numba) against NumPy's, and what it
declines."""

from __future__ import annotations

import numpy as np
import pytest

from ember.ops import _transpose_numba as T


@pytest.mark.parametrize("shape", [(512, 4608), (96, 864), (300, 257), (17, 4099)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_equals_numpys_copy(mode, shape, dtype):
    a = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    a.flat[:3] = [np.nan, -0.0, np.inf]
    got = T.transposed(a)
    if mode == "numpy":
        assert got is None
        return
    assert got.flags.c_contiguous and got.shape == shape[::-1] and got.dtype == dtype
    np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(a.T).view(np.uint8))


@pytest.mark.parametrize(
    "a",
    [
        np.ones((10, 10), np.float32),  # small: NumPy's copy
        np.ones((300, 300), np.int64),
        np.ones((300, 600), np.float32)[:, ::2],  # not contiguous
        np.ones((30, 30, 90), np.float32),  # not 2-D
    ],
)
def test_declines(mode, a):
    assert T.transposed(a) is None
