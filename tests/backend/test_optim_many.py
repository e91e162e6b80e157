"""Optimizer updates of many parameters in one launch (``ember.backend.kernels.optim_many``), on
the emulated GPU: bit for bit the one-parameter kernels' results, the parameters they leave,
and ``Optimizer.step`` handing a group's GPU parameters to them at once."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.backend import overrides
from ember.backend.kernels import optim_many as kmany

GROUPS = [
    (ember.optim.Adam, dict(lr=1e-2, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    (ember.optim.Adam, dict(lr=1e-2, amsgrad=True)),
    (ember.optim.AdamW, dict(lr=1e-2, weight_decay=0.01)),
    (ember.optim.SGD, dict(lr=0.1, weight_decay=0.1)),
    (ember.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
]
SIZES = [(1,), (5, 3), (70,), (300,), (2, 2)]  # 300: three blocks of 32 x 4


@pytest.fixture
def small(monkeypatch, xp):
    monkeypatch.setattr(kmany, "SLOTS", 3)  # two launches for five parameters
    monkeypatch.setattr(kmany, "BLOCK", 32)
    return xp


def _setup(cls, group, dtype):
    rng = np.random.default_rng(0)
    params = [ember.nn.Parameter(ember.tensor(rng.standard_normal(s).astype(dtype))) for s in SIZES]
    opt = cls(params, **group)
    g = opt.param_groups[0]
    states = [opt.init_state(p, g) for p in params]
    return rng, opt, g, [p._data.copy() for p in params], states


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cls,group", GROUPS, ids=[f"{c.__name__}{g}" for c, g in GROUPS])
def test_many_matches_the_one_parameter_kernel_bit_for_bit(small, cls, group, dtype):
    xp = small
    fn = overrides.table("cuda", "update")[cls]
    rng, opt, g, arrays, states = _setup(cls, group, dtype)
    _, _, _, ref_arrays, ref_states = _setup(cls, group, dtype)
    momentum = bool(group.get("momentum"))
    for step in range(3):
        grads = [rng.standard_normal(a.shape).astype(dtype) for a in arrays]
        for sts in (states, ref_states):
            for st in sts:
                if "step" in st:
                    st["step"]._data += 1
        items = [(None, None, a, gr, st) for a, gr, st in zip(arrays, grads, states)]
        left = fn.many(opt, xp, items, g)
        assert len(left) == (len(items) if momentum and step == 0 else 0)
        for _, _, a, gr, st in left:  # SGD's first momentum step: the one-parameter path
            if fn(opt, xp, a, gr, st, g) is NotImplemented:
                opt._rule(ember.from_numpy(a), ember.tensor(gr), st, g)
        for a, gr, st in zip(ref_arrays, grads, ref_states):
            if fn(opt, xp, a, gr, st, g) is NotImplemented:
                opt._rule(ember.from_numpy(a), ember.tensor(gr), st, g)
    for a, ref in zip(arrays, ref_arrays):
        np.testing.assert_array_equal(a, ref)
    for st, ref in zip(states, ref_states):
        for k, v in ref.items():
            if v is not None and k != "step":
                np.testing.assert_array_equal(st[k].numpy(), v.numpy(), err_msg=k)


def test_what_many_leaves(small):
    xp = small
    rng, opt, g, arrays, states = _setup(ember.optim.Adam, dict(lr=1e-2), np.float32)
    for st in states:
        st["step"]._data += 1
    grads = [rng.standard_normal(a.shape).astype(np.float32) for a in arrays]
    strided = np.zeros((3, 5), np.float32).T  # a transposed gradient of a (5, 3) parameter
    bf = ember.bfloat16.np
    half = arrays[2].astype(bf), grads[2].astype(bf)
    half_state = {k: ember.from_numpy(v._data.astype(bf)) if k != "step" else v
                  for k, v in states[2].items()}  # fmt: skip
    items = [
        ("served", None, arrays[0], grads[0], states[0]),
        ("strided gradient", None, arrays[1], strided, states[1]),
        ("bfloat16", None, *half, half_state),
    ]
    left = kmany.adam_many(opt, xp, items, g)
    assert [it[0] for it in left] == ["strided gradient", "bfloat16"]
    assert kmany.adam_many(opt, np, items, g) == items  # no kernels (NumPy, the fake CuPy)


def test_step_hands_a_groups_gpu_parameters_over_at_once(fake_cuda, monkeypatch):
    """On the fake GPU (no kernels) ``many`` and then the one-parameter override decline: the
    rule runs; the optimizer's results are the CPU's."""
    calls = []
    fn = overrides.table("cuda", "update")[ember.optim.Adam]

    def many(opt, xp, items, group):
        calls.append(len(items))
        return kmany.adam_many(opt, xp, items, group)

    monkeypatch.setattr(fn, "many", many)
    results = []
    for device in ("cpu", "cuda"):
        ember.manual_seed(0)
        model = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.Linear(3, 2)).to(device)
        opt = ember.optim.Adam(model.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            model(ember.ones(5, 4, device=device)).sum().backward()
            opt.step()
        results.append([p.detach().cpu().numpy() for p in model.parameters()])
    assert calls == [4, 4]  # one call a step with the group's four parameters
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
