"""GradScaler against torch.amp.GradScaler("cpu"): scale sequences under forced overflow, the
per-optimizer state machine's errors, enabled=False, state dicts, and a compiled step."""

import math

import numpy as np
import pytest
import torch

import ember

# (init_scale, growth_interval, steps whose gradient is inf / nan)
SEQUENCES = [
    (16.0, 2, {1: "inf", 5: "nan"}),
    (2.0**16, 3, {0: "inf", 1: "inf", 7: "nan"}),
    (1.0, 1, {}),
    (3.0e38, 1, {4: "inf"}),  # growth past float32's range keeps the scale
]


def _run(lib, init, interval, bad, steps=10, backoff=0.5, growth=2.0):
    w = lib.nn.Parameter(lib.ones(3))
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler(
        "cpu", init_scale=init, growth_interval=interval, backoff_factor=backoff,
        growth_factor=growth,
    )  # fmt: skip
    scales, weights = [], []
    for i in range(steps):
        opt.zero_grad()
        loss = (w * w).sum()
        if i in bad:
            loss = loss * float(bad[i])
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        weights.append(w.detach().numpy().copy())
    return scales, np.array(weights), scaler.state_dict()


@pytest.mark.parametrize("init, interval, bad", SEQUENCES)
def test_scale_sequence_matches_torch(init, interval, bad):
    e_scales, e_w, e_sd = _run(ember, init, interval, bad)
    t_scales, t_w, t_sd = _run(torch, init, interval, bad)
    assert e_scales == t_scales
    np.testing.assert_allclose(e_w, t_w, rtol=1e-6)  # the backward's rounding, not the scaler's
    assert e_sd == t_sd


def test_odd_factors_match_torch():
    bad = {2: "inf", 3: "nan"}
    e = _run(ember, 100.0, 2, bad, backoff=0.3, growth=1.7)
    t = _run(torch, 100.0, 2, bad, backoff=0.3, growth=1.7)
    assert e[0] == t[0]


def _errors(lib, script):
    w = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.SGD([w], lr=0.1)
    s = lib.amp.GradScaler("cpu")
    try:
        script(lib, w, opt, s)
    except (RuntimeError, ValueError, AssertionError) as e:
        return type(e).__name__, str(e)
    return None


def _twice_unscale(lib, w, opt, s):
    s.scale(w.sum()).backward()
    s.unscale_(opt)
    s.unscale_(opt)


def _unscale_after_step(lib, w, opt, s):
    s.scale(w.sum()).backward()
    s.step(opt)
    s.unscale_(opt)


def _step_twice(lib, w, opt, s):
    s.scale(w.sum()).backward()
    s.step(opt)
    s.step(opt)


def _update_before_scale(lib, w, opt, s):
    s.update()


def _step_before_scale(lib, w, opt, s):
    s.step(opt)


def _closure(lib, w, opt, s):
    s.scale(w.sum()).backward()
    s.step(opt, closure=lambda: 0)


def _update_without_step(lib, w, opt, s):
    s.scale(w.sum())
    s.update()


def _fp16_grads(lib, w, opt, s):
    w16 = lib.nn.Parameter(lib.ones(2, dtype=lib.float16))
    opt16 = lib.optim.SGD([w16], lr=0.1)
    s.scale(w16.float().sum()).backward()
    s.unscale_(opt16)


def _empty_state(lib, w, opt, s):
    s.load_state_dict(lib.amp.GradScaler("cpu", enabled=False).state_dict())


@pytest.mark.parametrize(
    "script",
    [_twice_unscale, _unscale_after_step, _step_twice, _update_before_scale,
     _step_before_scale, _closure, _update_without_step, _fp16_grads, _empty_state],
)  # fmt: skip
def test_errors_match_torch(script):
    t = _errors(torch, script)
    e = _errors(ember, script)
    assert t is not None
    assert e is not None and e[0] == t[0]
    assert e[1] == t[1]


def test_disabled_passes_through():
    w = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([w], lr=0.5)
    s = ember.amp.GradScaler("cpu", enabled=False)
    loss = (w * w).sum()
    assert s.scale(loss) is loss
    loss.backward()
    s.unscale_(opt)
    s.step(opt)
    s.update()
    np.testing.assert_allclose(w.detach().numpy(), [0.0, 0.0])
    assert s.get_scale() == 1.0 and s.state_dict() == {} and not s.is_enabled()


def test_state_dict_round_trip_and_skip_flag():
    s = ember.amp.GradScaler("cpu", init_scale=8.0, growth_interval=5)
    w = ember.nn.Parameter(ember.ones(1))
    opt = ember.optim.SGD([w], lr=0.1)
    s.scale(w.sum() * math.inf).backward()
    assert s.step(opt) is None and s.last_step_skipped
    s.update()
    opt.zero_grad()
    s.scale(w.sum()).backward()
    s.step(opt)
    s.update()
    assert not s.last_step_skipped
    sd = s.state_dict()
    assert sd == {"scale": 4.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                  "growth_interval": 5, "_growth_tracker": 1}  # fmt: skip
    t = torch.amp.GradScaler("cpu")
    t.load_state_dict(sd)
    assert t.state_dict() == sd
    other = ember.amp.GradScaler("cpu")
    other.load_state_dict(sd)
    assert other.state_dict() == sd


def test_device_aliases():
    assert isinstance(ember.cpu.amp.GradScaler(), ember.amp.GradScaler)
    assert ember.cpu.amp.GradScaler(init_scale=4.0).get_scale() == 4.0


def _compiled_run(bad, compiled, device="cpu"):
    ember.manual_seed(0)
    model = ember.nn.Linear(4, 2).to(device)
    opt = ember.optim.Adam(model.parameters(), lr=0.1)
    scaler = ember.amp.GradScaler(device, init_scale=16.0, growth_interval=2)

    def step(x, k):
        opt.zero_grad()
        loss = model(x).pow(2).sum() * k
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    fn = ember.compile(step) if compiled else step
    x = ember.ones(3, 4, device=device)
    scales = []
    for i in range(6):
        fn(x, ember.tensor(math.inf if i in bad else 1.0, device=device))
        scales.append(scaler.get_scale())
    return scales, model.weight.detach().cpu().numpy().copy(), scaler


def test_compiled_step_skips_on_the_device_like_eager(device):
    """On a GPU too, where the optimizer's step counts (kept on the CPU, as PyTorch keeps them)
    move to the device when the step is traced (they were moved after the masked step had
    read them: the trace failed and ember train ran its float16 step eagerly)."""
    bad = {1, 4}
    e_scales, e_w, _ = _compiled_run(bad, compiled=False, device=device)
    c_scales, c_w, scaler = _compiled_run(bad, compiled=True, device=device)
    assert c_scales == e_scales == [16.0, 8.0, 8.0, 16.0, 8.0, 8.0]
    np.testing.assert_allclose(c_w, e_w, rtol=1e-5, atol=1e-6)
    assert scaler.last_step_skipped is False
