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
    f16 = np.float16
    half = arrays[2].astype(f16), grads[2].astype(f16)
    half_state = {k: ember.from_numpy(v._data.astype(f16)) if k != "step" else v
                  for k, v in states[2].items()}  # fmt: skip
    items = [
        ("served", None, arrays[0], grads[0], states[0]),
        ("strided gradient", None, arrays[1], strided, states[1]),
        ("float16", None, *half, half_state),
    ]
    left = kmany.adam_many(opt, xp, items, g)
    assert [it[0] for it in left] == ["strided gradient", "float16"]
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


@pytest.mark.fake_kernels
@pytest.mark.parametrize("cls,group", GROUPS, ids=[f"{c.__name__}{g}" for c, g in GROUPS])
def test_many_bfloat16_matches_the_one_parameter_kernel_bit_for_bit(fake_cuda, cls, group):
    """bfloat16 parameters on the fake GPU (its ElementwiseKernel has CuPy's bfloat16, rounding
    to nearest even): the many-parameter kernel computes in float32 and rounds each stored value
    once, as the one-parameter kernel's casts do."""
    xp = fake_cuda
    fn = overrides.table("cuda", "update")[cls]
    bf = ember.bfloat16.np
    runs = []
    for many in (True, False):
        rng, opt, g, arrays, states = _setup(cls, group, np.float32)
        arrays = [xp.asarray(a.astype(bf)) for a in arrays]
        states = [
            {
                k: v if v is None or k == "step" else ember.from_numpy(v.numpy().astype(bf)).cuda()
                for k, v in st.items()
            }  # fmt: skip
            for st in states
        ]
        for step in range(3):
            grads = [xp.asarray(rng.standard_normal(a.shape).astype(bf)) for a in arrays]
            for st in states:
                if "step" in st:
                    st["step"]._data += 1
            items = [(None, None, a, gr, st) for a, gr, st in zip(arrays, grads, states)]
            left = fn.many(opt, xp, items, g) if many else items
            if many:
                assert len(left) == (len(items) if group.get("momentum") and step == 0 else 0)
            for _, _, a, gr, st in left:
                if fn(opt, xp, a, gr, st, g) is NotImplemented:  # SGD's first momentum step
                    opt._rule(ember.Tensor._make(a), ember.Tensor._make(gr), st, g)
        runs.append(([a.get().view(np.uint16) for a in arrays], states))
    (got, got_states), (ref, ref_states) = runs
    for a, b in zip(got, ref):
        np.testing.assert_array_equal(a, b)
    for st, ref_st in zip(got_states, ref_states):
        for k, v in ref_st.items():
            if v is not None and k != "step":
                np.testing.assert_array_equal(
                    st[k]._data.get().view(np.uint16), v._data.get().view(np.uint16), err_msg=k
                )
