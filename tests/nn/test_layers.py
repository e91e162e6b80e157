"""ember.nn layers against torch.nn with copied weights: outputs, gradients with respect to the
input and every parameter, state_dict keys, reprs, in float64 (tight) and float32 (loose).

Each case builds the same layer in both libraries (``make(nn)``), loads torch's state_dict into
the ember layer, and runs the same inputs through both.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from tests._peer import newer_feature

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")

TIGHT = dict(rtol=1e-10, atol=1e-10)
LOOSE = dict(rtol=1e-4, atol=1e-5)


def _case(name, make, *shapes, ints=False, train=True, tol=None):
    return pytest.param(make, shapes, ints, train, tol, id=name)


CASES = [
    # linear family
    _case("Linear", lambda nn: nn.Linear(5, 3), (4, 5)),
    _case("Linear-nobias-3d", lambda nn: nn.Linear(5, 3, bias=False), (2, 4, 5)),
    _case("Linear-1d", lambda nn: nn.Linear(5, 3), (5,)),
    _case("Bilinear", lambda nn: nn.Bilinear(3, 4, 2), (5, 3), (5, 4)),
    _case("Bilinear-nobias", lambda nn: nn.Bilinear(3, 4, 2, bias=False), (2, 5, 3), (2, 5, 4)),
    _case("Identity", lambda nn: nn.Identity(7, unused=1), (3, 2)),
    _case("Flatten", lambda nn: nn.Flatten(), (2, 3, 4)),
    _case("Flatten-0-1", lambda nn: nn.Flatten(0, 1), (2, 3, 4)),
    _case("Unflatten", lambda nn: nn.Unflatten(1, (2, 3)), (4, 6)),
    # convolutions
    _case("Conv2d", lambda nn: nn.Conv2d(4, 6, 3), (2, 4, 7, 7)),
    _case("Conv2d-stride-pad", lambda nn: nn.Conv2d(4, 6, 3, stride=2, padding=1), (2, 4, 7, 8)),
    _case(
        "Conv2d-rect",
        lambda nn: nn.Conv2d(3, 2, (3, 2), stride=(2, 1), padding=(0, 1)),
        (2, 3, 8, 6),
    ),
    _case(
        "Conv2d-same-dilated",
        lambda nn: nn.Conv2d(4, 6, (3, 2), padding="same", dilation=2),
        (2, 4, 7, 7),
    ),
    _case("Conv2d-same-even", lambda nn: nn.Conv2d(4, 6, 4, padding="same"), (2, 4, 7, 7)),
    _case(
        "Conv2d-valid-groups",
        lambda nn: nn.Conv2d(4, 6, 3, padding="valid", groups=2, bias=False),
        (2, 4, 7, 7),
    ),
    _case("Conv2d-depthwise", lambda nn: nn.Conv2d(4, 8, 3, padding=1, groups=4), (2, 4, 6, 6)),
    _case("Conv2d-1x1", lambda nn: nn.Conv2d(4, 5, 1), (2, 4, 5, 5)),
    _case("Conv2d-planar", lambda nn: nn.Conv2d(1, 4, 5, padding=2), (2, 1, 12, 12)),
    _case("Conv1d-planar", lambda nn: nn.Conv1d(1, 3, 3, dilation=2), (2, 1, 20)),
    _case("Conv2d-1x1-stride", lambda nn: nn.Conv2d(4, 5, 1, stride=2), (2, 4, 5, 5)),
    _case(
        "Conv2d-dilation-stride",
        lambda nn: nn.Conv2d(3, 4, 3, stride=2, padding=2, dilation=2),
        (2, 3, 9, 9),
    ),
    _case(
        "Conv2d-reflect",
        lambda nn: nn.Conv2d(4, 4, 3, padding=2, groups=4, padding_mode="reflect"),
        (2, 4, 7, 7),
    ),
    _case(
        "Conv2d-circular",
        lambda nn: nn.Conv2d(4, 4, 3, padding=1, padding_mode="circular"),
        (2, 4, 7, 7),
    ),
    _case(
        "Conv2d-replicate-unbatched",
        lambda nn: nn.Conv2d(4, 4, 3, padding=(1, 2), padding_mode="replicate"),
        (4, 7, 7),
    ),
    _case(
        "Conv2d-same-reflect",
        lambda nn: nn.Conv2d(2, 3, 4, padding="same", padding_mode="reflect"),
        (2, 2, 6, 6),
    ),
    _case("Conv1d", lambda nn: nn.Conv1d(3, 5, 3, padding=1, stride=2), (2, 3, 9)),
    _case(
        "Conv1d-same-reflect",
        lambda nn: nn.Conv1d(3, 5, 3, padding="same", padding_mode="reflect"),
        (2, 3, 9),
    ),
    _case("Conv1d-groups-dilation", lambda nn: nn.Conv1d(4, 2, 2, groups=2, dilation=3), (2, 4, 9)),
    _case("Conv1d-unbatched", lambda nn: nn.Conv1d(3, 2, 3), (3, 9)),
    _case("ConvTranspose2d", lambda nn: nn.ConvTranspose2d(4, 6, 3), (2, 4, 5, 5)),
    _case(
        "ConvTranspose2d-stride-outpad",
        lambda nn: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1),
        (2, 4, 5, 5),
    ),
    _case(
        "ConvTranspose2d-groups-dilation",
        lambda nn: nn.ConvTranspose2d(
            4, 6, (3, 2), stride=(2, 3), groups=2, dilation=(2, 1), bias=False
        ),
        (2, 4, 4, 5),
    ),
    _case("ConvTranspose2d-unbatched", lambda nn: nn.ConvTranspose2d(3, 2, 2, stride=2), (3, 4, 4)),
    _case(
        "ConvTranspose1d",
        lambda nn: nn.ConvTranspose1d(3, 4, 3, stride=2, padding=1, output_padding=1),
        (2, 3, 6),
    ),
    # pooling
    _case("MaxPool2d", lambda nn: nn.MaxPool2d(2), (2, 3, 8, 8)),
    _case("MaxPool2d-odd-tiled", lambda nn: nn.MaxPool2d((2, 3)), (2, 3, 7, 8)),
    _case("MaxPool2d-ceil-pad", lambda nn: nn.MaxPool2d(3, 2, 1, ceil_mode=True), (2, 3, 8, 8)),
    _case("MaxPool2d-dilation", lambda nn: nn.MaxPool2d(3, stride=1, dilation=2), (2, 3, 8, 8)),
    _case("MaxPool2d-indices", lambda nn: nn.MaxPool2d(2, return_indices=True), (2, 3, 8, 8)),
    _case(
        "MaxPool2d-indices-pad", lambda nn: nn.MaxPool2d(3, 2, 1, return_indices=True), (2, 3, 7, 7)
    ),
    _case("MaxPool2d-unbatched", lambda nn: nn.MaxPool2d(2, 1), (3, 5, 5)),
    _case("MaxPool1d", lambda nn: nn.MaxPool1d(3, stride=2, padding=1, ceil_mode=True), (2, 3, 10)),
    _case("MaxPool1d-indices", lambda nn: nn.MaxPool1d(2, return_indices=True), (2, 3, 9)),
    _case("AvgPool2d", lambda nn: nn.AvgPool2d(2), (2, 3, 8, 8)),
    _case("AvgPool2d-tiled-crop", lambda nn: nn.AvgPool2d(3), (2, 3, 8, 7)),
    _case("AvgPool2d-pad", lambda nn: nn.AvgPool2d(3, 2, 1), (2, 3, 8, 8)),
    _case(
        "AvgPool2d-ceil-nopad-count",
        lambda nn: nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False),
        (2, 3, 8, 8),
    ),
    _case("AvgPool2d-divisor", lambda nn: nn.AvgPool2d(2, divisor_override=3), (2, 3, 8, 8)),
    _case(
        "AvgPool2d-divisor-pad", lambda nn: nn.AvgPool2d(3, 2, 1, divisor_override=5), (2, 3, 7, 7)
    ),
    _case("AvgPool1d", lambda nn: nn.AvgPool1d(3, 2, 1, ceil_mode=True), (2, 3, 10)),
    _case(
        "AvgPool1d-nopad-count",
        lambda nn: nn.AvgPool1d(4, 3, 2, count_include_pad=False),
        (2, 3, 10),
    ),
    _case("AdaptiveAvgPool2d", lambda nn: nn.AdaptiveAvgPool2d((3, 2)), (2, 3, 8, 7)),
    _case("AdaptiveAvgPool2d-1", lambda nn: nn.AdaptiveAvgPool2d(1), (2, 3, 8, 7)),
    _case("AdaptiveAvgPool2d-None", lambda nn: nn.AdaptiveAvgPool2d((None, 3)), (2, 3, 8, 7)),
    _case("AdaptiveAvgPool2d-divisible", lambda nn: nn.AdaptiveAvgPool2d(4), (2, 3, 8, 8)),
    _case("AdaptiveAvgPool1d", lambda nn: nn.AdaptiveAvgPool1d(3), (2, 3, 8)),
    # normalization (training mode: batch statistics; running statistics compared too)
    _case("BatchNorm1d", lambda nn: nn.BatchNorm1d(3), (4, 3)),
    _case("BatchNorm1d-3d-noaffine", lambda nn: nn.BatchNorm1d(3, affine=False), (4, 3, 5)),
    _case("BatchNorm1d-nobias", lambda nn: nn.BatchNorm1d(3, bias=False), (4, 3)),
    _case("BatchNorm2d-momentum-None", lambda nn: nn.BatchNorm2d(3, momentum=None), (4, 3, 2, 2)),
    _case(
        "BatchNorm2d-untracked",
        lambda nn: nn.BatchNorm2d(3, track_running_stats=False),
        (4, 3, 2, 2),
    ),
    _case("BatchNorm2d-eval", lambda nn: nn.BatchNorm2d(3), (4, 3, 2, 2), train=False),
    _case(
        "BatchNorm2d-untracked-eval",
        lambda nn: nn.BatchNorm2d(3, track_running_stats=False),
        (4, 3, 2, 2),
        train=False,
    ),
    _case("LayerNorm", lambda nn: nn.LayerNorm(5), (3, 5)),
    _case(
        "LayerNorm-2d-noaffine",
        lambda nn: nn.LayerNorm((2, 5), elementwise_affine=False),
        (3, 2, 5),
    ),
    _case("LayerNorm-nobias", lambda nn: nn.LayerNorm(5, eps=1e-3, bias=False), (2, 3, 5)),
    _case("GroupNorm", lambda nn: nn.GroupNorm(2, 4), (3, 4, 5)),
    _case("GroupNorm-4d-noaffine", lambda nn: nn.GroupNorm(3, 6, affine=False), (2, 6, 2, 3)),
    _case("InstanceNorm2d", lambda nn: nn.InstanceNorm2d(3), (2, 3, 4, 4)),
    _case("InstanceNorm2d-affine", lambda nn: nn.InstanceNorm2d(3, affine=True), (2, 3, 4, 4)),
    _case(
        "InstanceNorm2d-tracked",
        lambda nn: nn.InstanceNorm2d(3, track_running_stats=True),
        (2, 3, 4, 4),
    ),
    _case(
        "InstanceNorm2d-tracked-eval",
        lambda nn: nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
        (2, 3, 4, 4),
        train=False,
    ),
    _case("InstanceNorm1d-unbatched", lambda nn: nn.InstanceNorm1d(3, affine=True), (3, 6)),
    # embedding (integer input; gradient of the weight only)
    _case("Embedding", lambda nn: nn.Embedding(5, 3), (2, 4), ints=True),
    _case("Embedding-padding", lambda nn: nn.Embedding(5, 3, padding_idx=1), (2, 4), ints=True),
    _case("Embedding-padding-neg", lambda nn: nn.Embedding(5, 3, padding_idx=-1), (6,), ints=True),
    # dropout: identity in eval mode
    _case("Dropout-eval", lambda nn: nn.Dropout(0.3), (3, 4), train=False),
    _case("Dropout2d-eval", lambda nn: nn.Dropout2d(), (3, 4, 2, 2), train=False),
    _case("Dropout-p0", lambda nn: nn.Dropout(0.0), (3, 4)),
    # activations
    _case("ReLU", lambda nn: nn.ReLU(), (3, 4)),
    _case("ReLU6", lambda nn: nn.ReLU6(), (3, 4)),
    _case("LeakyReLU", lambda nn: nn.LeakyReLU(0.2), (3, 4)),
    _case("ELU", lambda nn: nn.ELU(0.7), (3, 4)),
    _case("CELU", lambda nn: nn.CELU(0.5), (3, 4)),
    _case("SELU", lambda nn: nn.SELU(), (3, 4)),
    _case("GELU", lambda nn: nn.GELU(), (3, 4)),
    _case("GELU-tanh", lambda nn: nn.GELU(approximate="tanh"), (3, 4)),
    _case("SiLU", lambda nn: nn.SiLU(), (3, 4)),
    _case("Mish", lambda nn: nn.Mish(), (3, 4)),
    _case("Sigmoid", lambda nn: nn.Sigmoid(), (3, 4)),
    _case("Tanh", lambda nn: nn.Tanh(), (3, 4)),
    _case("LogSigmoid", lambda nn: nn.LogSigmoid(), (3, 4)),
    _case("Softsign", lambda nn: nn.Softsign(), (3, 4)),
    _case("Tanhshrink", lambda nn: nn.Tanhshrink(), (3, 4)),
    _case("Hardtanh", lambda nn: nn.Hardtanh(-0.5, 0.8), (3, 4)),
    # PyTorch's hardsigmoid/hardswish backward uses float32 constants (1/6, 1/3)
    _case("Hardsigmoid", lambda nn: nn.Hardsigmoid(), (3, 4), tol=dict(rtol=1e-7, atol=1e-7)),
    _case("Hardswish", lambda nn: nn.Hardswish(), (3, 4), tol=dict(rtol=1e-7, atol=1e-7)),
    _case("Hardshrink", lambda nn: nn.Hardshrink(0.3), (3, 4)),
    _case("Softshrink", lambda nn: nn.Softshrink(0.3), (3, 4)),
    _case("Threshold", lambda nn: nn.Threshold(0.1, -2.0), (3, 4)),
    _case("RReLU-eval", lambda nn: nn.RReLU(0.1, 0.3), (3, 4), train=False),
    _case("PReLU", lambda nn: nn.PReLU(), (3, 4)),
    _case("PReLU-channels", lambda nn: nn.PReLU(3, init=0.1), (2, 3, 4)),
    _case("Softplus", lambda nn: nn.Softplus(), (3, 4)),
    _case("Softplus-beta", lambda nn: nn.Softplus(2.0, 1.0), (3, 4)),
    _case("Softmax", lambda nn: nn.Softmax(dim=1), (3, 4)),
    _case("Softmax-neg", lambda nn: nn.Softmax(dim=-1), (2, 3, 4)),
    _case("LogSoftmax", lambda nn: nn.LogSoftmax(dim=1), (3, 4)),
    _case("Softmin", lambda nn: nn.Softmin(dim=0), (3, 4)),
    _case("Softmax2d", lambda nn: nn.Softmax2d(), (2, 3, 2, 2)),
    _case("GLU", lambda nn: nn.GLU(1), (3, 4)),
]


def _inputs(shapes, ints, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if ints:
        return [rng.integers(0, 5, s) for s in shapes]
    return [(rng.standard_normal(s) * 1.5).astype(dtype) for s in shapes]


def _pair(make, dtype):
    """The torch layer and an ember layer holding the same state."""
    torch.manual_seed(0)
    with newer_feature():
        tmod = make(torch.nn).to(getattr(torch, dtype))
    emod = make(ember.nn).to(getattr(ember, dtype))
    state = {k: ember.tensor(v.numpy()) for k, v in tmod.state_dict().items()}
    if any(v.dtype.is_floating_point for v in state.values()):
        # give parameters non-default values, so that weight/bias mix-ups show
        rng = np.random.default_rng(1)
        for p in tmod.parameters():
            with torch.no_grad():
                p.add_(torch.from_numpy(rng.standard_normal(tuple(p.shape)) * 0.1).to(p.dtype))
        state = {k: ember.tensor(v.numpy()) for k, v in tmod.state_dict().items()}
    emod.load_state_dict(state)
    return tmod, emod


def _close(got, want, tol, what):
    got = got.detach().cpu().numpy() if isinstance(got, ember.Tensor) else np.asarray(got)
    want = want.detach().numpy()
    assert got.shape == want.shape, f"{what}: shape {got.shape} != torch's {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != torch's {want.dtype}"
    np.testing.assert_allclose(got, want, err_msg=what, **tol)


def _device_tol(tol, dtype, device):
    """On a GPU, reductions run in another order and float32 convolutions may use TF32 (as
    PyTorch allows by default), so the cuda cases compare a little more loosely."""
    if device == "cpu":
        return tol
    floor = (1e-7, 1e-9) if dtype == "float64" else (2e-3, 1e-3)
    return dict(rtol=max(tol["rtol"], floor[0]), atol=max(tol["atol"], floor[1]))


def _run(make, shapes, ints, train, dtype, tol, device="cpu"):
    tmod, emod = _pair(make, dtype)
    emod.to(device)
    tol = _device_tol(tol, dtype, device)
    tmod.train(train)
    emod.train(train)
    arrays = _inputs(shapes, ints, dtype)
    tx = [torch.tensor(a, requires_grad=not ints) for a in arrays]
    ex = [ember.tensor(a, requires_grad=not ints, device=device) for a in arrays]
    tout, eout = tmod(*tx), emod(*ex)
    assert _first(eout).device.type == ember.device(device).type
    if isinstance(tout, tuple):  # return_indices
        _close(eout[1], tout[1], tol, "indices")
        tout, eout = tout[0], eout[0]
    _close(eout, tout, tol, "output")
    g = np.random.default_rng(2).standard_normal(tuple(tout.shape)).astype(dtype)
    if tout.requires_grad:
        tout.backward(torch.from_numpy(g))
        eout.backward(ember.tensor(g, device=device))
        for i, (a, b) in enumerate(zip(ex, tx)):
            if b.grad is not None:
                _close(a.grad, b.grad, tol, f"grad of input {i}")
        eparams = dict(emod.named_parameters())
        for name, p in tmod.named_parameters():
            if p.grad is not None:
                _close(eparams[name].grad, p.grad, tol, f"grad of {name}")
    for name, b in tmod.state_dict().items():  # running statistics after the step
        _close(emod.state_dict()[name], b, tol, f"state {name}")
    return tmod, emod


def _first(out):
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("make, shapes, ints, train, tol", CASES)
def test_layer_float64(make, shapes, ints, train, tol, device):
    _run(make, shapes, ints, train, "float64", tol or TIGHT, device)


@pytest.mark.parametrize("make, shapes, ints, train, tol", CASES)
def test_layer_float32(make, shapes, ints, train, tol, device):
    _run(make, shapes, ints, train, "float32", LOOSE, device)


@pytest.mark.parametrize("make, shapes, ints, train, tol", CASES)
def test_state_dict_and_repr(make, shapes, ints, train, tol):
    torch.manual_seed(0)
    tmod, emod = make(torch.nn), make(ember.nn)
    assert list(emod.state_dict()) == list(tmod.state_dict())
    assert [n for n, _ in emod.named_parameters()] == [n for n, _ in tmod.named_parameters()]
    assert repr(emod) == repr(tmod).replace("torch", "ember")
    for (name, t), e in zip(tmod.state_dict().items(), emod.state_dict().values()):
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], name
        assert tuple(e.shape) == tuple(t.shape), name


# -- running statistics over several steps, then eval ------------------------------------------
@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda nn: nn.BatchNorm1d(3), (8, 3)),
        (lambda nn: nn.BatchNorm1d(3, momentum=None), (8, 3, 4)),
        (lambda nn: nn.BatchNorm2d(3, momentum=0.3), (4, 3, 2, 2)),
        (lambda nn: nn.BatchNorm2d(3, affine=False, eps=1e-3), (4, 3, 2, 2)),
        (lambda nn: nn.BatchNorm3d(2), (3, 2, 2, 2, 2)),
        (lambda nn: nn.InstanceNorm2d(3, track_running_stats=True), (4, 3, 2, 3)),
        (
            lambda nn: nn.InstanceNorm1d(3, affine=True, track_running_stats=True, momentum=None),
            (4, 3, 5),
        ),
    ],
)
def test_running_statistics_and_eval(make, shape):
    tmod, emod = _pair(make, "float64")
    rng = np.random.default_rng(3)
    for _ in range(4):
        x = rng.standard_normal(shape) * 3 + 1
        tout, eout = tmod(torch.tensor(x)), emod(ember.tensor(x))
        _close(eout, tout, TIGHT, "train output")
    for name, b in tmod.state_dict().items():
        _close(emod.state_dict()[name], b, TIGHT, name)
    tmod.eval()
    emod.eval()
    x = rng.standard_normal(shape)
    _close(emod(ember.tensor(x)), tmod(torch.tensor(x)), TIGHT, "eval output")
    for name, b in tmod.state_dict().items():  # eval leaves the statistics alone
        _close(emod.state_dict()[name], b, TIGHT, name)


def test_batchnorm_reset_and_float32_buffers():
    bn = ember.nn.BatchNorm2d(2)
    assert bn.running_mean.dtype is ember.float32 and bn.num_batches_tracked.dtype is ember.int64
    bn(ember.randn(4, 2, 3, 3) + 5)
    assert int(bn.num_batches_tracked) == 1 and float(bn.running_mean.abs().sum()) > 0
    bn.reset_parameters()
    assert int(bn.num_batches_tracked) == 0 and bn.running_var.tolist() == [1.0, 1.0]


# -- default initialization: PyTorch's bounds ---------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda nn: nn.Linear(200, 300),
        lambda nn: nn.Conv2d(16, 32, 3),
        lambda nn: nn.Conv2d(16, 32, 3, groups=4),
        lambda nn: nn.Conv1d(8, 64, 5),
        lambda nn: nn.ConvTranspose2d(16, 32, 3, groups=2),
        lambda nn: nn.Bilinear(20, 30, 40),
    ],
)
def test_default_init_like_torch(make):
    torch.manual_seed(0)
    tmod, emod = make(torch.nn), make(ember.nn)
    fan_in = torch.nn.init._calculate_fan_in_and_fan_out(tmod.weight)[0]
    if isinstance(tmod, torch.nn.Bilinear):
        fan_in = tmod.in1_features
    bound = 1 / np.sqrt(fan_in)  # kaiming_uniform(a=sqrt(5)) and the bias rule both give this
    for (name, tp), ep in zip(tmod.named_parameters(), emod.parameters()):
        t, e = tp.detach().numpy(), ep.detach().numpy()
        n = e.size
        assert np.abs(t).max() <= bound * (1 + 1e-6), name  # the bound is torch's
        assert np.abs(e).max() <= bound * (1 + 1e-6), name
        if n >= 1000:
            assert np.abs(e).max() > 0.99 * bound, name  # the same bound, not a smaller one
        assert abs(e.mean()) < 4 * bound / np.sqrt(3 * n), name
        np.testing.assert_allclose(e.std(), bound / np.sqrt(3), rtol=3 / np.sqrt(n), err_msg=name)
        assert e.dtype == np.float32


def test_default_init_embedding_and_norms():
    emb = ember.nn.Embedding(1000, 50, padding_idx=3)
    w = emb.weight.detach().numpy()
    assert abs(w.mean()) < 0.01 and abs(w.std() - 1) < 0.02  # N(0, 1)
    assert (w[3] == 0).all()
    assert ember.nn.PReLU(3).weight.tolist() == pytest.approx([0.25] * 3)
    ln = ember.nn.LayerNorm(4)
    assert ln.weight.tolist() == [1.0] * 4 and ln.bias.tolist() == [0.0] * 4
    gn = ember.nn.GroupNorm(2, 4)
    assert gn.weight.tolist() == [1.0] * 4 and gn.bias.tolist() == [0.0] * 4


def test_factory_kwargs():
    m = ember.nn.Conv2d(2, 3, 3, dtype=ember.float64)
    assert m.weight.dtype is ember.float64 and m.bias.dtype is ember.float64
    assert ember.nn.Linear(2, 3, dtype=ember.float64).weight.dtype is ember.float64
    bn = ember.nn.BatchNorm1d(3, dtype=ember.float64)
    assert bn.running_mean.dtype is ember.float64 and bn.num_batches_tracked.dtype is ember.int64


# -- Embedding ---------------------------------------------------------------------------------
def test_embedding_padding_idx_gets_no_gradient():
    emb = ember.nn.Embedding(4, 3, padding_idx=0)
    out = emb(ember.tensor([[0, 1, 0, 2]]))
    out.sum().backward()
    g = emb.weight.grad.numpy()
    assert (g[0] == 0).all() and (g[1] == 1).all() and (g[3] == 0).all()


def test_embedding_from_pretrained():
    w = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    emb = ember.nn.Embedding.from_pretrained(w)
    assert not emb.weight.requires_grad
    assert emb(ember.tensor([1])).tolist() == [[3.0, 4.0]]
    assert ember.nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad
    assert (
        repr(ember.nn.Embedding.from_pretrained(w, padding_idx=1))
        == "Embedding(2, 2, padding_idx=1)"
    )


def test_embedding_max_norm_renormalizes_like_torch():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((6, 4)) * 2
    idx = np.array([[0, 2, 2], [5, 0, 1]])
    t = torch.nn.Embedding.from_pretrained(torch.tensor(w), freeze=False, max_norm=1.5)
    e = ember.nn.Embedding.from_pretrained(ember.tensor(w), freeze=False, max_norm=1.5)
    tout, eout = t(torch.tensor(idx)), e(ember.tensor(idx))
    _close(eout, tout, dict(rtol=1e-6, atol=1e-6), "output")
    _close(e.weight, t.weight, dict(rtol=1e-6, atol=1e-6), "renormalized weight")


# -- ConvTranspose2d output_size ---------------------------------------------------------------
@pytest.mark.parametrize("size", [(9, 9), (10, 10), (9, 10), [2, 6, 10, 9]])
def test_conv_transpose_output_size(size):
    torch.manual_seed(0)
    tmod = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1).double()
    emod = ember.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1).double()
    emod.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tmod.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 4, 5, 5))
    _close(
        emod(ember.tensor(x), output_size=size),
        tmod(torch.tensor(x), output_size=size),
        TIGHT,
        "output",
    )


def test_conv_transpose_output_size_unreachable():
    m = ember.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1)
    with pytest.raises(ember.ShapeError, match=r"ConvTranspose2d: requested output size"):
        m(ember.zeros(1, 4, 5, 5), output_size=(12, 12))


# -- errors name the module and the shapes -----------------------------------------------------
@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda nn: nn.Conv2d(16, 32, 3)(ember.zeros(64, 8, 14, 14)),
            ember.ShapeError,
            r"^Conv2d: expected input with 16 channels, got 8 \(input shape \(64, 8, 14, 14\)\)$",
        ),
        (
            lambda nn: nn.Conv2d(3, 4, 3)(ember.zeros(3, 5)),
            ember.ShapeError,
            r"^Conv2d: expected a 3-D \(unbatched\) or 4-D \(batched\) input, got shape \(3, 5\)",
        ),
        (
            lambda nn: nn.Conv2d(3, 4, 3)(ember.zeros(1, 3, 2, 2)),
            ember.ShapeError,
            r"^Conv2d: input \(1, 3, 2, 2\) .* smaller than the dilated kernel \(3, 3\)",
        ),
        (
            lambda nn: nn.Conv2d(3, 4, 3)(ember.zeros(1, 3, 5, 5, dtype=ember.float64)),
            ember.DTypeError,
            r"^Conv2d: expected input, weight and bias of one dtype",
        ),
        (
            lambda nn: nn.Conv1d(3, 4, 3)(ember.zeros(2, 4, 10)),
            ember.ShapeError,
            r"^Conv1d: expected input with 3 channels, got 4 \(input shape \(2, 4, 10\)\)",
        ),
        (
            lambda nn: nn.ConvTranspose2d(3, 4, 3)(ember.zeros(1, 2, 5, 5)),
            ember.ShapeError,
            r"^ConvTranspose2d: expected input with 3 channels, got 2",
        ),
        (
            lambda nn: nn.Linear(5, 3)(ember.zeros(2, 4)),
            ember.ShapeError,
            r"^Linear: expected input with 5 features \(last dimension\), got input shape \(2, 4\)",
        ),
        (
            lambda nn: nn.Linear(5, 3)(ember.zeros(2, 5, dtype=ember.float64)),
            ember.DTypeError,
            r"^Linear: expected input, weight and bias of one dtype",
        ),
        (
            lambda nn: nn.Bilinear(2, 3, 4)(ember.zeros(5, 2), ember.zeros(5, 4)),
            ember.ShapeError,
            r"^Bilinear: expected inputs \(\*, 2\) and \(\*, 3\)",
        ),
        (
            lambda nn: nn.BatchNorm2d(3)(ember.zeros(2, 4, 3, 3)),
            ember.ShapeError,
            r"^BatchNorm2d: expected input with 3 channels, got 4 \(input shape \(2, 4, 3, 3\)\)",
        ),
        (
            lambda nn: nn.BatchNorm2d(3)(ember.zeros(2, 3)),
            ember.ShapeError,
            r"^BatchNorm2d: expected 4D input \(got 2D input of shape \(2, 3\)\)",
        ),
        (
            lambda nn: nn.BatchNorm1d(3)(ember.zeros(1, 3)),
            ember.ShapeError,
            r"expected more than 1 value per channel when training, got input size \(1, 3\)",
        ),
        (
            lambda nn: nn.LayerNorm(5)(ember.zeros(2, 4)),
            ember.ShapeError,
            r"^LayerNorm: expected input with shape \[\*, 5\], but got input of size \(2, 4\)",
        ),
        (
            lambda nn: nn.GroupNorm(2, 4)(ember.zeros(2, 3, 4)),
            ember.ShapeError,
            r"^GroupNorm: expected input with 4 channels",
        ),
        (
            lambda nn: nn.InstanceNorm2d(3, affine=True)(ember.zeros(2, 4, 3, 3)),
            ember.ShapeError,
            r"^InstanceNorm2d: expected input with 3 channels, got 4",
        ),
        (
            lambda nn: nn.MaxPool2d(3)(ember.zeros(1, 1, 2, 2)),
            ember.ShapeError,
            r"^MaxPool2d: input \(1, 1, 2, 2\) is too small for kernel \(3, 3\)",
        ),
        (
            lambda nn: nn.MaxPool2d(2, padding=2)(ember.zeros(1, 1, 8, 8)),
            ember.ShapeError,
            r"^MaxPool2d: padding \(2, 2\) should be at most half of kernel size",
        ),
        (
            lambda nn: nn.AvgPool2d(3)(ember.zeros(1, 1, 2, 2)),
            ember.ShapeError,
            r"^AvgPool2d: input \(1, 1, 2, 2\) is too small for kernel \(3, 3\)",
        ),
        (
            lambda nn: nn.Embedding(3, 2)(ember.tensor([3])),
            ember.EmberIndexError,
            r"^Embedding: index 3 is out of range for an embedding of 3 rows",
        ),
        (
            lambda nn: nn.Embedding(3, 2)(ember.tensor([-1])),
            IndexError,
            r"^Embedding: index -1 is out of range",
        ),
        (
            lambda nn: nn.Embedding(3, 2)(ember.tensor([1.0])),
            ember.EmberError,
            r"^Embedding: expected integer indices, got ember.float32",
        ),
    ],
)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call(ember.nn)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda nn: nn.Conv2d(3, 4, 3, groups=2), r"in_channels must be divisible by groups"),
        (lambda nn: nn.Conv2d(4, 3, 3, groups=2), r"out_channels must be divisible by groups"),
        (lambda nn: nn.Conv2d(4, 4, 3, padding="full"), r"invalid padding string 'full'"),
        (lambda nn: nn.Conv2d(4, 4, 3, stride=2, padding="same"), r"not supported for strided"),
        (lambda nn: nn.Conv2d(4, 4, 3, padding_mode="mirror"), r"padding_mode must be one of"),
        (lambda nn: nn.ConvTranspose2d(4, 4, 3, padding_mode="reflect"), r'only "zeros" padding'),
        (
            lambda nn: nn.GroupNorm(3, 4),
            r"num_channels \(4\) must be divisible by num_groups \(3\)",
        ),
        (lambda nn: nn.Dropout(1.5), r"dropout probability has to be between 0 and 1, but got 1.5"),
        (lambda nn: nn.Hardtanh(1.0, -1.0), r"max_val \(-1.0\) must be greater than min_val"),
    ],
)
def test_constructor_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make(ember.nn)


# -- Dropout -----------------------------------------------------------------------------------
def test_dropout_statistics_and_scaling():
    ember.manual_seed(0)
    x = ember.ones(200, 500)
    out = ember.nn.Dropout(0.3)(x).numpy()
    kept = out != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(out[kept], 1 / 0.7, rtol=1e-6)
    assert abs(out.mean() - 1.0) < 0.02  # expectation preserved


def test_dropout_eval_is_identity_and_reproducible():
    m = ember.nn.Dropout(0.5)
    x = ember.randn(50, 50)
    assert m.eval()(x) is x
    m.train()
    ember.manual_seed(7)
    a = m(x).numpy()
    ember.manual_seed(7)
    b = m(x).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, m(x).numpy())


def test_dropout_gradient_is_the_mask():
    x = ember.ones(30, 40, requires_grad=True)
    out = ember.nn.Dropout(0.25)(x)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), out.detach().numpy())


def test_dropout_p1_and_inplace():
    x = ember.ones(4, 4)
    assert ember.nn.Dropout(1.0)(x).abs().sum().item() == 0
    y = ember.ones(100, 100)
    out = ember.nn.Dropout(0.5, inplace=True)(y)
    assert out is y and set(np.unique(y.numpy())) <= {0.0, 2.0}


def test_dropout2d_drops_whole_channels():
    ember.manual_seed(1)
    out = ember.nn.Dropout2d(0.5)(ember.ones(64, 32, 3, 3)).numpy()
    per_channel = out.reshape(64, 32, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all()
    assert abs((per_channel[..., 0] == 0).mean() - 0.5) < 0.05
