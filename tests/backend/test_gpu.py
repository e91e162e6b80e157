"""The GPU fast paths against the CPU: on a real GPU, and without one on the strict fake CuPy
with its g++-emulated kernels (``tests/conftest.py``), so the kernels' code paths run in CI too.

Every fused kernel, the cuBLAS matmul with its TF32 switch, float16 / bfloat16 products and the
cuDNN / im2col convolutions must give the CPU's results (to rounding: a GPU contracts
multiply-adds into FMAs and sums in a different order).
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.backend import kernels
from tests.conftest import CUDA, FAKE_CUDA, NO_CUDA_REASON

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _gpu(request):
    """A real GPU, else the strict fake CuPy (kernels emulated: this is tests/backend/)."""
    if not CUDA:
        if not FAKE_CUDA:
            pytest.skip(NO_CUDA_REASON)
        request.getfixturevalue("fake_cuda")


def _pair(*shape, dtype=ember.float32, scale=1.0, requires_grad=True):
    x = ember.randn(*shape) * scale
    cpu = x.to(dtype).detach().requires_grad_(requires_grad)
    gpu = x.to(dtype).to("cuda").detach().requires_grad_(requires_grad)
    return cpu, gpu


def _close(gpu, cpu, rtol=1e-5, atol=1e-6):
    g = gpu.detach().cpu().float().numpy()
    c = cpu.detach().float().numpy()
    np.testing.assert_allclose(g, c, rtol=rtol, atol=atol)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", [((64, 1000), 1), ((8, 10, 7), 1), ((3, 5000), -1)])
def test_softmax_forward_backward(fn, shape, dim):
    cpu, gpu = _pair(*shape, scale=3.0)
    ys = [getattr(F, fn)(t, dim) for t in (cpu, gpu)]
    _close(ys[1], ys[0])
    w = ember.randn(*shape)
    (ys[0] * w).sum().backward()
    (ys[1] * w.to("cuda")).sum().backward()
    _close(gpu.grad, cpu.grad, atol=1e-5)
    assert any(
        k[:2] in {("rows", "softmax"), ("rows", "softmax_registers")} for k in kernels._cache
    )


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
def test_softmax_half_precision(dtype):
    cpu, gpu = _pair(16, 300, dtype=dtype, requires_grad=False)
    y = F.softmax(gpu, 1)
    assert y.dtype == dtype
    _close(y, F.softmax(cpu.float(), 1), rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
def test_softmax_gradient_half_precision(dtype):
    """Its sum over the last axis is a row kernel on the GPU (no float32 copy of the rows)."""
    cpu, gpu = _pair(16, 300, dtype=dtype)
    g = ember.randn(16, 300).to(dtype)
    F.softmax(cpu, 1).backward(g)
    F.softmax(gpu, 1).backward(g.to("cuda"))
    assert gpu.grad.dtype == dtype
    _close(gpu.grad, cpu.grad, rtol=2e-2, atol=2e-3)


def test_cross_entropy_matches_cpu():
    cpu, gpu = _pair(64, 10, scale=2.0)
    t = ember.randint(0, 10, (64,))
    lc = F.cross_entropy(cpu, t)
    lg = F.cross_entropy(gpu, t.to("cuda"))
    _close(lg, lc)
    lc.backward()
    lg.backward()
    _close(gpu.grad, cpu.grad)
    with pytest.raises(Exception, match="out of bounds"):  # at the next read from the GPU
        F.cross_entropy(gpu, ember.full((64,), 10, dtype=ember.int64).to("cuda")).item()


@pytest.mark.parametrize("shape,norm", [((32, 512), (512,)), ((4, 6, 7, 8), (7, 8))])
def test_layer_norm_forward_backward_double_backward(shape, norm):
    cpu, gpu = _pair(*shape, scale=2.0)
    wc, wg = _pair(*norm)
    bc, bg = _pair(*norm)
    yc = F.layer_norm(cpu, norm, wc, bc)
    yg = F.layer_norm(gpu, norm, wg, bg)
    _close(yg, yc, atol=1e-5)
    r = ember.randn(*shape)
    (gc,) = ember.autograd.grad((yc * r).sum(), cpu, create_graph=True)
    (gg,) = ember.autograd.grad((yg * r.to("cuda")).sum(), gpu, create_graph=True)
    _close(gg, gc, atol=1e-4)
    (ggc,) = ember.autograd.grad(gc.pow(2).sum(), cpu)
    (ggg,) = ember.autograd.grad(gg.pow(2).sum(), gpu)
    _close(ggg, ggc, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: ember.optim.Adam(ps, lr=1e-2, weight_decay=0.1),
        lambda ps: ember.optim.Adam(ps, lr=1e-2, amsgrad=True),
        lambda ps: ember.optim.AdamW(ps, lr=1e-2),
        lambda ps: ember.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3),
        lambda ps: ember.optim.SGD(ps, lr=0.1),
        lambda ps: ember.optim.RMSprop(ps, lr=1e-2, momentum=0.5, centered=True),
    ],
)
def test_fused_optimizers_match_cpu(make):
    w0 = ember.randn(257, 33)
    wc = ember.nn.Parameter(w0.clone())
    wg = ember.nn.Parameter(w0.to("cuda"))
    oc, og = make([wc]), make([wg])
    for _ in range(4):
        g = ember.randn(257, 33)
        wc.grad, wg.grad = g.clone(), g.to("cuda")
        oc.step()
        og.step()
    _close(wg, wc, rtol=1e-5, atol=1e-6)
    assert any(k[0] in ("optim", "optim_many") for k in kernels._cache)  # one or many a launch


def test_matmul_tf32_switch():
    if not CUDA:
        pytest.skip("TF32 rounding happens in cuBLAS on a real GPU; the fake multiplies in NumPy")
    a64 = np.random.default_rng(0).standard_normal((1024, 4096))
    b64 = np.random.default_rng(1).standard_normal((4096, 256))
    a = ember.tensor(a64, dtype=ember.float32, device="cuda")
    b = ember.tensor(b64, dtype=ember.float32, device="cuda")
    exact = a64.astype(np.float32).astype(np.float64) @ b64.astype(np.float32).astype(np.float64)
    scale = np.abs(exact).max()
    err_full = np.abs((a @ b).cpu().numpy() - exact).max() / scale
    assert err_full < 1e-5  # "highest": full float32 (PyTorch's default)
    major, _ = ember.cuda.get_device_capability()
    try:
        ember.backends.cuda.matmul.allow_tf32 = True
        err_tf32 = np.abs((a @ b).cpu().numpy() - exact).max() / scale
    finally:
        ember.backends.cuda.matmul.allow_tf32 = False
    if major >= 8:
        assert err_tf32 > 10 * err_full  # 10-bit mantissas: visibly coarser
    assert np.abs((a @ b).cpu().numpy() - exact).max() / scale < 1e-5  # and back


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
@pytest.mark.parametrize("sa,sb", [((256, 512), (512, 128)), ((4, 64, 512), (512, 128)),
                                   ((4, 64, 512), (4, 512, 32))])  # fmt: skip
def test_half_precision_matmul(dtype, sa, sb):
    a, b = ember.randn(*sa), ember.randn(*sb)
    out = a.to(dtype).to("cuda") @ b.to(dtype).to("cuda")
    assert out.dtype == dtype and tuple(out.shape) == tuple((a @ b).shape)
    want = (a.to(dtype).float() @ b.to(dtype).float()).numpy()  # float32 accumulation
    tol = 2e-2 if dtype == ember.bfloat16 else 4e-3
    got = out.cpu().float().numpy()
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("cudnn", [True, False])
@pytest.mark.parametrize(
    "xs,ws,stride,padding,groups",
    [((8, 16, 16, 16), (32, 16, 3, 3), 1, 1, 1), ((4, 8, 15, 15), (8, 4, 3, 3), 2, 1, 2),
     ((2, 3, 32, 32), (16, 3, 5, 5), 1, 2, 1)],
)  # fmt: skip
def test_conv2d_forward_backward(cudnn, xs, ws, stride, padding, groups):
    xc, xg = _pair(*xs)
    wc, wg = _pair(*ws)
    with ember.backends.cudnn.flags(enabled=cudnn, allow_tf32=False):
        yg = F.conv2d(xg, wg, stride=stride, padding=padding, groups=groups)
        yc = F.conv2d(xc, wc, stride=stride, padding=padding, groups=groups)
        _close(yg, yc, rtol=1e-4, atol=1e-4)
        r = ember.randn(*yc.shape)
        (yc * r).sum().backward()
        (yg * r.to("cuda")).sum().backward()
    _close(xg.grad, xc.grad, rtol=1e-4, atol=1e-4)
    _close(wg.grad, wc.grad, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
def test_conv2d_half_precision(dtype):
    x, w = ember.randn(8, 16, 16, 16), ember.randn(32, 16, 3, 3)
    y = F.conv2d(x.to(dtype).to("cuda"), w.to(dtype).to("cuda"), padding=1)
    assert y.dtype == dtype
    want = F.conv2d(x.to(dtype).float(), w.to(dtype).float(), padding=1).numpy()
    tol = 3e-2 if dtype == ember.bfloat16 else 5e-3
    np.testing.assert_allclose(y.cpu().float().numpy(), want, rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
def test_half_precision_batched_matmul_of_strided_views(dtype):
    """Attention's products: a transposed stack (served at its stride) and heads split from
    rows (copied first), against float32 products of the same rounded values."""
    q, k = ember.randn(2, 64, 3, 48).to(dtype), ember.randn(2, 80, 3, 48).to(dtype)
    qh, kh = q.permute(0, 2, 1, 3), k.permute(0, 2, 1, 3)  # (2, 3, rows, 48) views
    got = qh.to("cuda") @ kh.to("cuda").transpose(-1, -2)
    got_t = qh.contiguous().to("cuda") @ kh.contiguous().to("cuda").transpose(-1, -2)
    want = (qh.float() @ kh.float().transpose(-1, -2)).numpy()
    tol = 2e-2 if dtype == ember.bfloat16 else 4e-3
    for out in (got, got_t):
        assert out.dtype == dtype and tuple(out.shape) == (2, 3, 64, 80)
        np.testing.assert_allclose(out.cpu().float().numpy(), want, rtol=tol, atol=tol * 8)


def test_every_cuda_override_matches_its_body():
    """Each registered CUDA override on its cases of ``test_overrides.OP_CASES``, on the device
    (the fake CuPy has no cuDNN: convolutions and attention decline there), against the op's
    NumPy body."""
    from ember.backend import cuda, overrides
    from tests.backend.test_overrides import OP_CASES

    xp, declined = cuda.xp(), []
    for name, cases in OP_CASES.items():
        fn = overrides.registered("cuda")[name]
        for op, arrays, tol in cases:
            got = fn(op, xp, *(xp.asarray(a) for a in arrays))
            if got is NotImplemented:
                declined.append(name)
                continue
            want = op.forward(np, *arrays)
            got = xp.asnumpy(got)
            assert got.dtype == want.dtype and got.shape == want.shape, op
            np.testing.assert_allclose(
                got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol, err_msg=str(op)
            )
    no_cudnn = all(".conv." in n or ".attention." in n for n in declined)
    assert no_cudnn if not CUDA else not declined, declined
