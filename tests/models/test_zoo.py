"""ember.models against the same architectures written in PyTorch (tests/models/_torch_ref.py).

Each parity test builds the PyTorch model, gives it non-trivial weights and BatchNorm
statistics, exports its state dict with ``safetensors.torch.save_file``, reads the file with
``ember.load`` (a plain safetensors file loads as a dict of tensors), loads it into the ember
model with ``strict=True`` and compares the state-dict keys (in order), shapes, dtypes and
the outputs in eval mode: float64 tightly, float32 loosely.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

import ember
import ember.models as M
from ember._errors import ShapeError
from ember.models.vgg import make_layers

from . import _torch_ref as R

TOL = {"float64": dict(rtol=1e-9, atol=1e-9), "float32": dict(rtol=2e-4, atol=2e-4)}


def _torchvision_init(tm: torch.nn.Module) -> None:
    """torchvision's init plus random BatchNorm affine parameters and running statistics, so
    every tensor of the state dict matters to the eval-mode output."""
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for m in tm.modules():
            if isinstance(m, torch.nn.Conv2d):
                torch.nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                if m.bias is not None:
                    m.bias.uniform_(-0.1, 0.1, generator=g)
            elif isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5, generator=g)
                m.bias.uniform_(-0.5, 0.5, generator=g)
                m.running_mean.uniform_(-0.2, 0.2, generator=g)
                m.running_var.uniform_(0.5, 1.5, generator=g)
                m.num_batches_tracked.fill_(7)


def _transfer(tm: torch.nn.Module, em: ember.nn.Module, tmp_path, dtype: str) -> None:
    """Export ``tm`` (cast to ``dtype``) to safetensors and load the file into ``em``."""
    tm.to(getattr(torch, dtype))
    em.double() if dtype == "float64" else em.float()
    path = tmp_path / "weights.safetensors"
    save_file({k: v.detach().contiguous() for k, v in tm.state_dict().items()}, str(path))
    state = ember.load(path)
    path.unlink()  # VGG files are 0.5-1 GB: do not leave them in pytest's kept temp folders
    assert isinstance(state, dict) and all(isinstance(v, ember.Tensor) for v in state.values())
    em.load_state_dict(state, strict=True)

    t_sd, e_sd = tm.state_dict(), em.state_dict()
    assert list(e_sd) == list(t_sd)  # same keys in torchvision's order
    for k, v in t_sd.items():
        assert tuple(e_sd[k].shape) == tuple(v.shape), k
        assert str(e_sd[k].dtype).split(".")[-1] == str(v.dtype).split(".")[-1], k
        if v.numel() < 1_000_000:  # the big ones are checked by the outputs
            np.testing.assert_array_equal(e_sd[k].numpy(), v.numpy(), err_msg=k)


def _compare(tm, em, x: np.ndarray, dtype: str) -> None:
    tm.eval()
    em.eval()
    with torch.no_grad():
        ref = tm(torch.from_numpy(x)).detach().numpy()
    with ember.no_grad():
        out = em(ember.tensor(x)).detach().numpy()
    assert out.shape == ref.shape and out.dtype == ref.dtype
    scale = float(np.abs(ref).max()) or 1.0
    tol = TOL[dtype]
    np.testing.assert_allclose(out, ref, rtol=tol["rtol"], atol=tol["atol"] * scale)


def _input(shape, dtype: str, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _no_random_init(monkeypatch) -> list:
    """Make ember.nn.init's random and constant fills write zeros and record their calls as
    (name, shape, args, kwargs): the tests below check which init each layer gets without
    drawing millions of random numbers (load_state_dict then sets every value)."""
    calls = []

    def spy(name):
        def fill(t, *args, **kwargs):
            calls.append((name, tuple(t.shape), args, kwargs))
            return t.detach().zero_()

        return fill

    for fn in ("kaiming_uniform_", "uniform_", "normal_", "kaiming_normal_", "constant_"):
        monkeypatch.setattr(ember.nn.init, fn, spy(fn))
    return calls


# --- small models ------------------------------------------------------------------------------

GEOMETRIES = [(1, (8, 8)), (1, (28, 28)), (3, (32, 32))]


def _torch_small(name: str, c: int, size: tuple[int, int], classes: int) -> torch.nn.Module:
    if name == "mlp":
        return R.MLP(c * size[0] * size[1], classes, (256, 128))
    if name == "cnn":
        return R.SmallCNN(classes, c, size)
    em = M.lenet5(num_classes=classes, in_channels=c, image_size=size)  # the padding rule
    return R.LeNet5(classes, c, em.conv1.padding, em.conv2.padding, em.fc1.in_features)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("c,size", GEOMETRIES, ids=["digits", "mnist", "cifar"])
@pytest.mark.parametrize("name", ["mlp", "cnn", "lenet5"])
def test_small_model_parity(name, c, size, dtype, tmp_path):
    torch.manual_seed(0)
    tm = _torch_small(name, c, size, 7)
    _torchvision_init(tm)
    em = M.get_model(name, num_classes=7, in_channels=c, image_size=size)
    _transfer(tm, em, tmp_path, dtype)
    _compare(tm, em, _input((2, c, *size), dtype), dtype)


# --- ResNet ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,dtype,c,size",
    [
        ("resnet18", "float64", 3, (32, 32)),
        ("resnet18", "float32", 1, (8, 8)),
        ("resnet34", "float32", 3, (32, 32)),
        ("resnet50", "float64", 1, (28, 28)),
    ],
)
def test_resnet_parity(name, dtype, c, size, tmp_path, monkeypatch):
    torch.manual_seed(0)
    block, layers = R.RESNETS[name]
    tm = R.ResNet(block, layers, num_classes=10, in_channels=c)
    _torchvision_init(tm)
    _no_random_init(monkeypatch)  # the init is checked in test_resnet_init_is_torchvisions
    em = M.get_model(name, num_classes=10, in_channels=c, image_size=size)
    monkeypatch.undo()
    _transfer(tm, em, tmp_path, dtype)
    _compare(tm, em, _input((2, c, *size), dtype), dtype)


def test_resnet_train_mode_parity(tmp_path):
    """Train mode: BatchNorm uses batch statistics and updates its running ones; the outputs,
    the updated buffers and every parameter gradient match PyTorch (float64)."""
    torch.manual_seed(0)
    tm = R.ResNet(R.BasicBlock, [2, 2, 2, 2], num_classes=10)
    _torchvision_init(tm)
    em = M.resnet18(num_classes=10)
    _transfer(tm, em, tmp_path, "float64")
    x = _input((4, 3, 32, 32), "float64")
    w = _input((4, 10), "float64", seed=1)
    tm.train()
    em.train()
    ref = tm(torch.from_numpy(x))
    (ref * torch.from_numpy(w)).sum().backward()
    out = em(ember.tensor(x))
    (out * ember.tensor(w)).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-9, atol=1e-9)
    t_sd, e_sd = tm.state_dict(), em.state_dict()
    for k, v in t_sd.items():
        np.testing.assert_allclose(
            e_sd[k].detach().numpy(), v.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=k
        )
    assert int(e_sd["bn1.num_batches_tracked"].item()) == 8
    t_params = dict(tm.named_parameters())
    for k, p in em.named_parameters():
        ref_g = t_params[k].grad.detach().numpy()
        scale = float(np.abs(ref_g).max()) or 1.0
        np.testing.assert_allclose(
            p.grad.detach().numpy(), ref_g, rtol=1e-7, atol=1e-9 * scale, err_msg=k
        )


def test_resnet_grouped_dilated_parity(tmp_path):
    """ResNeXt-style groups, a wider base width and dilation instead of stride."""
    torch.manual_seed(0)
    kw = dict(groups=2, width_per_group=32, replace_stride_with_dilation=[False, True, True])
    tm = R.ResNet(R.Bottleneck, [1, 1, 1, 1], num_classes=4, **kw)
    _torchvision_init(tm)
    em = M.ResNet(M.Bottleneck, [1, 1, 1, 1], num_classes=4, **kw)
    _transfer(tm, em, tmp_path, "float64")
    _compare(tm, em, _input((2, 3, 32, 32), "float64"), "float64")


def test_resnet_init_is_torchvisions():
    net = M.ResNet(M.BasicBlock, [1, 1, 1, 1], num_classes=10)
    w = net.layer3[0].conv1.weight.detach().numpy()  # 256 x 128 x 3 x 3: fan_out = 256 * 9
    assert abs(w.std() - math.sqrt(2 / (256 * 9))) < 0.05 * math.sqrt(2 / (256 * 9))
    assert abs(w.mean()) < 1e-3
    for m in net.modules():
        if isinstance(m, ember.nn.BatchNorm2d):
            assert (m.weight.detach().numpy() == 1).all() and (m.bias.detach().numpy() == 0).all()
    bound = 1 / math.sqrt(512)  # fc keeps Linear's default init
    assert np.abs(net.fc.weight.detach().numpy()).max() <= bound
    assert net.fc.bias.detach().numpy().std() > 0
    assert all(
        (b.bn2.weight.detach().numpy() != 0).all()
        for layer in (net.layer1, net.layer2)
        for b in layer
    )
    zero = M.ResNet(M.BasicBlock, [1, 1, 1, 1], zero_init_residual=True)
    assert all((b.bn2.weight.detach().numpy() == 0).all() for b in zero.layer1)
    assert (zero.bn1.weight.detach().numpy() == 1).all()
    zero = M.ResNet(M.Bottleneck, [1, 1, 1, 1], zero_init_residual=True)
    assert all((b.bn3.weight.detach().numpy() == 0).all() for b in zero.layer4)
    assert (zero.layer4[0].bn2.weight.detach().numpy() == 1).all()


# --- VGG ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,dtype,c,size",
    [
        ("vgg11", "float32", 1, (28, 28)),
        ("vgg11_bn", "float64", 1, (8, 8)),
        ("vgg16", "float32", 3, (32, 32)),
        ("vgg16_bn", "float32", 3, (32, 32)),
    ],
)
def test_vgg_parity(name, dtype, c, size, tmp_path, monkeypatch):
    """The big classifier (25088 x 4096 weights) makes these the slow tests, so random numbers
    are drawn sparingly: the PyTorch model is built on the meta device and its Linear weights
    tile a small random block; the ember model's layers start from zeros (every value comes
    from the file, strict=True) and its init calls are checked instead."""
    cfg = "A" if name.startswith("vgg11") else "D"
    bn = name.endswith("_bn")
    torch.manual_seed(0)
    with torch.device("meta"):
        tm = R.VGG(R.vgg_features(R.VGG_CFGS[cfg], bn, c, size), num_classes=10)
    tm.to_empty(device="cpu")
    _torchvision_init(tm)
    with torch.no_grad():
        for m in tm.classifier:
            if isinstance(m, torch.nn.Linear):
                rows, cols = m.weight.shape
                block = torch.randn(13, cols) * math.sqrt(2 / cols)  # 13: no period of 4096
                m.weight.copy_(block.repeat(rows // 13 + 1, 1)[:rows])
                m.bias.uniform_(-0.1, 0.1)
    calls = _no_random_init(monkeypatch)
    em = M.get_model(name, num_classes=10, in_channels=c, image_size=size)
    monkeypatch.undo()

    # torchvision's init: Kaiming-normal fan-out convs, zero biases, BN 1 / 0, Linear N(0, 0.01)
    convs = [m for m in em.features if isinstance(m, ember.nn.Conv2d)]
    inits = [
        (n, shape, a, k) for n, shape, a, k in calls if n not in ("kaiming_uniform_", "uniform_")
    ]
    expected = []
    for conv in convs:
        expected.append(
            (
                "kaiming_normal_",
                tuple(conv.weight.shape),
                (),
                dict(mode="fan_out", nonlinearity="relu"),
            )
        )
        expected.append(("constant_", (conv.out_channels,), (0,), {}))
        if bn:
            expected += [("constant_", (conv.out_channels,), (v,), {}) for v in (1, 0)]
    for shape in [(4096, 25088), (4096, 4096), (10, 4096)]:
        expected += [("normal_", shape, (0, 0.01), {}), ("constant_", shape[:1], (0,), {})]
    assert inits == expected
    assert len(convs) == (8 if cfg == "A" else 13)

    _transfer(tm, em, tmp_path, dtype)
    _compare(tm, em, _input((2, c, *size), dtype), dtype)


def test_vgg_layers_for_small_images():
    """8x8 (digits) and 28x28 (MNIST) inputs keep every keyed layer; only pools that would
    empty a 1-pixel map change (to Identity, or to a one-axis pool)."""
    cfg = [8, "M", 8, "M", 8, "M", 8, "M", 8, "M"]
    kinds = lambda f: [type(m).__name__ for m in f if not isinstance(m, ember.nn.ReLU)]  # noqa: E731
    assert kinds(make_layers(cfg, image_size=None)) == ["Conv2d", "MaxPool2d"] * 5
    assert kinds(make_layers(cfg, image_size=(32, 32))) == ["Conv2d", "MaxPool2d"] * 5
    assert kinds(make_layers(cfg, image_size=(28, 28)))[-2:] == ["Conv2d", "Identity"]
    assert kinds(make_layers(cfg, image_size=(8, 8)))[-4:] == ["Conv2d", "Identity"] * 2
    wide = make_layers(cfg, image_size=(2, 16))
    assert [m.kernel_size for m in wide if isinstance(m, ember.nn.MaxPool2d)][:2] == [2, (1, 2)]
    f = make_layers(cfg, in_channels=1, image_size=(2, 16))
    assert f(ember.zeros(1, 1, 2, 16)).shape == (1, 8, 1, 1)


# --- small models: shapes, options, geometry ---------------------------------------------------


@pytest.mark.parametrize("c,size", GEOMETRIES, ids=["digits", "mnist", "cifar"])
@pytest.mark.parametrize("name", ["mlp", "cnn", "lenet5"])
def test_models_train_on_each_geometry(name, c, size):
    net = M.get_model(name, num_classes=10, in_channels=c, image_size=size)
    net.train()
    out = net(ember.randn(4, c, *size))
    assert out.shape == (4, 10) and out.dtype == ember.float32
    out.sum().backward()
    assert all(p.grad is not None for p in net.parameters())


def test_cnn_odd_shapes_and_options():
    net = M.cnn(num_classes=3, in_channels=2, image_size=(1, 9), width=8, dropout=0.0)
    assert net.eval()(ember.zeros(2, 2, 1, 9)).shape == (2, 3)
    assert isinstance(net.features[6], ember.nn.MaxPool2d)
    assert net.features[6].kernel_size == (1, 2)
    assert M.cnn(width=8).classifier[2].in_features == 16
    sd = M.cnn(in_channels=1, image_size=(8, 8)).state_dict()
    assert [k for k in sd if k.endswith("weight")][:2] == ["features.0.weight", "features.1.weight"]


@pytest.mark.parametrize(
    "size,pads,flat", [((32, 32), (0, 0), 400), ((28, 28), (2, 0), 400), ((8, 8), (2, 2), 64)]
)
def test_lenet5_geometry(size, pads, flat):
    net = M.lenet5(num_classes=10, in_channels=1, image_size=size)
    assert (net.conv1.padding[0], net.conv2.padding[0]) == pads
    assert net.fc1.in_features == flat
    assert list(net.state_dict()) == [
        f"{m}.{p}" for m in ("conv1", "conv2", "fc1", "fc2", "fc3") for p in ("weight", "bias")
    ]
    assert net(ember.zeros(1, 1, *size)).shape == (1, 10)


def test_lenet5_too_small():
    with pytest.raises(ShapeError, match=r"LeNet5: image_size \(3, 3\) is too small"):
        M.lenet5(image_size=(3, 3))


def test_mlp_options():
    net = M.mlp(num_classes=5, in_channels=1, image_size=(4, 4), hidden=(8, 8, 8), dropout=0.5)
    kinds = [type(m).__name__ for m in net.layers]
    assert kinds == ["Linear", "ReLU", "Dropout"] * 3 + ["Linear"]
    assert net.layers[0].in_features == 16 and net.layers[-1].out_features == 5
    assert M.mlp(hidden=32).layers[0].out_features == 32
    with pytest.raises(ValueError, match="MLP: hidden sizes must be positive ints"):
        M.mlp(hidden=(8, 0))
    with pytest.raises(ValueError, match=r"MLP: dropout must be in \[0, 1\)"):
        M.mlp(dropout=1.0)


# --- get_model / list_models ------------------------------------------------------------------


def test_list_models():
    names = M.list_models()
    assert names == sorted(names)
    assert set(names) == {
        "mlp",
        "cnn",
        "lenet5",
        "vgg11",
        "vgg11_bn",
        "vgg16",
        "vgg16_bn",
        "resnet18",
        "resnet34",
        "resnet50",
    }


def test_get_model_defaults_and_names():
    net = M.get_model("CNN")
    assert isinstance(net, M.SmallCNN) and net.classifier[2].out_features == 10
    assert net.features[0].in_channels == 3
    assert isinstance(M.get_model("LeNet5", in_channels=1), M.LeNet5)
    net = M.get_model("mlp", hidden=(16,), num_classes=4, in_channels=1, image_size=(8, 8))
    assert [m.out_features for m in net.layers if isinstance(m, ember.nn.Linear)] == [16, 4]


def test_get_model_errors():
    known = "cnn, lenet5, mlp, resnet18, resnet34, resnet50, vgg11, vgg11_bn, vgg16, vgg16_bn"
    with pytest.raises(
        ValueError, match=f"get_model: unknown model 'resnet9'; known models: {known}$"
    ):
        M.get_model("resnet9")
    with pytest.raises(TypeError, match="get_model: name must be a str, got int"):
        M.get_model(3)
    with pytest.raises(
        TypeError, match=r"get_model\('mlp'\): .*unexpected keyword argument 'depth'"
    ):
        M.get_model("mlp", depth=3)
    with pytest.raises(ValueError, match="cnn: num_classes must be a positive int, got 0"):
        M.get_model("cnn", num_classes=0)
    with pytest.raises(ValueError, match="resnet18: in_channels must be a positive int, got 1.5"):
        M.get_model("resnet18", in_channels=1.5)
    with pytest.raises(ValueError, match=r"lenet5: image_size must be a pair of positive ints"):
        M.get_model("lenet5", image_size=(28, 0))
    with pytest.raises(ValueError, match=r"mlp: image_size must be a pair"):
        M.get_model("mlp", image_size="28x28")


def test_wrong_input_channels_names_the_layer():
    net = M.cnn(in_channels=1, image_size=(8, 8))
    with pytest.raises(
        ShapeError,
        match=r"Conv2d\)?: expected input with 1 channels, got 3 \(input shape \(2, 3, 8, 8\)\)",
    ):
        net(ember.zeros(2, 3, 8, 8))


def test_resnet18_trains_in_bfloat16_on_cuda(fake_cuda):
    """A whole ResNet-18 in bfloat16 trains on cuda (on the strict fake here): the
    scatter-adds, reductions and BatchNorm keep the dtype, and the loss goes down. (float16
    without loss scaling overflows in the first gradients, as PyTorch's does: that needs a
    GradScaler.)"""
    dt = ember.bfloat16
    model = ember.models.resnet18(num_classes=10).to("cuda").to(dt)
    opt = ember.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = ember.randn(2, 3, 16, 16).to("cuda").to(dt)
    y = ember.tensor([1, 2]).to("cuda")
    losses = []
    for _ in range(2):
        opt.zero_grad()
        loss = ember.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert loss.dtype == dt and all(p.grad.dtype == dt for p in model.parameters())
    assert np.isfinite(losses).all() and losses[-1] < losses[0]
