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


def test_convolution_weight_matrix(mode):
    """im2col's weight matrix through the blocked copy for a large weight (NumPy's copy
    otherwise): the same array as NumPy's."""
    from ember.ops import conv as C

    w = np.random.default_rng(1).standard_normal((128, 96, 3, 3)).astype(np.float32)
    want = np.ascontiguousarray(w.transpose(2, 3, 1, 0)).reshape(1, 9 * 96, 128)
    np.testing.assert_array_equal(C._weight_matrix(np, w, 1), want)


def test_small_maps_convolve_as_pytorch(mode):
    """A 3x3 convolution on 1x1 and 2x2 maps with many channels (ResNet-18's last layers on
    32x32 images): values and both gradients against PyTorch; Winograd declines 1-wide maps."""
    import torch

    import ember
    from ember.ops import _winograd as W

    assert not W.pays(32, 512, 512, 1, 1) and not W.pays(32, 512, 512, 4, 1)
    rng = np.random.default_rng(2)
    for hw in (1, 2):
        x = rng.standard_normal((4, 96, hw, hw)).astype(np.float32)
        w = (rng.standard_normal((128, 96, 3, 3)) / 30).astype(np.float32)
        g = rng.standard_normal((4, 128, hw, hw)).astype(np.float32)
        got = []
        for lib in (ember, torch):
            xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
            y = lib.nn.functional.conv2d(xt, wt, padding=1)
            y.backward(lib.tensor(g))
            got.append([t.detach().numpy() for t in (y, xt.grad, wt.grad)])
        for a, b in zip(*got):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def test_planar_weight_gradient_of_many_filters(mode):
    """Channel-first patches (few channels, a wide map) and many filters: the weight gradient
    is its (O, C * kh * kw) product as it is; PyTorch's values."""
    import torch

    import ember
    from ember.ops import conv as C

    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 8, 48, 48)).astype(np.float32)
    w = (rng.standard_normal((1024, 8, 3, 3)) / 10).astype(np.float32)
    assert C.planar(x.shape, (3, 3), (1, 1), 1)
    got = []
    for lib in (ember, torch):
        wt = lib.tensor(w, requires_grad=True)
        lib.nn.functional.conv2d(lib.tensor(x), wt).sum().backward()
        got.append(wt.grad.numpy())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-4, atol=1e-3)
