"""LR schedulers against PyTorch 2.13: the same lr sequence, step by step."""

import pytest

import ember

torch = pytest.importorskip("torch")


def _opt(mod, name="SGD", groups=1, **kw):
    params = [[mod.zeros(1, requires_grad=True)] for _ in range(groups)]
    return getattr(mod.optim, name)(
        [{"params": p, "lr": 0.1 * (i + 1)} for i, p in enumerate(params)], lr=0.1, **kw
    )


SCHEDULES = [
    ("StepLR", dict(step_size=3, gamma=0.5), {}),
    ("MultiStepLR", dict(milestones=[2, 5, 5, 8], gamma=0.3), {}),
    ("ExponentialLR", dict(gamma=0.9), {}),
    ("CosineAnnealingLR", dict(T_max=5, eta_min=0.01), {}),
    ("LinearLR", dict(start_factor=0.25, end_factor=1.0, total_iters=4), {}),
    ("LambdaLR", dict(lr_lambda=lambda e: 0.95**e), {}),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=20), {"momentum": 0.9}),
    (
        "OneCycleLR",
        dict(max_lr=[1.0, 2.0], total_steps=20, three_phase=True, anneal_strategy="linear"),
        {"momentum": 0.9},
    ),
]


@pytest.mark.parametrize(
    "name,kwargs,opt_kw", SCHEDULES, ids=[s[0] + str(i) for i, s in enumerate(SCHEDULES)]
)
def test_lr_sequence_matches_torch(name, kwargs, opt_kw):
    seqs = []
    for mod in (ember, torch):
        opt = _opt(mod, groups=2, **opt_kw)
        sched = getattr(mod.optim.lr_scheduler, name)(opt, **kwargs)
        seq = []
        for _ in range(19 if name == "OneCycleLR" else 12):
            opt.step()
            sched.step()
            seq.extend(list(sched.get_last_lr()) + [g.get("momentum", 0) for g in opt.param_groups])
        seqs.append(seq)
    assert seqs[0] == pytest.approx(seqs[1], rel=1e-12, abs=1e-15)


def test_one_cycle_cycles_adam_beta1_like_torch():
    seqs = []
    for mod in (ember, torch):
        opt = mod.optim.Adam([mod.zeros(1, requires_grad=True)], lr=0.1)
        sched = mod.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.5, epochs=2, steps_per_epoch=5)
        seq = []
        for _ in range(9):
            opt.step()
            sched.step()
            seq.extend((sched.get_last_lr()[0], opt.param_groups[0]["betas"][0]))
        seqs.append(seq)
    assert seqs[0] == pytest.approx(seqs[1])


def test_sequential_lr_matches_torch():
    seqs = []
    for mod in (ember, torch):
        opt = _opt(mod)
        s1 = mod.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=3)
        s2 = mod.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
        sched = mod.optim.lr_scheduler.SequentialLR(opt, [s1, s2], milestones=[3])
        seq = []
        for _ in range(8):
            opt.step()
            sched.step()
            seq.append(sched.get_last_lr()[0])
        seqs.append(seq)
    assert seqs[0] == pytest.approx(seqs[1])


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(),
        dict(mode="max", patience=1, cooldown=2),
        dict(threshold_mode="abs", threshold=0.5, patience=0, min_lr=0.02),
    ],
)
def test_reduce_on_plateau_matches_torch(kwargs):
    metrics = [5, 4, 4, 4.5, 4, 3.9, 3.99, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2, 2, 2]
    seqs = []
    for mod in (ember, torch):
        opt = _opt(mod)
        sched = mod.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        seq = []
        for m in metrics:
            opt.step()
            sched.step(m)
            seq.append(opt.param_groups[0]["lr"])
        seqs.append(seq)
    assert seqs[0] == pytest.approx(seqs[1])


def test_state_dict_resumes_the_schedule():
    opt = _opt(ember)
    sched = ember.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    for _ in range(4):
        opt.step()
        sched.step()
    state = sched.state_dict()
    opt2 = _opt(ember)
    opt2.param_groups[0]["lr"] = opt.param_groups[0]["lr"]
    opt2.param_groups[0]["initial_lr"] = 0.1
    sched2 = ember.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=10, last_epoch=3)
    sched2.load_state_dict(state)
    opt2.param_groups[0]["lr"] = opt.param_groups[0]["lr"]
    for s, o in ((sched, opt), (sched2, opt2)):
        o.step()
        s.step()
    assert sched.get_last_lr() == pytest.approx(sched2.get_last_lr())


def test_one_cycle_overstep_and_bad_args_are_named():
    opt = _opt(ember, momentum=0.9)
    sched = ember.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=2)
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="tried to step 3 times"):
        sched.step()
    with pytest.raises(ValueError, match="total_steps OR"):
        ember.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0)
