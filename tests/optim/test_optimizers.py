"""Optimizers against PyTorch 2.13: same start, same gradients, several steps, same weights."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.5, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.01)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
]


def _loss(mod, w, b, x):
    return ((mod.tanh(x @ w) * b).sum() ** 2) / 10 + (w * w).sum()


def _run(mod, name, kwargs, arrays, steps, dtype, device="cpu"):
    w0, b0, x0 = arrays
    w = mod.tensor(w0.astype(dtype), requires_grad=True, device=device)
    b = mod.tensor(b0.astype(dtype), requires_grad=True, device=device)
    x = mod.tensor(x0.astype(dtype), device=device)
    opt = getattr(mod.optim, name)([w, b], **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        _loss(mod, w, b, x).backward()
        opt.step()
    if mod is ember:
        _check_on(device, w, b, opt)
    return w.detach().cpu().numpy().copy(), b.detach().cpu().numpy().copy(), opt


def _check_on(device, *tensors_and_opts):
    """Parameters and the optimizer's tensor state stay on ``device``."""
    want = ember.device(device).type
    for x in tensors_and_opts:
        if isinstance(x, ember.Tensor):
            assert x.device.type == want
            continue
        for st in x.state.values():
            for v in st.values():
                if isinstance(v, ember.Tensor) and v.ndim:
                    assert v.device.type == want, v


@pytest.mark.parametrize(
    "name,kwargs", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)]
)
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 1e-5)])
def test_matches_torch(name, kwargs, dtype, tol, device):
    rng = np.random.default_rng(0)
    arrays = (rng.standard_normal((4, 3)), rng.standard_normal(3), rng.standard_normal((5, 4)))
    ew, eb, _ = _run(ember, name, kwargs, arrays, 6, dtype, device)
    tw, tb, _ = _run(torch, name, kwargs, arrays, 6, dtype)
    np.testing.assert_allclose(ew, tw, rtol=tol, atol=tol)
    np.testing.assert_allclose(eb, tb, rtol=tol, atol=tol)


@pytest.mark.parametrize("name,kwargs", CONFIGS[1::3], ids=lambda v: str(v))
def test_state_dict_round_trip_continues_identically(name, kwargs, device):
    rng = np.random.default_rng(1)
    arrays = (rng.standard_normal((4, 3)), rng.standard_normal(3), rng.standard_normal((5, 4)))
    _, _, opt = _run(ember, name, kwargs, arrays, 3, np.float64, device)
    sd = opt.state_dict()
    assert sorted(sd) == ["param_groups", "state"]
    assert sd["param_groups"][0]["params"] == [0, 1]
    w = opt.param_groups[0]["params"][0]
    b = opt.param_groups[0]["params"][1]
    w2 = w.detach().clone().requires_grad_()
    b2 = b.detach().clone().requires_grad_()
    opt2 = getattr(ember.optim, name)([w2, b2], **kwargs)
    opt2.load_state_dict(sd)
    x = ember.tensor(arrays[2], device=device)
    for o, ww, bb in ((opt, w, b), (opt2, w2, b2)):
        o.zero_grad()
        _loss(ember, ww, bb, x).backward()
        o.step()
    _check_on(device, w2, b2, opt2)
    np.testing.assert_array_equal(w.detach().cpu().numpy(), w2.detach().cpu().numpy())


def test_step_count_is_a_float_tensor_in_state_dict_like_torch():
    w = ember.tensor([1.0], requires_grad=True)
    opt = ember.optim.Adam([w])
    (w * 2).sum().backward()
    opt.step()
    step = opt.state_dict()["state"][0]["step"]
    assert isinstance(step, ember.Tensor) and step.item() == 1.0


def test_param_groups_have_their_own_hyperparameters():
    a = ember.tensor([1.0], requires_grad=True)
    b = ember.tensor([1.0], requires_grad=True)
    opt = ember.optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    (a + b).sum().backward()
    opt.step()
    assert a.item() == pytest.approx(0.9) and b.item() == pytest.approx(0.0)


def test_zero_grad_set_to_none_and_zeroing():
    w = ember.tensor([1.0], requires_grad=True)
    opt = ember.optim.SGD([w], lr=0.1)
    (w * 3).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [0.0]
    opt.zero_grad()
    assert w.grad is None


def test_step_with_closure_returns_loss():
    w = ember.tensor([2.0], requires_grad=True)
    opt = ember.optim.SGD([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 4.0
    assert w.item() == pytest.approx(1.6)


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda p: ember.optim.SGD(p, lr=-1), "invalid learning rate"),
        (lambda p: ember.optim.SGD(p, lr=0.1, nesterov=True), "Nesterov"),
        (lambda p: ember.optim.Adam(p, betas=(1.0, 0.9)), "beta parameter at index 0"),
        (lambda p: ember.optim.SGD([], lr=0.1), "empty parameter list"),
        (lambda p: ember.optim.SGD(p[0], lr=0.1), "iterable of Tensors"),
    ],
)
def test_bad_arguments_name_the_problem(make, match):
    params = [ember.tensor([1.0], requires_grad=True)]
    with pytest.raises((ValueError, TypeError), match=match):
        make(params)


def test_a_parameter_in_two_groups_is_refused():
    w = ember.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="more than one parameter group"):
        ember.optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
