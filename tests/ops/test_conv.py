"""The convolution primitives (ember.ops.conv): Conv2d, Conv2dGradInput, Conv2dGradWeight.

Forward against a direct NumPy loop, both gradients against torch.nn.grad, third order through
the closed set of ops, and the fast paths' bookkeeping: scratch buffers never leak into results,
the weight gradient's reuse of the forward pass's patches is only taken when it is valid.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.backend import memory as _memory
from ember.ops import conv as C
from ember.ops.base import apply

# (x shape, w shape, stride, padding, dilation, groups)
CONFIGS = [
    ((2, 3, 6, 6), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((2, 1, 10, 12), (3, 1, 3, 3), (2, 1), (1, 2), (2, 1), 1),  # planar (few channels)
    ((2, 2, 5, 16), (4, 2, 3, 3), (1, 1), (1, 1), (1, 1), 1),  # planar
    ((2, 3, 7, 6), (4, 3, 3, 2), (2, 1), (0, 1), (1, 1), 1),
    ((1, 4, 9, 9), (6, 2, 3, 3), (2, 2), (2, 2), (2, 2), 2),
    ((2, 4, 5, 5), (4, 1, 3, 3), (1, 1), (1, 1), (1, 1), 4),  # depthwise
    ((2, 4, 5, 5), (3, 4, 1, 1), (1, 1), (0, 0), (1, 1), 1),  # 1x1
    ((2, 4, 5, 5), (3, 4, 1, 1), (2, 2), (1, 1), (1, 1), 1),
    ((1, 2, 4, 7), (2, 2, 4, 5), (1, 3), (3, 0), (1, 1), 1),  # padding > kernel / 2
]
IDS = [
    f"x{'x'.join(map(str, c[0]))}-w{'x'.join(map(str, c[1]))}-s{c[2]}-p{c[3]}-d{c[4]}-g{c[5]}"
    for c in CONFIGS
]


def _reference(x, w, stride, padding, dilation, groups):
    """Direct cross-correlation, one output pixel at a time."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    ho = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, ho, wo))
    og = o // groups
    for f in range(o):
        g = f // og
        for i in range(ho):
            for j in range(wo):
                patch = xp[
                    :,
                    g * cg : (g + 1) * cg,
                    i * stride[0] : i * stride[0] + dilation[0] * (kh - 1) + 1 : dilation[0],
                    j * stride[1] : j * stride[1] + dilation[1] * (kw - 1) + 1 : dilation[1],
                ]
                out[:, f, i, j] = (patch * w[f]).sum(axis=(1, 2, 3))
    return out


