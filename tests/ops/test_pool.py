"""The pooling primitives (ember.ops.pool): MaxPool2d, MaxPoolScatter, MaxPoolGather,
MaxPoolIndices, Unfold, Fold.

The tiled fast path (kernel == stride, no padding or dilation) and the general window gather
must agree with each other and with PyTorch, including on ties (ReLU zeros: the first maximum
gets the gradient) and NaN (it propagates; the last NaN of a window is chosen).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.ops import pool as P


def _torch_pool(x, g, *args):
    tx = torch.tensor(x, requires_grad=True)
    out, idx = torch.nn.functional.max_pool2d(tx, *args, return_indices=True)
    out.backward(torch.tensor(g))
    return out.detach().numpy(), idx.numpy(), tx.grad.numpy()


def _ember_pool(x, g, *args):
    ex = ember.tensor(x, requires_grad=True)
    out, idx = ember.nn.functional.max_pool2d(ex, *args, return_indices=True)
    out.backward(ember.tensor(g))
    return out.detach().numpy(), idx.numpy(), ex.grad.numpy()


# (kernel, stride, padding, dilation, ceil_mode): tiled ones first
SETTINGS = [
    ((2, 2), (2, 2), 0, 1, False),
    ((3, 2), (3, 2), 0, 1, False),
    ((2, 2), (2, 2), 0, 1, True),  # even size: ceil mode adds no window, still tiled
    ((3, 3), (2, 2), 1, 1, False),
    ((2, 2), (2, 2), 1, 1, True),
    ((3, 3), (1, 1), 0, 2, False),
]


@pytest.mark.parametrize("setting", SETTINGS, ids=[str(s) for s in SETTINGS])
@pytest.mark.parametrize("data", ["distinct", "ties", "nan", "nan-grad"])
def test_max_pool_matches_torch(setting, data):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 8, 6))
    if data == "ties":
        x = np.maximum(np.round(x), 0)  # many equal values, as after ReLU
    if data.startswith("nan"):
        x[0, 0, 0, 1] = x[0, 0, 1, 0] = x[1, 2, 3, 3] = np.nan
    out_shape = torch.nn.functional.max_pool2d(torch.tensor(x), *setting).shape
    g = rng.standard_normal(tuple(out_shape))
    if data == "nan-grad":
        g[0, 0, 0, 0] = np.nan
    for got, want in zip(_ember_pool(x, g, *setting), _torch_pool(x, g, *setting)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.fake_kernels
@pytest.mark.parametrize("setting", SETTINGS, ids=[str(s) for s in SETTINGS])
@pytest.mark.parametrize("data", ["ties", "nan", "nan-grad"])
def test_gpu_kernels_match_torch(fake_cuda, setting, data):
    """On the fake CuPy with its emulated kernels: MaxPool2d and its gradient as one kernel
    each (``ember/backend/kernels/pool.py``) give PyTorch's maxima, indices and gradients
    (sums of a position's windows in another order: float64 rounding)."""
    from ember.backend import kernels

    rng = np.random.default_rng(1)
    x = np.maximum(np.round(rng.standard_normal((2, 3, 8, 6))), 0)
    if data.startswith("nan"):
        x[0, 0, 0, 1] = x[0, 0, 1, 0] = x[1, 2, 3, 3] = np.nan
    g = rng.standard_normal(tuple(torch.nn.functional.max_pool2d(torch.tensor(x), *setting).shape))
    if data == "nan-grad":
        g[0, 0, 0, 0] = np.nan
    ex = ember.tensor(x, device="cuda", requires_grad=True)
    out, idx = ember.nn.functional.max_pool2d(ex, *setting, return_indices=True)
    out.backward(ember.tensor(g, device="cuda"))
    got = out.detach().cpu().numpy(), idx.cpu().numpy(), ex.grad.cpu().numpy()
    for a, b in zip(got, _torch_pool(x, g, *setting)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
    assert {k[1] for k in kernels._cache if k[0] == "max_pool"} == {"max", "scatter"}


def test_tiled_and_general_paths_agree():
    rng = np.random.default_rng(1)
    x = np.maximum(np.round(rng.standard_normal((2, 3, 8, 8)) * 2), 0)
    h = rng.standard_normal(x.shape)
    g = rng.standard_normal((2, 3, 4, 4))
    tiled = P.MaxPool2d((2, 2), (2, 2), (0, 0), (1, 1), False)
    assert tiled.tiled(x.shape)

    class General(P.MaxPool2d):
        def tiled(self, shape):
            return False

    general = General((2, 2), (2, 2), (0, 0), (1, 1), False)
    for op in ("forward",):
        np.testing.assert_array_equal(getattr(tiled, op)(np, x), getattr(general, op)(np, x))
    fields = ((2, 2), (2, 2), (0, 0), (1, 1), False)

    def general_of(cls):
        return type("G", (cls,), {"tiled": lambda self, shape: False})(*fields)

    for cls, args in (
        (P.MaxPoolScatter, (g, x)),
        (P.MaxPoolGather, (h, x)),
        (P.MaxPoolIndices, (x,)),
    ):
        np.testing.assert_array_equal(
            cls(*fields).forward(np, *args), general_of(cls).forward(np, *args)
        )


@pytest.mark.parametrize("args", [(2,), (3, 2, 1), ((2, 3), (1, 2), (1, 0), (2, 1), True)])
def test_max_pool_second_order(args):
    x = ember.tensor(np.random.default_rng(0).standard_normal((2, 2, 7, 6)), requires_grad=True)

    def pool(t):
        return ember.nn.functional.max_pool2d(t, *args)

    assert gradcheck(pool, (x,), fast_mode=True)
    assert gradgradcheck(pool, (x,), fast_mode=True)


def test_gather_is_the_adjoint_of_scatter():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 6))
    h = rng.standard_normal(x.shape)
    for fields in (((2, 2), (2, 2), (0, 0), (1, 1), False), ((3, 3), (2, 2), (1, 1), (1, 1), True)):
        g = rng.standard_normal(P.MaxPool2d(*fields).forward(np, x).shape)
        scatter = P.MaxPoolScatter(*fields).forward(np, g, x)
        gather = P.MaxPoolGather(*fields).forward(np, h, x)
        assert np.isclose((scatter * h).sum(), (gather * g).sum())


