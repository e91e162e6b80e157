"""weight_norm / spectral_norm (and their remove_*) against torch.nn.utils with the same
parameters and buffers: outputs, the gradients of inputs and parameters, the power-iteration
buffers, and the plain parameter left behind by remove_*."""

import warnings

import numpy as np
import pytest
import torch

import ember
from ember.nn.utils import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm
from ember.nn.utils.weight_norm import norm_except_dim

TOL = dict(rtol=1e-9, atol=1e-10)

MODULES = {
    "linear": (lambda m: m.Linear(5, 4), (3, 5)),
    "conv1d": (lambda m: m.Conv1d(2, 3, 3), (2, 2, 6)),
    "conv2d": (lambda m: m.Conv2d(2, 4, (3, 2)), (2, 2, 5, 4)),
    "convt1d": (lambda m: m.ConvTranspose1d(3, 2, 3), (2, 3, 4)),
}


def _module_pair(kind, device, apply_t, apply_e):
    """A torch module and an ember one (float64) with ``apply_*`` applied, the ember one
    holding torch's parameters and buffers."""
    make, in_shape = MODULES[kind]
    tm = apply_t(make(torch.nn).double())
    em = apply_e(make(ember.nn).double())
    rng = np.random.default_rng(7)
    with torch.no_grad():
        for p in tm.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape))))
    t_state = tm.state_dict()
    assert [(k, tuple(v.shape)) for k, v in em.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in t_state.items()
    ]
    em.load_state_dict(t_state)
    return tm, em.to(device), rng.standard_normal(in_shape)


def _forward_backward(tm, em, x, device):
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, device=device, requires_grad=True)
    t_out, e_out = tm(tx), em(ex)
    assert e_out.device.type == device
    np.testing.assert_allclose(e_out.detach().cpu().numpy(), t_out.detach().numpy(), **TOL)
    w = np.random.default_rng(1).standard_normal(tuple(t_out.shape))
    (t_out * torch.tensor(w)).sum().backward()
    (e_out * ember.tensor(w, device=device)).sum().backward()
    np.testing.assert_allclose(ex.grad.cpu().numpy(), tx.grad.numpy(), **TOL)
    e_params = dict(em.named_parameters())
    t_params = dict(tm.named_parameters())
    assert list(e_params) == list(t_params)
    for name, p in t_params.items():
        np.testing.assert_allclose(
            e_params[name].grad.cpu().numpy(), p.grad.numpy(), err_msg=name, **TOL
        )


def _torch_weight_norm(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return torch.nn.utils.weight_norm(*args, **kw)


@pytest.mark.parametrize(
    "kind,kw",
    [
        ("linear", {}),
        ("linear", dict(dim=1)),
        ("linear", dict(dim=None)),
        ("linear", dict(name="bias")),
        ("conv1d", dict(dim=-1)),  # -1 means the whole tensor in PyTorch
        ("conv2d", {}),
        ("conv2d", dict(dim=2)),
        ("conv2d", dict(dim=-2)),
        ("conv2d", dict(dim=3)),
        ("convt1d", dict(dim=1)),
    ],
)
def test_weight_norm_matches_torch(device, kind, kw):
    tm, em, x = _module_pair(
        kind, device, lambda m: _torch_weight_norm(m, **kw), lambda m: weight_norm(m, **kw)
    )
    name = kw.get("name", "weight")
    _forward_backward(tm, em, x, device)
    assert not isinstance(getattr(em, name), ember.nn.Parameter)
    # a training step on g and v changes the weight used by the next forward
    for mod in (tm, em):
        for p in mod.parameters():
            with torch.no_grad() if mod is tm else ember.no_grad():
                p -= 0.1 * p.grad
            p.grad = None
    _forward_backward(tm, em, x, device)
    remove_weight_norm(em, name)
    torch.nn.utils.remove_weight_norm(tm, name)
    assert isinstance(getattr(em, name), ember.nn.Parameter)
    assert list(em.state_dict()) == list(tm.state_dict())
    np.testing.assert_allclose(
        getattr(em, name).detach().cpu().numpy(), getattr(tm, name).detach().numpy(), **TOL
    )
    assert not em._forward_pre_hooks


@pytest.mark.parametrize(
    "kind,kw,n_forward",
    [
        ("linear", {}, 2),
        ("linear", dict(n_power_iterations=3, eps=1e-6), 2),
        ("linear", dict(dim=1), 1),
        ("conv2d", {}, 2),
        ("conv2d", dict(dim=2, n_power_iterations=2), 1),
        ("convt1d", {}, 2),  # dim defaults to 1 for transposed convolutions
    ],
)
def test_spectral_norm_matches_torch(device, kind, kw, n_forward):
    tm, em, x = _module_pair(
        kind,
        device,
        lambda m: torch.nn.utils.spectral_norm(m, **kw),
        lambda m: spectral_norm(m, **kw),
    )
    hook = next(iter(em._forward_pre_hooks.values()))
    assert hook.dim == next(iter(tm._forward_pre_hooks.values())).dim
    for mode in ["train"] * n_forward + ["eval"]:
        tm.train(mode == "train")
        em.train(mode == "train")
        for mod in (tm, em):
            mod.zero_grad()
        _forward_backward(tm, em, x, device)
        for buf in ("weight_u", "weight_v"):  # the power iteration updates them in place
            np.testing.assert_allclose(
                getattr(em, buf).cpu().numpy(), getattr(tm, buf).numpy(), err_msg=buf, **TOL
            )
            assert getattr(em, buf).device.type == device
    remove_spectral_norm(em)
    torch.nn.utils.remove_spectral_norm(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    np.testing.assert_allclose(em.weight.detach().cpu().numpy(), tm.weight.detach().numpy(), **TOL)
    assert not em._forward_pre_hooks


def test_spectral_norm_divides_by_the_largest_singular_value(device):
    m = spectral_norm(ember.nn.Linear(6, 5).double().to(device), n_power_iterations=30)
    m(ember.zeros(1, 6, dtype=ember.float64, device=device))
    sigma = np.linalg.svd(m.weight.detach().cpu().numpy(), compute_uv=False)[0]
    assert abs(sigma - 1.0) < 1e-6
    orig = np.linalg.svd(m.weight_orig.detach().cpu().numpy(), compute_uv=False)[0]
    assert abs(orig - 1.0) > 1e-2  # the raw weight is not normalized itself
    u = m.weight_u.clone()
    m.eval()(ember.zeros(1, 6, dtype=ember.float64, device=device))
    np.testing.assert_array_equal(m.weight_u.cpu().numpy(), u.cpu().numpy())  # no update in eval


def test_norm_except_dim_matches_torch(device):
    rng = np.random.default_rng(0)
    v = rng.standard_normal((3, 4, 2))
    for dim in (0, 1, 2, -1, -2):
        want = torch.norm_except_dim(torch.tensor(v), 2, dim)
        got = norm_except_dim(ember.tensor(v, device=device), 2, dim)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), **TOL)
    want = torch.norm_except_dim(torch.tensor(v), 3, 1)
    np.testing.assert_allclose(norm_except_dim(ember.tensor(v), 3, 1).numpy(), want.numpy(), **TOL)


