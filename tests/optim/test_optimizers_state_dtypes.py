"""Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD and LBFGS against torch.optim with copied weights,
state-dict round trips, and every optimizer on float16 / bfloat16 parameters."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

CASES = [
    ("Adamax", {}),
    ("Adamax", {"weight_decay": 0.1, "betas": (0.8, 0.99)}),
    ("NAdam", {}),
    ("NAdam", {"weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {}),
    ("RAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True, "betas": (0.9, 0.9)}),
    ("RAdam", {"betas": (0.5, 0.6)}),  # rectified from the third step
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "weight_decay": 0.1}),
    ("Rprop", {}),
    ("Rprop", {"etas": (0.3, 1.5), "step_sizes": (1e-3, 0.05)}),
    ("ASGD", {}),
    ("ASGD", {"t0": 3, "lambd": 0.1, "weight_decay": 0.05}),
]


def _models(dtype=torch.float64):
    torch.manual_seed(0)
    t = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
    e = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.Tanh(), ember.nn.Linear(3, 2)).double()
    e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t.to(dtype), e


def _run(t_model, e_model, t_opt, e_opt, steps, device, e_dtype=ember.float64):
    x = np.random.default_rng(0).standard_normal((5, 4))
    for _ in range(steps):
        for model, opt, xx in (
            (t_model, t_opt, torch.tensor(x).to(next(t_model.parameters()).dtype)),
            (e_model, e_opt, ember.tensor(x, device=device).to(e_dtype)),
        ):
            opt.zero_grad()
            out = model(xx)
            (out if e_dtype is ember.float64 else out.float()).sin().sum().backward()
            opt.step()


@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("name, kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_matches_torch(device, name, kw, maximize):
    t_model, e_model = _models()
    e_model.to(device)
    t_opt = getattr(torch.optim, name)(t_model.parameters(), maximize=maximize, **kw)
    e_opt = getattr(ember.optim, name)(e_model.parameters(), maximize=maximize, **kw)
    _run(t_model, e_model, t_opt, e_opt, 6, device)
    for (k, tp), ep in zip(t_model.state_dict().items(), e_model.state_dict().values()):
        np.testing.assert_allclose(ep.cpu().numpy(), tp.numpy(), rtol=1e-9, atol=1e-12, err_msg=k)


@pytest.mark.parametrize("name, kw", CASES[::2], ids=[n for n, _ in CASES[::2]])
def test_state_dict_round_trip_continues_identically(name, kw):
    _, a = _models()
    b = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.Tanh(), ember.nn.Linear(3, 2)).double()
    opt_a = getattr(ember.optim, name)(a.parameters(), **kw)
    x = ember.tensor(np.random.default_rng(1).standard_normal((5, 4)))
    for _ in range(3):
        opt_a.zero_grad()
        a(x).sin().sum().backward()
        opt_a.step()
    b.load_state_dict(a.state_dict())
    opt_b = getattr(ember.optim, name)(b.parameters(), **kw)
    opt_b.load_state_dict(opt_a.state_dict())
    for model, opt in ((a, opt_a), (b, opt_b)):
        for _ in range(3):
            opt.zero_grad()
            model(x).sin().sum().backward()
            opt.step()
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert pa.tolist() == pb.tolist()


LOW = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta",
       "Rprop", "ASGD"]  # fmt: skip


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", LOW)
def test_half_precision_parameters(device, dtype, name):
    if (name, dtype) == ("NAdam", "float16"):
        pytest.skip("eps=1e-8 underflows in float16: PyTorch's NAdam gives nan here too")
    kw = {"lr": 0.01}
    if name == "SGD":
        kw.update(momentum=0.9, nesterov=True, weight_decay=0.01)
    t_model, e_model = _models(getattr(torch, dtype))
    e_model.to(device).to(getattr(ember, dtype))
    t_opt = getattr(torch.optim, name)(t_model.parameters(), **kw)
    e_opt = getattr(ember.optim, name)(e_model.parameters(), **kw)
    _run(t_model, e_model, t_opt, e_opt, 4, device, getattr(ember, dtype))
    for tp, ep in zip(t_model.parameters(), e_model.parameters()):
        assert ep.dtype == getattr(ember, dtype)
        np.testing.assert_allclose(
            ep.detach().float().cpu().numpy(), tp.detach().float().numpy(), atol=0.03
        )


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda p: ember.optim.NAdam(p, lr=-1), "NAdam: invalid learning rate: -1"),
        (
            lambda p: ember.optim.RAdam(p, betas=(0.9, 1.0)),
            "RAdam: invalid beta parameter at index 1",
        ),
        (lambda p: ember.optim.Adadelta(p, rho=1.5), "Adadelta: invalid rho value: 1.5"),
        (lambda p: ember.optim.Rprop(p, etas=(1.2, 0.5)), "Rprop: invalid eta values"),
        (lambda p: ember.optim.Adamax(p, eps=-1), "Adamax: invalid eps value: -1"),
    ],
)
def test_bad_hyperparameters(make, match):
    with pytest.raises(ValueError, match=match):
        make([ember.nn.Parameter(ember.zeros(1))])


@pytest.mark.parametrize(
    "kw",
    [{}, {"line_search_fn": "strong_wolfe"}, {"lr": 0.5, "history_size": 3, "max_iter": 7}],
    ids=["fixed-step", "strong-wolfe", "short-history"],
)
def test_lbfgs_matches_torch(device, kw):
    t_model, e_model = _models()
    e_model.to(device)
    x = np.random.default_rng(0).standard_normal((5, 4))
    t_opt = torch.optim.LBFGS(t_model.parameters(), **kw)
    e_opt = ember.optim.LBFGS(e_model.parameters(), **kw)
    tx, ex = torch.tensor(x), ember.tensor(x, device=device)

    def closure(model, opt, xx):
        def run():
            opt.zero_grad()
            loss = (model(xx).sin() ** 2).sum()
            loss.backward()
            return loss

        return run

    for _ in range(3):
        t_loss = t_opt.step(closure(t_model, t_opt, tx))
        e_loss = e_opt.step(closure(e_model, e_opt, ex))
        assert e_loss.item() == pytest.approx(t_loss.item(), rel=1e-9)
    t_state, e_state = t_opt.state[next(iter(t_opt.state))], e_opt.state[e_model[0].weight]
    assert e_state["func_evals"] == t_state["func_evals"]
    assert e_state["n_iter"] == t_state["n_iter"]
    assert sorted(e_state) == sorted(t_state)  # the keys a checkpoint shows, 'al' included
    assert len(e_state["al"]) == len(t_state["al"]) == t_opt.param_groups[0]["history_size"]
    for (k, tp), ep in zip(t_model.state_dict().items(), e_model.state_dict().values()):
        np.testing.assert_allclose(ep.cpu().numpy(), tp.numpy(), rtol=1e-8, atol=1e-10, err_msg=k)


def test_lbfgs_errors():
    p = [ember.nn.Parameter(ember.zeros(1))]
    with pytest.raises(ValueError, match="LBFGS: only 'strong_wolfe' is supported"):
        ember.optim.LBFGS(p, line_search_fn="armijo")
    q = [ember.nn.Parameter(ember.zeros(1))]
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        ember.optim.LBFGS([{"params": p}, {"params": q}])
