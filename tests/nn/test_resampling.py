"""interpolate / Upsample, pixel and channel shuffles, padding layers against torch."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
F, TF = ember.nn.functional, torch.nn.functional

INTERP = [
    ((2, 3, 5, 7), dict(scale_factor=2, mode="nearest")),
    ((2, 3, 5, 7), dict(size=(8, 4), mode="nearest")),
    ((2, 3, 5, 7), dict(scale_factor=1.7, mode="nearest")),
    ((2, 3, 5, 7), dict(size=(9, 11), mode="nearest-exact")),
    ((2, 3, 5, 7), dict(scale_factor=2, mode="bilinear")),
    ((2, 3, 5, 7), dict(scale_factor=2, mode="bilinear", align_corners=True)),
    ((2, 3, 5, 7), dict(size=(3, 4), mode="bilinear")),
    ((2, 3, 5, 7), dict(scale_factor=(1.5, 0.6), mode="bilinear")),
    ((2, 3, 5, 7), dict(scale_factor=1.3, mode="bilinear", recompute_scale_factor=True)),
    ((2, 3, 5, 7), dict(scale_factor=2, mode="bicubic")),
    ((2, 3, 5, 7), dict(size=(4, 9), mode="bicubic", align_corners=True)),
    ((2, 3, 5, 7), dict(size=(2, 3), mode="area")),
    ((2, 3, 6), dict(scale_factor=2.5, mode="linear")),
    ((2, 3, 6), dict(size=4, mode="linear", align_corners=True)),
    ((2, 3, 6), dict(scale_factor=3, mode="nearest")),
    ((1, 2, 3, 4, 5), dict(scale_factor=2, mode="trilinear")),
    ((1, 2, 3, 4, 5), dict(size=(2, 5, 7), mode="nearest")),
]


@pytest.mark.parametrize(
    "shape, kw", INTERP, ids=[f"{i}-{kw['mode']}" for i, (_, kw) in enumerate(INTERP)]
)
def test_interpolate_values_and_grads(device, shape, kw):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    t = torch.tensor(x, requires_grad=True)
    e = ember.tensor(x, device=device, requires_grad=True)
    want, got = TF.interpolate(t, **kw), F.interpolate(e, **kw)
    assert tuple(got.shape) == tuple(want.shape) and got.device.type == device
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), atol=1e-12)
    w = rng.standard_normal(tuple(want.shape))
    (want * torch.tensor(w)).sum().backward()
    (got * ember.tensor(w, device=device)).sum().backward()
    np.testing.assert_allclose(e.grad.cpu().numpy(), t.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest"])
def test_interpolate_gradgrad(mode):
    x = ember.randn(1, 2, 3, 4, dtype=ember.float64, requires_grad=True)
    fn = lambda t: F.interpolate(t, scale_factor=1.5, mode=mode) ** 2  # noqa: E731
    assert ember.autograd.gradcheck(fn, (x,))
    assert ember.autograd.gradgradcheck(fn, (x,))


@pytest.mark.parametrize(
    "name, args, make",
    [
        ("Upsample", (None, 2, "bilinear"), (1, 2, 3, 4)),
        ("UpsamplingNearest2d", (None, 3), (1, 2, 3, 4)),
        ("UpsamplingBilinear2d", ((5, 6),), (1, 2, 3, 4)),
        ("PixelShuffle", (2,), (2, 8, 3, 4)),
        ("PixelUnshuffle", (2,), (2, 3, 4, 6)),
        ("ChannelShuffle", (3,), (2, 6, 2, 2)),
        ("ZeroPad2d", ((1, 2, 0, 3),), (1, 2, 3, 4)),
        ("ConstantPad1d", (2, 3.5), (2, 3, 4)),
        ("ConstantPad3d", (1, -1.0), (1, 2, 3, 3, 3)),
        ("ReflectionPad1d", (2,), (2, 3, 4)),
        ("ReflectionPad2d", ((1, 2, 2, 1),), (1, 2, 3, 4)),
        ("ReplicationPad2d", (2,), (1, 2, 3, 4)),
        ("ReplicationPad3d", (1,), (1, 2, 3, 3, 3)),
        ("CircularPad2d", (1,), (1, 2, 3, 4)),
        ("ZeroPad1d", (2,), (3, 4)),
    ],
)
def test_modules_match_torch(device, name, args, make):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(make)
    t_mod, e_mod = getattr(torch.nn, name)(*args), getattr(ember.nn, name)(*args)
    assert repr(e_mod) == repr(t_mod)
    t = torch.tensor(x, requires_grad=True)
    e = ember.tensor(x, device=device, requires_grad=True)
    want, got = t_mod(t), e_mod(e)
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), atol=1e-12)
    w = rng.standard_normal(tuple(want.shape))
    (want * torch.tensor(w)).sum().backward()
    (got * ember.tensor(w, device=device)).sum().backward()
    np.testing.assert_allclose(e.grad.cpu().numpy(), t.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: F.interpolate(ember.ones(1, 1, 4), mode="bilinear", scale_factor=2),
            r"interpolate: mode 'bilinear' expects a 4-D input, got shape \(1, 1, 4\)",
        ),
        (
            lambda: F.interpolate(ember.ones(1, 1, 4)),
            "interpolate: exactly one of size or scale_factor",
        ),
        (
            lambda: F.interpolate(ember.ones(1, 1, 4), size=2, mode="cubic"),
            "interpolate: unknown mode 'cubic'",
        ),
        (
            lambda: F.interpolate(ember.ones(1, 1, 4), size=2, align_corners=True),
            "align_corners option can only be set",
        ),
        (
            lambda: F.pixel_shuffle(ember.ones(1, 3, 2, 2), 2),
            r"pixel_shuffle: .* got shape \(1, 3, 2, 2\)",
        ),
        (
            lambda: ember.nn.Upsample(size=(2, 2), mode="bilinear")(ember.ones(1, 4)),
            r"^Upsample: mode 'bilinear' expects a 4-D input",
        ),
        (
            lambda: ember.nn.ZeroPad2d(1)(ember.ones(4)),
            r"ZeroPad2d.*expected a 3-D or 4-D input, got shape \(4,\)",
        ),
    ],
)
def test_errors(call, match):
    with pytest.raises(ember.EmberError, match=match):
        call()


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_matches_torch(device, mode, padding_mode, align_corners):
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal((2, 3, 5, 6)), rng.uniform(-2.3, 2.3, (2, 4, 7, 2))
    tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(g, requires_grad=True)
    ex = ember.tensor(x, device=device, requires_grad=True)
    eg = ember.tensor(g, device=device, requires_grad=True)
    want = TF.grid_sample(tx, tg, mode, padding_mode, align_corners)
    got = F.grid_sample(ex, eg, mode, padding_mode, align_corners)
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), atol=1e-12)
    w = rng.standard_normal(tuple(want.shape))
    (want * torch.tensor(w)).sum().backward()
    (got * ember.tensor(w, device=device)).sum().backward()
    np.testing.assert_allclose(ex.grad.cpu().numpy(), tx.grad.numpy(), atol=1e-10)
    grid_grad = eg.grad.cpu().numpy() if eg.grad is not None else np.zeros_like(g)
    np.testing.assert_allclose(grid_grad, tg.grad.numpy(), atol=1e-9)


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_and_a_spatial_transformer_step(device, align_corners):
    rng = np.random.default_rng(1)
    theta = rng.standard_normal((2, 2, 3))
    tt = torch.tensor(theta, requires_grad=True)
    et = ember.tensor(theta, device=device, requires_grad=True)
    want = TF.affine_grid(tt, (2, 3, 4, 5), align_corners)
    got = F.affine_grid(et, (2, 3, 4, 5), align_corners)
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), atol=1e-12)
    img = rng.standard_normal((2, 3, 6, 6))
    TF.grid_sample(torch.tensor(img), want, align_corners=align_corners).sum().backward()
    F.grid_sample(
        ember.tensor(img, device=device), got, align_corners=align_corners
    ).sum().backward()
    np.testing.assert_allclose(et.grad.cpu().numpy(), tt.grad.numpy(), atol=1e-9)


def test_grid_sample_errors():
    with pytest.raises(
        ember.ShapeError, match=r"grid_sample: expected a 4-D input .* \(1, 2, 3\) and \(1, 2, 2\)"
    ):
        F.grid_sample(ember.ones(1, 2, 3), ember.ones(1, 2, 2))
    with pytest.raises(ember.ShapeError, match="grid_sample: padding_mode must be"):
        F.grid_sample(ember.ones(1, 1, 2, 2), ember.ones(1, 1, 1, 2), padding_mode="wrap")
    with pytest.raises(ember.ShapeError, match=r"affine_grid: expected theta of shape \(N, 2, 3\)"):
        F.affine_grid(ember.ones(1, 3, 3), (1, 1, 2, 2))