def _arrays(cfg, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(cfg[0]), rng.standard_normal(cfg[1])


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_forward_matches_direct_loop(cfg):
    x, w = _arrays(cfg)
    out = apply(C.Conv2d(*cfg[2:]), ember.tensor(x), ember.tensor(w))
    np.testing.assert_allclose(out.numpy(), _reference(x, w, *cfg[2:]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_gradients_match_torch(cfg):
    x, w = _arrays(cfg)
    stride, padding, dilation, groups = cfg[2:]
    ho_wo = _reference(x, w, *cfg[2:]).shape
    g = np.random.default_rng(1).standard_normal(ho_wo)
    tx, tw, tg = (torch.tensor(a) for a in (x, w, g))
    want_dx = torch.nn.grad.conv2d_input(x.shape, tw, tg, stride, padding, dilation, groups)
    want_dw = torch.nn.grad.conv2d_weight(tx, w.shape, tg, stride, padding, dilation, groups)
    p = (stride, padding, dilation, groups)
    dx = apply(C.Conv2dGradInput(x.shape, *p), ember.tensor(g), ember.tensor(w))
    C.release_scratch()  # no patches of x held: the weight gradient gathers its own
    dw = apply(C.Conv2dGradWeight(w.shape, *p), ember.tensor(x), ember.tensor(g))
    np.testing.assert_allclose(dx.numpy(), want_dx.numpy(), rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(dw.numpy(), want_dw.numpy(), rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("cfg", CONFIGS[:4], ids=IDS[:4])
def test_gradcheck_second_and_third_order(cfg):
    x, w = (ember.tensor(a, requires_grad=True) for a in _arrays(cfg))
    op = C.Conv2d(*cfg[2:])

    def conv(a, b):
        return apply(op, a, b)

    assert gradcheck(conv, (x, w), fast_mode=True)
    assert gradgradcheck(conv, (x, w), fast_mode=True)

    def grad_of_conv(a, b):  # its gradient (Conv2dGradInput, Conv2dGradWeight) checked again
        (ga, gb) = ember.autograd.grad(conv(a, b).pow(2).sum(), (a, b), create_graph=True)
        return ga.sum() + gb.pow(2).sum()

    assert gradgradcheck(grad_of_conv, (x, w), fast_mode=True, atol=1e-5)


def test_float32_stays_float32_and_close_to_torch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 8, 9, 9)).astype(np.float32)
    w = rng.standard_normal((5, 8, 3, 3)).astype(np.float32)
    ex, ew = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    eo = ember.nn.functional.conv2d(ex, ew, padding=1)
    to = torch.nn.functional.conv2d(tx, tw, padding=1)
    eo.sum().backward()
    to.sum().backward()
    for e, t in ((eo, to), (ex.grad, tx.grad), (ew.grad, tw.grad)):
        assert e.dtype is ember.float32
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-4, atol=1e-4)


def test_results_never_alias_scratch_memory():
    rng = np.random.default_rng(0)
    x1, x2 = (ember.tensor(rng.standard_normal((2, 3, 6, 6))) for _ in range(2))
    w = ember.tensor(rng.standard_normal((4, 3, 3, 3)))
    y1 = ember.nn.functional.conv2d(x1, w, padding=1)
    before = y1.numpy().copy()
    ember.nn.functional.conv2d(x2, w, padding=1)  # reuses every scratch buffer
    np.testing.assert_array_equal(y1.numpy(), before)
    u = ember.nn.functional.unfold(x1, 1)  # 1x1 patches are the input itself: still a copy
    u.add_(1)
    np.testing.assert_array_equal(ember.nn.functional.unfold(x1, 1).numpy() + 1, u.numpy())


def test_weight_gradient_reuse_is_exact():
    """The last forward pass's patches serve the weight gradient; a recompute gives the same."""
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((2, 3, 6, 6)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
    ember.nn.functional.conv2d(x, w, padding=1).pow(2).sum().backward()
    reused = w.grad.numpy().copy()
    w.grad = None
    out = ember.nn.functional.conv2d(x, w, padding=1)
    ember.nn.functional.conv2d(x * 2, w, padding=1)  # overwrites the held patches
    out.pow(2).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), reused, rtol=1e-13)


def test_two_layers_share_no_stale_patches():
    """conv2(conv1(x)): the weight gradient of conv1 must not reuse conv2's patches."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in [(2, 3, 6, 6), (3, 3, 3, 3), (3, 3, 3, 3)]]
    grads = []
    for lib in (torch, ember):
        x, w1, w2 = (lib.tensor(a, requires_grad=True) for a in arrays)
        F = lib.nn.functional
        F.conv2d(F.conv2d(x, w1, padding=1), w2, padding=1).pow(2).sum().backward()
        grads.append([t.grad.numpy() for t in (x, w1, w2)])
    for e, t in zip(grads[1], grads[0]):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-10)


def test_in_place_change_after_forward():
    x = ember.randn(2, 3, 6, 6, dtype=ember.float64)
    w = ember.randn(4, 3, 3, 3, dtype=ember.float64, requires_grad=True)
    out = ember.nn.functional.conv2d(x, w, padding=1)
    with ember.no_grad():
        x.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
    # a fresh forward pass sees the new values (no stale patches)
    fresh = ember.nn.functional.conv2d(x, w, padding=1).detach().numpy()
    want = torch.nn.functional.conv2d(
        torch.tensor(x.numpy()), torch.tensor(w.detach().numpy()), padding=1
    )
    np.testing.assert_allclose(fresh, want.numpy(), rtol=1e-12, atol=1e-12)


def test_threads_get_their_own_scratch():
    rng = np.random.default_rng(0)
    w = ember.tensor(rng.standard_normal((4, 3, 3, 3)))
    xs = [ember.tensor(rng.standard_normal((4, 3, 16, 16))) for _ in range(4)]
    want = [ember.nn.functional.conv2d(x, w, padding=1).numpy() for x in xs]
    got = [None] * len(xs)

    def work(i):
        for _ in range(5):
            got[i] = ember.nn.functional.conv2d(xs[i], w, padding=1).numpy()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_parallel_copy_matches_plain_copy(monkeypatch):
    monkeypatch.setattr(C, "_WORKERS", 2)  # split even where BLAS takes every core
    rng = np.random.default_rng(0)
    for shape in ((64, 40, 40, 8), (1, 40, 400, 64)):  # split along axis 0, then axis 1
        src = rng.standard_normal(shape).transpose(0, 3, 1, 2)  # > 4 MB, strided
        dst = np.empty(src.shape)
        C._copy(dst, src)
        np.testing.assert_array_equal(dst, src)


def test_copy_threads_only_where_blas_leaves_cores_idle(monkeypatch):
    from ember import _config

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    assert _config.blas_threads(cores=2) == 2
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    assert _config.blas_threads(cores=2) == 1


# -- blocked gathers: a block of images at a time, each block's GEMM into its output rows ------

# (x shape, w shape, stride, padding, dilation, groups): batches of 5 and 7 split unevenly
BLOCKED = [
    ((5, 3, 6, 6), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1),  # gathered dx
    ((7, 2, 6, 6), (6, 2, 3, 3), (1, 1), (1, 1), (1, 1), 1),  # O > C: scattered dx
    ((5, 1, 10, 12), (3, 1, 3, 3), (2, 1), (1, 2), (2, 1), 1),  # planar
    ((7, 3, 7, 6), (4, 3, 3, 2), (2, 1), (0, 1), (1, 1), 1),  # stride: scattered dx
    ((5, 4, 9, 9), (6, 2, 3, 3), (2, 2), (2, 2), (2, 2), 2),  # groups, dilation
    ((7, 4, 5, 5), (4, 1, 3, 3), (1, 1), (1, 1), (1, 1), 4),  # depthwise
    ((5, 4, 5, 5), (3, 4, 1, 1), (1, 1), (0, 0), (1, 1), 1),  # 1x1 in place
]
BLOCKED_IDS = [
    f"x{'x'.join(map(str, c[0]))}-w{'x'.join(map(str, c[1]))}-s{c[2]}-p{c[3]}-d{c[4]}-g{c[5]}"
    for c in BLOCKED
]


def _three(cfg, x, w, g):
    """Forward, input gradient and weight gradient as raw arrays (no patches held between)."""
    p = cfg[2:]
    out = apply(C.Conv2d(*p), ember.tensor(x), ember.tensor(w)).numpy()
    dx = apply(C.Conv2dGradInput(x.shape, *p), ember.tensor(g), ember.tensor(w)).numpy()
    C.release_scratch()
    dw = apply(C.Conv2dGradWeight(w.shape, *p), ember.tensor(x), ember.tensor(g)).numpy()
    return out, dx, dw


@pytest.fixture(params=[1, 2], ids=["one-image-blocks", "two-image-blocks"])
def blocked(request, monkeypatch):
    """Force blocking on tiny inputs: blocks of about ``param`` images' patches."""

    def force(image_bytes):
        monkeypatch.setattr(_memory, "HOST_BLOCK_BYTES", image_bytes * request.param)

    return force


def _image_bytes(cfg, itemsize):
    (n, c, h, wd), (o, cg, kh, kw), s, p, d, _ = cfg
    ho, wo = C.out_size(h, kh, s[0], p[0], d[0]), C.out_size(wd, kw, s[1], p[1], d[1])
    return ho * wo * kh * kw * c * itemsize


@pytest.mark.parametrize("cfg", BLOCKED, ids=BLOCKED_IDS)
def test_blocked_equals_whole_batch_and_torch(cfg, blocked):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(cfg[0]), rng.standard_normal(cfg[1])
    g = rng.standard_normal(_reference(x, w, *cfg[2:]).shape)
    whole = _three(cfg, x, w, g)
    blocked(_image_bytes(cfg, 8))
    assert len(C._spans(np, x.shape[0], _image_bytes(cfg, 8))) > 1
    got = _three(cfg, x, w, g)
    stride, padding, dilation, groups = cfg[2:]
    tx, tw, tg = (torch.tensor(a) for a in (x, w, g))
    want = (
        torch.nn.functional.conv2d(tx, tw, None, stride, padding, dilation, groups),
        torch.nn.grad.conv2d_input(x.shape, tw, tg, stride, padding, dilation, groups),
        torch.nn.grad.conv2d_weight(tx, w.shape, tg, stride, padding, dilation, groups),
    )
    for a, b, t in zip(got, whole, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(a, t.numpy(), rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_blocked_keeps_dtype_and_matches_whole_batch(dtype, blocked):
    cfg = BLOCKED[0]
    rng = np.random.default_rng(0)
    dt = getattr(ember, dtype)
    x, w = (ember.tensor(rng.standard_normal(s), dtype=dt) for s in cfg[1::-1][::-1])
    g = ember.tensor(rng.standard_normal((5, 4, 6, 6)), dtype=dt)
    arrays = [t.numpy() for t in (x, w, g)]
    whole = _three(cfg, *arrays)
    blocked(_image_bytes(cfg, x.numpy().itemsize))
    got = _three(cfg, *arrays)
    tol = {"float32": 1e-5, "float16": 1e-2, "bfloat16": 3e-2}[dtype]
    for a, b in zip(got, whole):
        assert a.dtype == b.dtype == x.numpy().dtype
        scale = np.abs(b.astype(np.float64)).max()
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), atol=tol * scale)


@pytest.mark.parametrize(
    "cfg", [BLOCKED[i] for i in (1, 2, 4)], ids=[BLOCKED_IDS[i] for i in (1, 2, 4)]
)
def test_blocked_gradcheck_float64(cfg, blocked):
    blocked(_image_bytes(cfg, 8))
    x, w = (ember.tensor(a, requires_grad=True) for a in _arrays(cfg))
    op = C.Conv2d(*cfg[2:])

    def conv(a, b):
        return apply(op, a, b)

    assert gradcheck(conv, (x, w), fast_mode=True)
    assert gradgradcheck(conv, (x, w), fast_mode=True)


def test_blocked_weight_gradient_takes_no_stale_patches(blocked):
    """A blocked forward leaves only its last block's patches: the weight gradient gathers."""
    cfg = BLOCKED[0]
    blocked(_image_bytes(cfg, 8))
    x, w = (ember.tensor(a, requires_grad=True) for a in _arrays(cfg))
    ember.nn.functional.conv2d(x, w, padding=1).pow(2).sum().backward()
    tx, tw = (torch.tensor(a.detach().numpy(), requires_grad=True) for a in (x, w))
    torch.nn.functional.conv2d(tx, tw, padding=1).pow(2).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-11, atol=1e-11)


