"""RMSNorm, LocalResponseNorm, AdaptiveMaxPool1d/2d, Dropout1d/3d, Unfold/Fold, EmbeddingBag,
gumbel_softmax, pdist, Conv3d, LazyLinear against torch with copied weights, each with its own
test rather than a row of test_layers.py's table."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

MODULES = [
    ("RMSNorm", ((4,),), {}, (2, 3, 4)),
    ("RMSNorm", ((3, 4),), {"eps": 1e-3, "elementwise_affine": False}, (2, 3, 4)),
    ("LocalResponseNorm", (3,), {}, (2, 5, 4, 4)),
    ("LocalResponseNorm", (2,), {"alpha": 0.1, "beta": 0.5, "k": 2.0}, (2, 4, 6)),
    ("AdaptiveMaxPool2d", ((2, 3),), {}, (2, 3, 5, 7)),
    ("AdaptiveMaxPool2d", ((None, 2),), {}, (3, 5, 4)),
    ("AdaptiveMaxPool1d", (3,), {}, (2, 3, 8)),
    ("Unfold", (2,), {"padding": 1, "stride": 2}, (2, 3, 5, 5)),
    ("Fold", ((4, 5), 2), {"dilation": 1}, (2, 12, 12)),
]


@pytest.mark.parametrize(
    "name, args, kw, shape", MODULES, ids=[f"{m[0]}-{i}" for i, m in enumerate(MODULES)]
)
def test_modules_match_torch(device, name, args, kw, shape):
    torch.manual_seed(0)
    t_mod = getattr(torch.nn, name)(*args, **kw).double()
    e_mod = getattr(ember.nn, name)(*args, **kw).double()
    for p in t_mod.parameters():
        with torch.no_grad():
            p.uniform_(0.5, 1.5)
    e_mod.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t_mod.state_dict().items()})
    e_mod.to(device)
    assert repr(e_mod) == repr(t_mod)
    rng = np.random.default_rng(0)
    x = rng.permutation(int(np.prod(shape))).reshape(shape) / 10.0 - 1.0
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, device=device, requires_grad=True)
    want, got = t_mod(tx), e_mod(ex)
    np.testing.assert_allclose(
        got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-12
    )
    w = rng.standard_normal(tuple(want.shape))
    (want * torch.tensor(w)).sum().backward()
    (got * ember.tensor(w, device=device)).sum().backward()
    np.testing.assert_allclose(ex.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)
    for (k, tp), ep in zip(t_mod.named_parameters(), e_mod.parameters()):
        np.testing.assert_allclose(ep.grad.cpu().numpy(), tp.grad.numpy(), rtol=1e-9, err_msg=k)


def test_adaptive_max_pool_indices(device):
    x = np.random.default_rng(1).permutation(70).reshape(1, 2, 5, 7).astype(np.float64)
    _, ti = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), (2, 3), return_indices=True)
    _, ei = ember.nn.functional.adaptive_max_pool2d(
        ember.tensor(x, device=device), (2, 3), return_indices=True
    )
    assert ei.cpu().tolist() == ti.tolist()


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("layout", ["2d", "offsets", "last_offset", "padding"])
def test_embedding_bag(device, mode, layout):
    torch.manual_seed(0)
    kw = {"mode": mode}
    if layout == "last_offset":
        kw["include_last_offset"] = True
    if layout == "padding":
        kw["padding_idx"] = 2
    t_mod = torch.nn.EmbeddingBag(10, 3, **kw).double()
    e_mod = ember.nn.EmbeddingBag(10, 3, **kw).double()
    e_mod.load_state_dict(
        {k: ember.tensor(v.detach().numpy()) for k, v in t_mod.state_dict().items()}
    )
    e_mod.to(device)
    if layout == "2d":
        t_args = (torch.tensor([[1, 2, 4], [4, 3, 9]]),)
    else:
        offsets = [0, 2, 2, 4] if layout == "last_offset" else [0, 2, 2]
        t_args = (torch.tensor([1, 2, 4, 5, 4, 2, 9]), torch.tensor(offsets))
    e_args = tuple(ember.tensor(a.numpy(), device=device) for a in t_args)
    want, got = t_mod(*t_args), e_mod(*e_args)
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-12)
    want.sum().backward()
    got.sum().backward()
    np.testing.assert_allclose(
        e_mod.weight.grad.cpu().numpy(), t_mod.weight.grad.numpy(), rtol=1e-12
    )


def test_channel_dropouts_and_gumbel(device):
    x = ember.ones(4, 50, 3, device=device)
    y = ember.nn.Dropout1d(0.5)(x)
    per_channel = y.cpu().numpy()
    assert set(np.unique(per_channel).tolist()) <= {0.0, 2.0}
    assert (per_channel.min(-1) == per_channel.max(-1)).all()  # whole channels
    z = ember.nn.Dropout3d(0.5)(ember.ones(2, 40, 2, 2, 2, device=device)).cpu().numpy()
    assert (z.reshape(2, 40, -1).min(-1) == z.reshape(2, 40, -1).max(-1)).all()
    assert ember.nn.Dropout1d(0.5).eval()(x).cpu().tolist() == x.cpu().tolist()
    logits = ember.tensor([[5.0, 0.0, 0.0]] * 2000, device=device, requires_grad=True)
    hard = ember.nn.functional.gumbel_softmax(logits, tau=0.5, hard=True)
    assert hard.sum(-1).cpu().tolist() == [1.0] * 2000
    assert 0.95 < hard[:, 0].mean().item() < 1.0
    hard[:, 0].sum().backward()
    assert logits.grad is not None and bool(logits.grad.isfinite().all())


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf")])
def test_pdist(device, p):
    x = np.random.default_rng(3).standard_normal((5, 3))
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, device=device, requires_grad=True)
    want, got = torch.nn.functional.pdist(tx, p), ember.nn.functional.pdist(ex, p)
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-12)
    want.sum().backward()
    got.sum().backward()
    np.testing.assert_allclose(ex.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-10)


def test_errors():
    with pytest.raises(
        ember.ShapeError,
        match=r"^RMSNorm: (rms_norm: )?normalized_shape \(4,\) does not match",
    ):
        ember.nn.RMSNorm(4)(ember.ones(2, 3))
    with pytest.raises(ember.ShapeError, match=r"AdaptiveMaxPool2d: .*expected 3D or 4D input"):
        ember.nn.AdaptiveMaxPool2d(2)(ember.ones(2))
    with pytest.raises(ember.ShapeError, match="EmbeddingBag: offsets has to be a 1D tensor"):
        ember.nn.EmbeddingBag(3, 2)(ember.tensor([0, 1]))
    with pytest.raises(
        ember.ShapeError, match=r"pdist: only supports 2D tensors, got shape \(3,\)"
    ):
        ember.nn.functional.pdist(ember.ones(3))


CONV3D = [
    ({}, 2, 3, 1),
    ({"stride": 2, "padding": 1}, 2, 4, 1),
    ({"padding": "same", "dilation": (2, 1, 1)}, 4, 4, 2),
    ({"stride": (1, 2, 1), "padding": (1, 0, 2), "padding_mode": "reflect"}, 2, 2, 1),
    ({"bias": False}, 4, 6, 2),
]


@pytest.mark.parametrize("kw, cin, cout, groups", CONV3D, ids=[str(i) for i in range(len(CONV3D))])
def test_conv3d_matches_torch(device, kw, cin, cout, groups):
    torch.manual_seed(0)
    t = torch.nn.Conv3d(cin, cout, 3, groups=groups, **kw).double()
    e = ember.nn.Conv3d(cin, cout, 3, groups=groups, **kw).double()
    e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    e.to(device)
    assert repr(e) == repr(t)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, cin, 5, 6, 7))
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, device=device, requires_grad=True)
    want, got = t(tx), e(ex)
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), atol=1e-10)
    w = rng.standard_normal(tuple(want.shape))
    (want * torch.tensor(w)).sum().backward()
    (got * ember.tensor(w, device=device)).sum().backward()
    np.testing.assert_allclose(ex.grad.cpu().numpy(), tx.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(e.weight.grad.cpu().numpy(), t.weight.grad.numpy(), atol=1e-9)


def test_conv3d_errors():
    with pytest.raises(ember.ShapeError, match=r"Conv3d: expected input with 2 channels, got 3"):
        ember.nn.Conv3d(2, 4, 3)(ember.ones(1, 3, 4, 4, 4))
    with pytest.raises(
        ember.ShapeError, match="conv3d: kernel depth 3 .* larger than the padded input depth 2"
    ):
        ember.nn.functional.conv3d(ember.ones(1, 1, 2, 4, 4), ember.ones(1, 1, 3, 3, 3))


def test_lazy_linear_materializes_on_first_call(device):
    model = ember.nn.Sequential(ember.nn.LazyLinear(4), ember.nn.ReLU(), ember.nn.LazyLinear(2))
    model.to(device)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)  # made before the shapes are known
    before = [id(p) for p in model.parameters()]
    x = ember.randn(3, 7, device=device)
    model(x).sum().backward()
    opt.step()
    assert [id(p) for p in model.parameters()] == before
    assert type(model[0]) is ember.nn.Linear and model[0].in_features == 7
    assert tuple(model[2].weight.shape) == (2, 4) and model[0].weight.grad is not None
    t = torch.nn.Linear(7, 4)
    t.load_state_dict({k: torch.tensor(v.cpu().numpy()) for k, v in model[0].state_dict().items()})
    np.testing.assert_allclose(
        model[0](x).detach().cpu().numpy(),
        t(torch.tensor(x.cpu().numpy())).detach().numpy(),
        rtol=1e-5,
    )
