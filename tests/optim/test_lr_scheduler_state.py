"""MultiplicativeLR, ConstantLR, PolynomialLR, CosineAnnealingWarmRestarts, CyclicLR and
ChainedScheduler: learning-rate (and momentum) sequences against torch, state round trips."""

import pytest

import ember

torch = pytest.importorskip("torch")


def _opts(kind="SGD", **kw):
    tp, ep = torch.nn.Parameter(torch.zeros(1)), ember.nn.Parameter(ember.zeros(1))
    tp2, ep2 = torch.nn.Parameter(torch.zeros(1)), ember.nn.Parameter(ember.zeros(1))
    t = getattr(torch.optim, kind)([{"params": [tp]}, {"params": [tp2], "lr": 0.3}], lr=0.1, **kw)
    e = getattr(ember.optim, kind)([{"params": [ep]}, {"params": [ep2], "lr": 0.3}], lr=0.1, **kw)
    return t, e


CASES = [
    (
        "MultiplicativeLR",
        lambda L, o: L.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 0.95),
        "SGD",
        {},
    ),
    ("ConstantLR", lambda L, o: L.ConstantLR(o, factor=0.3, total_iters=4), "SGD", {}),
    ("PolynomialLR", lambda L, o: L.PolynomialLR(o, total_iters=7, power=2.0), "SGD", {}),
    (
        "CosineAnnealingWarmRestarts",
        lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01),
        "SGD",
        {},
    ),
    (
        "CosineAnnealingWarmRestarts-1",
        lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=4),
        "SGD",
        {},
    ),
    (
        "CyclicLR",
        lambda L, o: L.CyclicLR(o, 0.01, [0.2, 0.5], step_size_up=3, step_size_down=2),
        "SGD",
        {"momentum": 0.9},
    ),
    (
        "CyclicLR-tri2",
        lambda L, o: L.CyclicLR(o, 0.01, 0.2, step_size_up=2, mode="triangular2"),
        "SGD",
        {"momentum": 0.5},
    ),
    (
        "CyclicLR-exp",
        lambda L, o: L.CyclicLR(
            o, 0.01, 0.2, step_size_up=2, mode="exp_range", gamma=0.9, cycle_momentum=False
        ),
        "SGD",
        {},
    ),
    ("CyclicLR-adam", lambda L, o: L.CyclicLR(o, 0.01, 0.2, step_size_up=3), "Adam", {}),
    (
        "Chained",
        lambda L, o: L.ChainedScheduler([L.ConstantLR(o, 0.5, 3), L.ExponentialLR(o, 0.9)]),
        "SGD",
        {},
    ),
]


@pytest.mark.parametrize("name, make, kind, kw", CASES, ids=[c[0] for c in CASES])
def test_sequences_match_torch(name, make, kind, kw):
    t_opt, e_opt = _opts(kind, **kw)
    ts = make(torch.optim.lr_scheduler, t_opt)
    es = make(ember.optim.lr_scheduler, e_opt)
    for step in range(25):
        for tg, eg in zip(t_opt.param_groups, e_opt.param_groups):
            assert eg["lr"] == pytest.approx(tg["lr"], rel=1e-12, abs=1e-15), (step, name)
            for key in ("momentum", "betas"):
                if key in tg:
                    assert eg[key] == pytest.approx(tg[key], rel=1e-12), (step, key)
        assert es.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-12)
        t_opt.step()
        e_opt.step()
        ts.step()
        es.step()


def test_warm_restarts_fractional_epochs_match_torch():
    t_opt, e_opt = _opts()
    ts = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(t_opt, T_0=2, T_mult=2)
    es = ember.optim.lr_scheduler.CosineAnnealingWarmRestarts(e_opt, T_0=2, T_mult=2)
    for epoch in [0.5, 1.0, 2.25, 3.9, 6.0, 7.5, 20.0]:
        ts.step(epoch)
        es.step(epoch)
        assert es.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-12)


@pytest.mark.parametrize("name, make, kind, kw", CASES[:6], ids=[c[0] for c in CASES[:6]])
def test_state_dict_round_trip(name, make, kind, kw):
    _, e_opt = _opts(kind, **kw)
    a = make(ember.optim.lr_scheduler, e_opt)
    for _ in range(5):
        e_opt.step()
        a.step()
    state = a.state_dict()
    _, e_opt2 = _opts(kind, **kw)
    b = make(ember.optim.lr_scheduler, e_opt2)
    b.load_state_dict(state)
    e_opt2.load_state_dict(e_opt.state_dict())
    for _ in range(5):
        for opt, s in ((e_opt, a), (e_opt2, b)):
            opt.step()
            s.step()
        assert a.get_last_lr() == b.get_last_lr()


def test_errors():
    _, e_opt = _opts()
    L = ember.optim.lr_scheduler
    with pytest.raises(
        ValueError, match="Constant multiplicative factor expected to be between 0 and 1"
    ):
        L.ConstantLR(e_opt, factor=2.0)
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        L.CosineAnnealingWarmRestarts(e_opt, T_0=0)
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        L.CyclicLR(e_opt, 0.1, 1.0, mode="sine")
    plain = ember.optim.Adagrad([ember.nn.Parameter(ember.zeros(1))])
    with pytest.raises(ValueError, match="optimizer must support momentum"):
        L.CyclicLR(plain, 0.1, 1.0)