def test_gradcheck(device):
    from ember.nn.utils.weight_norm import _weight_norm

    kw = dict(dtype=ember.float64, device=device, requires_grad=True)
    v, g = ember.randn(3, 4, **kw), ember.randn(3, 1, **kw)
    assert ember.autograd.gradcheck(lambda v, g: _weight_norm(v, g, 0), (v, g))
    assert ember.autograd.gradgradcheck(lambda v, g: _weight_norm(v, g, 0), (v, g))
    m = spectral_norm(ember.nn.Linear(4, 3).double().to(device))
    hook = next(iter(m._forward_pre_hooks.values()))
    w = m.weight_orig.detach().clone().requires_grad_(True)

    def normalized(w):
        return hook.compute_weight(_Attrs(w, m.weight_u, m.weight_v), False)

    assert ember.autograd.gradcheck(normalized, (w,))
    assert ember.autograd.gradgradcheck(normalized, (w,))


class _Attrs:
    """A stand-in module holding the three tensors SpectralNorm.compute_weight reads."""

    def __init__(self, orig, u, v):
        self.weight_orig, self.weight_u, self.weight_v = orig, u, v


def test_errors():
    m = weight_norm(ember.nn.Linear(3, 2))
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks .* weight"):
        weight_norm(m)
    with pytest.raises(ValueError, match="weight_norm of 'bias' not found in Linear"):
        remove_weight_norm(m, "bias")
    with pytest.raises(IndexError, match=r"dim 2 is out of range .* shape \(2, 3\)"):
        weight_norm(ember.nn.Linear(3, 2), dim=2)
    with pytest.raises(ValueError, match="Linear has no parameter 'kernel'"):
        weight_norm(ember.nn.Linear(3, 2), name="kernel")
    s = spectral_norm(ember.nn.Linear(3, 2))
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        spectral_norm(s)
    with pytest.raises(ValueError, match="spectral_norm of 'bias' not found"):
        remove_spectral_norm(s, "bias")
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive, but got"):
        spectral_norm(ember.nn.Linear(3, 2), n_power_iterations=0)
    with pytest.raises(ValueError, match="parameter `bias` is None"):
        spectral_norm(ember.nn.Linear(3, 2, bias=False), name="bias")


def test_both_on_one_module_and_state_dict_round_trip(device):
    m = ember.nn.Linear(4, 3).to(device)
    weight_norm(m, "weight")
    spectral_norm(m, "bias", dim=0)
    assert list(m.state_dict()) == ["weight_g", "weight_v", "bias_orig", "bias_u", "bias_v"]
    out = m(ember.randn(2, 4, device=device))
    assert out.device.type == device
    other = weight_norm(ember.nn.Linear(4, 3))
    spectral_norm(other, "bias", dim=0)
    other.load_state_dict(m.state_dict())
    m.eval(), other.eval()
    x = ember.randn(2, 4, device=device)
    np.testing.assert_allclose(
        m(x).detach().cpu().numpy(), other.to(device)(x).detach().cpu().numpy()
    )
