"""The direct convolution of one-channel inputs on the CPU (``ember.ops._direct_numba``), the
path ``Conv2d``'s CPU override takes for them.

Generated from a table of shapes, paddings, input layouts and dtypes: the forward pass through
the override against PyTorch (float64 reference) and against the op's NumPy body (im2col +
GEMM, numba off), with a spy checking that the direct kernel ran; the weight gradient against
its body too; gradients of a whole ``conv2d`` against PyTorch's; the cases it declines.
Tolerances, as ``max |got - ref| / max |ref|``: float32 ``1e-6`` (the kh * kw products summed
in one order, as im2col's; measured 0.8-1.9e-7), float64 ``1e-13``; the weight gradient, a sum
over every output pixel in another order than the GEMM's, 10x that (measured up to 3.5e-6
against PyTorch's for 64 LeNet-5 images).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.backend import jit as _jit
from ember.ops import _direct_numba as D
from ember.ops import conv as C
from ember.ops.base import apply

if not _jit.available():
    pytest.skip("numba is not installed (the direct kernel is numba's)", allow_module_level=True)

# (N, H, W, O, kh, kw, padding, layout, dtype): five kernel sizes, each compiled once
CASES = [
    (8, 28, 28, 6, 5, 5, (2, 2), "nchw", np.float32),  # LeNet-5's first layer
    (4, 8, 8, 6, 5, 5, (1, 1), "strided", np.float64),  # a strided input
    (3, 7, 9, 4, 3, 2, (1, 0), "strided", np.float32),  # a rectangular kernel
    (1, 4, 6, 4, 3, 2, (3, 2), "nchw", np.float64),  # padding wider than the input's half
    (2, 5, 5, 1, 1, 1, (0, 0), "nchw", np.float32),  # 1x1, one filter
    (3, 6, 7, 1, 3, 2, (0, 1), "nchw", np.float64),  # one filter: dx goes direct, padded 2 / 0
    (5, 9, 6, 2, 7, 7, (3, 3), "strided", np.float64),  # 7x7: MAX_TAPS
]
IDS = [
    f"{n}x{h}x{w}-o{o}-{kh}x{kw}-p{p[0]}{p[1]}-{lay}-{np.dtype(dt).name}"
    for n, h, w, o, kh, kw, p, lay, dt in CASES
]
TOL = {np.float32: 1e-6, np.float64: 1e-13}


class Calls(list):
    """Whether each direct forward call ran; ``grads`` likewise for the weight gradient."""

    def __init__(self) -> None:
        super().__init__()
        self.grads: list[bool] = []


@pytest.fixture
def direct(monkeypatch):
    """Kernels compiled in the caller, the direct weight gradient for every size; the calls."""
    monkeypatch.setattr(_jit, "_mode", "sync")
    monkeypatch.setattr(D, "GRAD_WEIGHT_MIN_BYTES", 0)
    calls = Calls()

    def spy(real, record):
        def run(*args):
            out = real(*args)
            record.append(out is not NotImplemented)
            return out

        return run

    monkeypatch.setattr(D, "conv", spy(D.conv, calls))
    monkeypatch.setattr(D, "grad_weight", spy(D.grad_weight, calls.grads))
    return calls


def _inputs(case, seed=0):
    n, h, w, o, kh, kw, p, layout, dtype = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 1, h, w)).astype(dtype)
    if layout == "strided":  # every other column of a wider array
        wide = np.zeros((n, 1, h, 2 * w), dtype)
        wide[..., ::2] = x
        x = wide[..., ::2]
    wt = rng.standard_normal((o, 1, kh, kw)).astype(dtype)
    return x, wt


def _rel(a, ref):
    return float(np.abs(np.asarray(a, np.float64) - ref).max() / np.abs(ref).max())


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward_matches_torch_and_the_body(case, direct, monkeypatch):
    x, w = _inputs(case)
    dtype, p = case[-1], case[6]
    op = C.Conv2d((1, 1), p, (1, 1), 1)
    got = apply(op, ember.tensor(x), ember.tensor(w)).numpy()
    assert direct == [True]
    assert got.dtype == dtype
    ref = torch.nn.functional.conv2d(
        torch.tensor(np.ascontiguousarray(x), dtype=torch.float64),
        torch.tensor(w, dtype=torch.float64),
        padding=p,
    ).numpy()
    assert got.shape == ref.shape
    assert _rel(got, ref) < TOL[dtype]
    with monkeypatch.context() as m:
        m.setattr(_jit, "_mode", "off")
        body = op.forward(np, x, w)
    assert _rel(got, np.asarray(body, np.float64)) < TOL[dtype] * 4


def test_output_is_channels_last_memory(direct):
    x, w = _inputs(CASES[0])
    y = apply(C.Conv2d((1, 1), (2, 2), (1, 1), 1), ember.tensor(x), ember.tensor(w))
    assert direct == [True]
    assert y.numpy().transpose(0, 2, 3, 1).flags.c_contiguous


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradients_match_torch(case, direct):
    """Both kernels ran (the weight gradient's through the CPU override of Conv2dGradWeight)."""
    x, w = _inputs(case)
    dtype, p = case[-1], case[6]
    xt, wt = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
    y = ember.nn.functional.conv2d(xt, wt, padding=p)
    (y * y).sum().backward()
    assert direct[0] and all(direct) and direct.grads == [True]  # O == 1: dx goes direct too
    tx = torch.tensor(np.ascontiguousarray(x), requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    ty = torch.nn.functional.conv2d(tx, tw, padding=p)
    (ty * ty).sum().backward()
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for a, b in zip((y, xt.grad, wt.grad), (ty, tx.grad, tw.grad)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "xs, ws, stride, dilation, groups, dtype",
    [
        ((2, 2, 8, 8), (3, 2, 3, 3), (1, 1), (1, 1), 1, np.float32),  # two channels
        ((2, 1, 8, 8), (3, 1, 3, 3), (2, 1), (1, 1), 1, np.float32),  # a stride
        ((2, 1, 8, 8), (3, 1, 3, 3), (1, 1), (1, 2), 1, np.float32),  # dilation
        ((2, 1, 12, 12), (3, 1, 8, 7), (1, 1), (1, 1), 1, np.float32),  # 56 taps
        ((2, 1, 8, 8), (9, 1, 3, 3), (1, 1), (1, 1), 1, np.float32),  # 9 filters
        ((2, 1, 8, 8), (3, 1, 3, 3), (1, 1), (1, 1), 1, np.float16),  # a dtype numba lacks
    ],
    ids=["two_channels", "stride", "dilation", "taps", "filters", "float16"],
)
def test_declines_what_it_does_not_serve(xs, ws, stride, dilation, groups, dtype, direct):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype)
    op = C.Conv2d(stride, (1, 1), dilation, groups)
    assert not D.applies(op, x, w, ws[2:], ws[0])
    got = apply(op, ember.tensor(x), ember.tensor(w)).numpy()
    assert direct == []
    ref = torch.nn.functional.conv2d(
        torch.tensor(x, dtype=torch.float64),
        torch.tensor(w, dtype=torch.float64),
        stride=stride,
        padding=1,
        dilation=dilation,
    ).numpy()
    assert _rel(got, ref) < (1e-2 if dtype == np.float16 else 1e-5)


def test_waits_for_the_kernel_with_the_body(monkeypatch):
    """While the kernel compiles (or without numba) the override declines: the body runs."""
    monkeypatch.setattr(_jit, "module", lambda name, source: None)
    x, w = _inputs(CASES[1])
    assert D.conv(x, w, (1, 1)) is NotImplemented


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_weight_gradient_matches_the_body(case, direct, monkeypatch):
    """The direct weight gradient against Conv2dGradWeight's NumPy body (im2col, numba off)."""
    x, w = _inputs(case)
    dtype, p = case[-1], case[6]
    n, h, wd, o, kh, kw = case[:6]
    g = np.random.default_rng(2).standard_normal(
        (n, o, h + 2 * p[0] - kh + 1, wd + 2 * p[1] - kw + 1)
    )
    g = g.astype(dtype)
    op = C.Conv2dGradWeight(w.shape, (1, 1), p, (1, 1), 1)
    got = apply(op, ember.tensor(x), ember.tensor(g)).numpy()
    assert direct.grads == [True]
    with monkeypatch.context() as m:
        m.setattr(_jit, "_mode", "off")
        body = np.asarray(op.forward(np, x, g), np.float64)
    assert got.dtype == dtype and got.shape == w.shape
    assert _rel(got, body) < TOL[dtype] * 10


def test_weight_gradient_only_where_patches_are_large(monkeypatch):
    """``pays_grad_weight``: LeNet-5's first layer goes direct; small maps, or 8 filters, keep
    im2col."""
    monkeypatch.setattr(D, "GRAD_WEIGHT_MIN_BYTES", 1 << 20)
    x8, g8 = np.ones((64, 1, 8, 8), np.float32), np.ones((64, 6, 8, 8), np.float32)
    x28, g28 = np.ones((64, 1, 28, 28), np.float32), np.ones((64, 6, 28, 28), np.float32)
    assert not D.pays_grad_weight(x8, (3, 3), g8)
    assert D.pays_grad_weight(x28, (5, 5), g28)
    assert not D.pays_grad_weight(x28, (5, 5), np.ones((64, 8, 28, 28), np.float32))


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_weight_gradient_of_non_finite_input_is_im2cols(bad, direct):
    """An infinity or a NaN in the input: the direct kernel would multiply it by the zeros
    between the rows (NaN), so it declines and im2col's exact gradient stands (PyTorch's)."""
    x, w = _inputs(CASES[0])
    x[0, 0, 3, 0] = bad  # column 0: outside every window of taps 1-4 of a kernel row
    xt, wt = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
    y = ember.nn.functional.conv2d(xt, wt, padding=(0, 0))
    y.backward(ember.ones(*y.shape))
    assert direct.grads == [False]
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    torch.nn.functional.conv2d(tx, tw).backward(torch.ones(*y.shape))
    np.testing.assert_allclose(wt.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-3)
