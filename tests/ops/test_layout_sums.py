"""Per-channel sums and adds by memory layout (ember.ops._layout_sums) against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from ember.ops import _layout_sums as L


def _rand(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _nhwc(a):
    """``a`` (N, C, H, W) in channels-last memory."""
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)


SUMS = [  # (array, summed axes): each kept run leading, trailing or between two summed runs
    (_nhwc(_rand(16, 6, 16, 16)), (0, 2, 3)),
    (_rand(16, 6, 16, 16, dtype=np.float64), (0, 2, 3)),
    (_nhwc(_rand(16, 6, 16, 16)), (0, 1)),
    (_rand(256, 120), (1,)),
    (_rand(240, 96, dtype=np.float64), (1,)),
    (_nhwc(_rand(16, 6, 16, 16)).transpose(1, 0, 2, 3), (1, 2, 3)),  # leading in memory
    (_rand(16, 32, 64).transpose(2, 0, 1), (1,)),  # kept axes 0 and 2, in the other order
    (_rand(16, 1, 32, 40), (0, 2)),  # a size-1 axis is left out of the runs
]


@pytest.mark.parametrize("x, axes", SUMS)
def test_sum_by_products_matches_numpy(x, axes):
    got = L.sum_by_products(x, axes)
    assert got is not None
    want = x.sum(axes)
    assert got.shape == want.shape and got.dtype == want.dtype
    tol = 1e-4 if x.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(x).sum() / want.size)


@pytest.mark.parametrize(
    "x, axes, why",
    [
        (_rand(16, 6, 16, 16).astype(np.float16), (0, 2, 3), "float16"),
        (np.ones((16, 6, 16, 16), np.int64), (0, 2, 3), "ints"),
        (_rand(2, 6, 4, 4), (0, 2, 3), "small"),
        (_rand(256, 120), (0,), "leading axes of C-contiguous memory"),
        (_rand(16, 6, 16, 64)[..., ::2], (0, 2, 3), "not dense"),
        (_nhwc(_rand(16, 6, 16, 16)), (0, 3), "kept axes apart in memory"),
    ],
)
def test_sum_by_products_declines(x, axes, why):
    assert L.sum_by_products(x, axes) is None, why


ADDS = [  # (a, b): b varies along a's fastest axes only
    (_nhwc(_rand(16, 6, 16, 16)), _rand(1, 6, 1, 1)),
    (_nhwc(_rand(16, 6, 16, 16, dtype=np.float64)), _rand(6, 1, 1, dtype=np.float64)),
    (_rand(2048, 10), _rand(10)),
    (_rand(2430, 1, 7), _rand(1, 1, 7)),  # 2430 rows of 7: repeated 18 times (2 * 3 * 3)
    (_nhwc(_rand(32, 3, 16, 16)), _nhwc(_rand(1, 3, 1, 16))),  # b along (W, C)
]


@pytest.mark.parametrize("a, b", ADDS)
def test_add_trailing_matches_numpy_in_the_layout_of_a(a, b):
    got = L.add_trailing(a, b)
    assert got is not None
    np.testing.assert_array_equal(got, a + b)
    assert L.memory_order(got) == L.memory_order(a)


@pytest.mark.parametrize(
    "a, b, why",
    [
        (_rand(16, 6, 16, 16), _rand(1, 6, 1, 1), "b constant along the fastest axis"),
        (_nhwc(_rand(16, 6, 16, 16)), _rand(1, 6, 1, 1, dtype=np.float64), "two dtypes"),
        (_rand(256, 100), _rand(100), "rows already long"),
        (_rand(5471, 3), _rand(3), "a prime number of rows"),
        (_nhwc(_rand(16, 6, 16, 16)), _rand(8, 6, 1, 1), "b along a slow axis too"),
        (_rand(2, 3, 4), _rand(3, 4), "small"),
        (_rand(400, 400), np.float32(2.0) * np.ones((), np.float32), "0-d b"),
        (np.ones((), np.float32), _rand(400, 400), "0-d a"),
    ],
)
def test_add_trailing_declines(a, b, why):
    assert L.add_trailing(a, b) is None, why


def test_memory_order():
    x = _rand(2, 3, 4, 5)
    assert L.memory_order(x) == (0, 1, 2, 3)
    assert L.memory_order(_nhwc(x)) == (0, 2, 3, 1)
    assert L.memory_order(x[..., ::2]) is None