def test_max_pool_float32_and_int64():
    x = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)
    out = ember.nn.functional.max_pool2d(ember.tensor(x), 2)
    assert out.dtype is ember.float32 and out.numpy()[0, 0].tolist() == [[5, 7], [13, 15]]
    ints = ember.nn.functional.max_pool2d(ember.tensor(x.astype(np.int64)), 3, 1, 1)
    assert ints.dtype is ember.int64
    want = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 1, 1).numpy()
    np.testing.assert_array_equal(ints.numpy(), want.astype(np.int64))


@pytest.mark.parametrize(
    "kernel, dilation, padding, stride",
    [((2, 3), (1, 2), (1, 1), (2, 1)), (3, 1, 0, 1), (1, 1, 0, 1), (2, 2, 2, 3)],
)
def test_unfold_fold_match_torch_and_are_adjoint(kernel, dilation, padding, stride):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 7, 8))
    tu = torch.nn.functional.unfold(torch.tensor(x), kernel, dilation, padding, stride)
    eu = ember.nn.functional.unfold(ember.tensor(x), kernel, dilation, padding, stride)
    np.testing.assert_allclose(eu.numpy(), tu.numpy(), rtol=1e-13, atol=1e-13)
    c = rng.standard_normal(tuple(tu.shape))
    tf = torch.nn.functional.fold(torch.tensor(c), (7, 8), kernel, dilation, padding, stride)
    ef = ember.nn.functional.fold(ember.tensor(c), (7, 8), kernel, dilation, padding, stride)
    np.testing.assert_allclose(ef.numpy(), tf.numpy(), rtol=1e-13, atol=1e-13)
    assert np.isclose((eu.numpy() * c).sum(), (x * ef.numpy()).sum())


def test_pool_out_size_ceil_mode_rule():
    # PyTorch drops a last ceil-mode window that would start in the right padding
    assert P.pool_out_size(5, 2, 2, 1, 1, True) == 3
    assert P.pool_out_size(6, 2, 2, 0, 1, True) == 3
    assert P.pool_out_size(7, 2, 2, 0, 1, True) == 4
    assert P.pool_out_size(7, 2, 2, 0, 1, False) == 3


@pytest.mark.parametrize("pool_between", [False, True])
def test_held_maxima_survive_in_place_changes_of_the_output(pool_between):
    """The forward pass's maxima serve the backward pass; changing the output in place (an
    in-place ReLU after the pool) must not change which elements get the gradient."""
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 4))
    ex = ember.tensor(x, requires_grad=True)
    out = ember.nn.functional.max_pool2d(ex, 2)
    out.detach().mul_(0)  # shares memory with out, but out is not saved: no version error
    if pool_between:  # the held maxima are another input's: recomputed
        ember.nn.functional.max_pool2d(ember.tensor(x * 2), 2)
    tx = torch.tensor(x, requires_grad=True)
    torch.nn.functional.max_pool2d(tx, 2).sum().backward()
    out.sum().backward()
    np.testing.assert_array_equal(ex.grad.numpy(), tx.grad.numpy())


def test_in_place_change_of_the_input_is_caught():
    x = ember.randn(2, 3, 4, 4, requires_grad=True)
    y = x * 1
    out = ember.nn.functional.max_pool2d(y, 2)
    with ember.no_grad():
        y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
