"""optim.swa_utils against torch.optim.swa_utils: SWALR's lrs step by step, AveragedModel's
averages (equal weight, EMA, avg_fn, use_buffers), update_bn's recomputed statistics."""

import numpy as np
import pytest
import torch
import torch.optim.swa_utils

import ember
import ember.optim.swa_utils


def _models(lib):
    m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3), lib.nn.Linear(3, 1))
    with lib.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(lib.tensor(np.sin(np.arange(p.numel()) + i).reshape(tuple(p.shape)),
                               dtype=lib.float32))  # fmt: skip
    return m


def _shift(lib, m, step):
    with lib.no_grad():
        for p in m.parameters():
            p.mul_(0.9).add_(0.1 * step)
        m[1].running_mean.add_(step)


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 3])
def test_swalr_lrs(strategy, anneal_epochs):
    lrs = []
    for lib in (torch, ember):
        w = lib.nn.Parameter(lib.zeros(2))
        b = lib.nn.Parameter(lib.zeros(1))
        opt = lib.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.3}], lr=0.1)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=[0.05, 0.01], anneal_epochs=anneal_epochs,
                                          anneal_strategy=strategy)  # fmt: skip
        seen = [sched.get_last_lr()]
        for _ in range(6):
            opt.step()
            sched.step()
            seen.append(sched.get_last_lr())
        lrs.append(seen)
    np.testing.assert_allclose(np.array(lrs[1]), np.array(lrs[0]), rtol=1e-12)


def test_swalr_rejects_bad_arguments():
    opt = ember.optim.SGD([ember.nn.Parameter(ember.zeros(1))], lr=0.1)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        ember.optim.swa_utils.SWALR(opt, 0.1, anneal_strategy="step")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        ember.optim.swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)


@pytest.mark.parametrize("kind", ["swa", "ema", "avg_fn", "use_buffers"])
def test_averaged_model_matches_torch(kind):
    states = []
    for lib in (torch, ember):
        su = lib.optim.swa_utils
        kw = {
            "swa": {},
            "ema": {"multi_avg_fn": su.get_ema_multi_avg_fn(0.8)},
            "avg_fn": {"avg_fn": su.get_ema_avg_fn(0.7)},
            "use_buffers": {"use_buffers": True},
        }[kind]
        model = _models(lib)
        avg = su.AveragedModel(model, **kw)
        for step in range(4):
            _shift(lib, model, step)
            avg.update_parameters(model)
        states.append({k: v.detach().double().numpy() for k, v in avg.state_dict().items()})
    assert list(states[1]) == list(states[0])
    for k in states[0]:
        np.testing.assert_allclose(states[1][k], states[0][k], rtol=1e-6, atol=1e-7, err_msg=k)


def test_update_bn_recomputes_running_stats():
    x = np.stack([np.linspace(-1, 1, 12), np.cos(np.arange(12.0))], 1).astype(np.float32)
    stats = []
    for lib in (torch, ember):
        model = _models(lib)
        model.eval()
        xs = lib.tensor(x)
        loader = [(xs[i : i + 4], xs[i : i + 4, :1]) for i in range(0, 12, 4)]
        lib.optim.swa_utils.update_bn(loader, model)
        bn = model[1]
        stats.append((bn.running_mean.numpy(), bn.running_var.numpy(), model.training,
                      bn.momentum, int(bn.num_batches_tracked)))  # fmt: skip
    np.testing.assert_allclose(stats[1][0], stats[0][0], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(stats[1][1], stats[0][1], rtol=1e-5, atol=1e-7)
    assert stats[1][2:] == stats[0][2:] == (False, 0.1, 3)