def test_large_batches_keep_a_block_of_scratch(monkeypatch):
    """64x16x32x32, 3x3: 37.7 MB of patches at once; blocks of ~1 MiB hold a few MiB in all (the
    forward's patches and padded copy, the input gradient's own)."""
    monkeypatch.setattr(_memory, "HOST_BLOCK_BYTES", 1 << 20)
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((64, 16, 32, 32)).astype(np.float32), requires_grad=True)
    w = ember.tensor(rng.standard_normal((16, 16, 3, 3)).astype(np.float32), requires_grad=True)
    C.release_scratch()
    ember.nn.functional.conv2d(x, w, padding=1).sum().backward()
    held = sum(b.nbytes for b in _memory._local.bufs.values())
    assert held <= 4 * _memory.HOST_BLOCK_BYTES, held
    C.release_scratch()


def test_spans_split_evenly():
    assert C._spans(np, 0, 1 << 30) == [(0, 0)]
    assert C._spans(np, 1, 1 << 30) == [(0, 1)]
    block = _memory.HOST_BLOCK_BYTES
    assert C._spans(np, 10, 2 * block) == [(i, i + 1) for i in range(10)]
    assert C._spans(np, 10, block // 5 - 1) == [(0, 10)]  # under two blocks' worth: one
    sizes = [b - a for a, b in C._spans(np, 50, block // 2)]  # 2 images a block
    assert sum(sizes) == 50 and max(sizes) - min(sizes) <= 1


def test_channels_last_input_1x1_reads_in_place():
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((2, 3, 5, 5)))
    w1 = ember.tensor(rng.standard_normal((4, 3, 3, 3)))
    w2 = ember.tensor(rng.standard_normal((2, 4, 1, 1)))
    y = ember.nn.functional.conv2d(x, w1, padding=1)  # channels-last memory
    assert y.numpy().transpose(0, 2, 3, 1).flags.c_contiguous
    z = ember.nn.functional.conv2d(y, w2)
    want = torch.nn.functional.conv2d(torch.tensor(y.numpy()), torch.tensor(w2.numpy()))
    np.testing.assert_allclose(z.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


def test_layout_choice():
    assert C.planar((2, 1, 28, 28), (5, 5), (1, 1), 1)  # LeNet's first layer
    assert not C.planar((2, 64, 32, 32), (3, 3), (1, 1), 1)
    assert not C.planar((2, 1, 28, 28), (5, 5), (1, 2), 1)
    assert all(C.planar(c[0], c[1][2:], c[2], c[5]) for c in CONFIGS[1:3])


def test_empty_batch():
    out = ember.nn.functional.conv2d(ember.ones(0, 3, 5, 5), ember.ones(2, 3, 3, 3))
    assert tuple(out.shape) == (0, 2, 3, 3)


def test_infer_names_the_problem():
    spec = C.conv_output_shape((2, 4, 8, 8), (6, 2, 3, 3), C.Conv2d((2, 2), (1, 1), (1, 1), 2))
    assert spec == (2, 6, 4, 4)
    with pytest.raises(ember.ShapeError, match=r"out channels 5 .* not divisible by groups 2"):
        C.conv_output_shape((2, 4, 8, 8), (5, 2, 3, 3), C.Conv2d((1, 1), (0, 0), (1, 1), 2))
    with pytest.raises(ember.ShapeError, match=r"stride \(0, 1\) and dilation"):
        C.conv_output_shape((2, 4, 8, 8), (4, 4, 3, 3), C.Conv2d((0, 1), (0, 0), (1, 1), 1))


@pytest.mark.parametrize(
    "name, fn",
    [
        ("matmul", lambda m, x, w: x.flatten(1)[:, :36] @ w.flatten(1).T),
        (
            "einsum",
            lambda m, x, w: m.einsum("nchw,ochw->no", x, w[:, :, :1, :1].expand(-1, -1, 6, 6)),
        ),
        ("conv", lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1)),
        ("conv_groups", lambda m, x, w: m.nn.functional.conv2d(x, w[:, :2], stride=2, groups=2)),
        ("conv_1x1", lambda m, x, w: m.nn.functional.conv2d(x, w[:, :, :1, :1])),
    ],
)
def test_bfloat16_stays_bfloat16_and_matches_torch(device, name, fn):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    xs, ws = rng.standard_normal((2, 4, 6, 6)), rng.standard_normal((4, 4, 3, 3))
    x = ember.tensor(xs, dtype=ember.bfloat16, device=device, requires_grad=True)
    w = ember.tensor(ws, dtype=ember.bfloat16, device=device, requires_grad=True)
    out = fn(ember, x, w)
    out.float().square().sum().backward()
    assert (out.dtype, x.grad.dtype, w.grad.dtype) == (ember.bfloat16,) * 3
    tx = torch.tensor(xs, dtype=torch.bfloat16, requires_grad=True)
    tw = torch.tensor(ws, dtype=torch.bfloat16, requires_grad=True)
    tout = fn(torch, tx, tw)
    tout.float().square().sum().backward()
    scale = float(tout.float().abs().max())
    np.testing.assert_allclose(
        out.detach().float().cpu().numpy(), tout.detach().float().numpy(), atol=0.02 * scale
    )
    gscale = float(tx.grad.float().abs().max())
    np.testing.assert_allclose(
        x.grad.float().cpu().numpy(), tx.grad.float().numpy(), atol=0.03 * gscale
    )


def _three_layers(lib, x, ws):
    h = x
    for w in ws:
        h = lib.relu(lib.nn.functional.conv2d(h, w, padding=1))
    return h


def test_every_layer_reuses_its_forward_patches(monkeypatch):
    """Three convolutions (the first planar: two channels, since one takes the direct kernel
    and keeps no patches): each weight gradient takes the patches its forward pass kept (no
    second gather) and equals PyTorch's; the entries go as they are taken."""
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((4, 2, 12, 12)).astype(np.float32)
    wss = [
        rng.standard_normal(s).astype(np.float32) * 0.3
        for s in [(6, 2, 3, 3), (6, 6, 3, 3), (5, 6, 3, 3)]
    ]
    C.release_scratch()
    taken = []
    real = C._recall
    monkeypatch.setattr(C, "_recall", lambda x, tag: taken.append(real(x, tag)) or taken[-1])
    x = ember.tensor(xs, requires_grad=True)
    ws = [ember.tensor(w, requires_grad=True) for w in wss]
    y = _three_layers(ember, x, ws)
    assert len(C._kept()) == 3
    (y * y).sum().backward()
    assert len(taken) == 3 and all(t is not None for t in taken)
    assert len(C._kept()) == 0
    tx = torch.tensor(xs, requires_grad=True)
    tws = [torch.tensor(w, requires_grad=True) for w in wss]
    ty = _three_layers(torch, tx, tws)
    (ty * ty).sum().backward()
    for w, tw in zip(ws, tws):
        np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_kept_patches_only_while_recording_and_within_the_cap(monkeypatch):
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((2, 3, 6, 6)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
    C.release_scratch()
    with ember.no_grad():
        ember.nn.functional.conv2d(x, w, padding=1)
    assert len(C._kept()) == 0
    y = ember.nn.functional.conv2d(x, w, padding=1)
    assert len(C._kept()) == 1
    C._local.cols_of = None  # the no_grad pass's scratch patches name x (strongly)
    del y, x
    import gc

    gc.collect()
    assert len(C._kept()) == 0  # the entry died with its input
    monkeypatch.setattr(C, "KEEP_BYTES", 1000)  # 2*6*6*27*8 bytes of patches: over the cap
    x = ember.tensor(rng.standard_normal((2, 3, 6, 6)), requires_grad=True)
    ember.nn.functional.conv2d(x, w, padding=1).sum().backward()
    assert len(C._kept()) == 0
    tx, tw = (
        torch.tensor(x.detach().numpy(), requires_grad=True),
        torch.tensor(w.detach().numpy(), requires_grad=True),
    )
    torch.nn.functional.conv2d(tx, tw, padding=1).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_kept_patches_follow_in_place_changes_through_a_new_forward():
    """A forward pass after an in-place change keeps the new patches (no stale entry)."""
    rng = np.random.default_rng(2)
    x = ember.tensor(rng.standard_normal((2, 3, 6, 6)))
    w = ember.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
    ember.nn.functional.conv2d(x, w, padding=1)
    x.mul_(3)
    ember.nn.functional.conv2d(x, w, padding=1).pow(2).sum().backward()
    tx, tw = torch.tensor(x.numpy()), torch.tensor(w.detach().numpy(), requires_grad=True)
    torch.nn.functional.conv2d(tx, tw, padding=1).pow(2).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    "cfg",
    [  # (x shape, w shape, stride, padding, dilation, groups)
        ((3, 4, 8, 8), (6, 4, 3, 3), (1, 1), (1, 1), (1, 1), 1),
        ((2, 6, 9, 7), (4, 3, 3, 2), (2, 1), (1, 0), (1, 2), 2),
        ((2, 5, 6, 6), (3, 5, 5, 5), (1, 1), (2, 2), (1, 1), 1),
        ((2, 4, 5, 5), (4, 4, 1, 1), (1, 1), (0, 0), (1, 1), 1),
        ((2, 1, 12, 12), (3, 1, 5, 5), (1, 1), (2, 2), (1, 1), 1),
        ((2, 2, 10, 16), (3, 2, 3, 3), (2, 1), (1, 2), (2, 1), 1),
    ],
    ids=["3x3", "strided_dilated_groups", "5x5_pad2", "1x1", "planar", "planar_strided"],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["channels_last", "nchw"])
def test_numba_gathers_match_numpy_and_torch(cfg, dtype, layout, monkeypatch):
    """Conv2d's CPU override (numba's patch gathers: channels-last patches from channels-last
    or NCHW memory, planar patches for few channels; the input gradient's gathering
    convolution too) against the NumPy body and PyTorch."""
    from ember.backend import jit as _jit

    if not _jit.available():
        pytest.skip("numba is not installed")
    xs, ws, s, p, d, g = cfg
    rng = np.random.default_rng(0)
    x = rng.standard_normal(xs).astype(dtype)
    if layout == "channels_last":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    w = rng.standard_normal(ws).astype(dtype)
    results = {}
    for mode in ("off", "sync"):
        monkeypatch.setattr(_jit, "_mode", mode)
        C.release_scratch()
        xt, wt = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
        y = ember.nn.functional.conv2d(xt, wt, None, s, p, d, g)
        (y * y).sum().backward()
        results[mode] = [a.detach().numpy() for a in (y, xt.grad, wt.grad)]
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for a, b in zip(results["sync"], results["off"]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    tx, tw = (
        torch.tensor(np.ascontiguousarray(x), requires_grad=True),
        torch.tensor(w, requires_grad=True),
    )
    ty = torch.nn.functional.conv2d(tx, tw, None, s, p, d, g)
    (ty * ty).sum().backward()
    for a, b in zip(results["sync"], (ty, tx.grad, tw.grad)):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=tol * 10, atol=tol * 10)
