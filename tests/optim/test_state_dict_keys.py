"""Optimizers' param_groups and state_dict layout as PyTorch 2.13's, and torch checkpoints loaded.

Generated from one table: for every optimizer of ``torch.optim`` that ember has, the keys of a
param group (names and order) and their values' types, the state dict's structure, and each
parameter's state (keys in order, tensor or not, dtype, shape) after a few steps, compared with
torch's. A torch state dict rebuilt with ember tensors loads into the ember optimizer and gives
torch's next steps. The implementation flags (``foreach``, ``fused``, ``capturable``,
``differentiable``) are accepted or refused as torch accepts or refuses them on the CPU.

Not covered: LBFGS's per-parameter state (ember keeps its history as arrays and floats, torch as
tensors; the param group matches and is checked) and SparseAdam (no sparse gradients here).
"""

import numpy as np
import pytest
import torch

import ember

# optimizer -> constructor arguments (beyond the parameters) exercising its stateful branches
OPTIMIZERS = {
    "SGD": {"lr": 0.1},
    "SGD momentum": {"lr": 0.1, "momentum": 0.9, "nesterov": True},
    "Adam": {"lr": 0.01},
    "Adam amsgrad": {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1},
    "Adam decoupled": {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
    "AdamW": {"lr": 0.01},
    "RMSprop": {"lr": 0.01},
    "RMSprop centered momentum": {"lr": 0.01, "centered": True, "momentum": 0.5},
    "Adagrad": {"lr": 0.1},
    "Adadelta": {},
    "Adamax": {"lr": 0.01},
    "NAdam": {"lr": 0.01},
    "RAdam": {"lr": 0.01},
    "ASGD": {"lr": 0.01, "t0": 1},
    "Rprop": {"lr": 0.01},
}
FLAGS = ["foreach", "fused", "capturable", "differentiable"]


def _cls(module, case: str):
    return getattr(module.optim, case.split()[0])


def _params(module, dtype):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, 3)), rng.standard_normal(3)]
    return [module.nn.Parameter(module.tensor(a, dtype=dtype)) for a in arrays]


def _step(opt, params, k: int) -> None:
    """One step on a loss whose gradients differ from step to step (the same in both)."""
    opt.zero_grad()
    loss = sum(((p * p) * (k + 1) + p * (0.5 - k)).sum() for p in params)
    loss.backward()
    opt.step()


def _run(module, case: str, steps: int, dtype):
    params = _params(module, dtype)
    opt = _cls(module, case)(params, **OPTIMIZERS[case])
    for k in range(steps):
        _step(opt, params, k)
    return opt, params


def _describe(value):
    """What the layout comparison sees of a value: its kind, and for tensors dtype and shape."""
    if isinstance(value, (torch.Tensor, ember.Tensor)):
        return ("tensor", str(value.dtype).split(".")[-1], tuple(value.shape))
    return (type(value).__name__,)


@pytest.mark.parametrize("case", sorted(OPTIMIZERS))
def test_param_group_keys_values_and_types(case):
    t, _ = _run(torch, case, 0, torch.float32)
    e, _ = _run(ember, case, 0, ember.float32)
    tg, eg = t.param_groups[0], e.param_groups[0]
    assert list(eg) == list(tg)
    for k in tg:
        if k != "params":
            assert eg[k] == tg[k] and type(eg[k]) is type(tg[k]), k
    assert list(e.defaults) == list(t.defaults) and e.defaults == t.defaults


@pytest.mark.parametrize("case", sorted(OPTIMIZERS))
def test_state_dict_layout_after_steps(case):
    t, _ = _run(torch, case, 3, torch.float32)
    e, _ = _run(ember, case, 3, ember.float32)
    ts, es = t.state_dict(), e.state_dict()
    assert list(es) == list(ts) == ["state", "param_groups"]
    assert [list(g) for g in es["param_groups"]] == [list(g) for g in ts["param_groups"]]
    assert [g["params"] for g in es["param_groups"]] == [g["params"] for g in ts["param_groups"]]
    assert list(es["state"]) == list(ts["state"])
    for i, entries in ts["state"].items():
        assert list(es["state"][i]) == list(entries), i
        for k, v in entries.items():
            assert _describe(es["state"][i][k]) == _describe(v), (i, k)


def test_lbfgs_param_group_matches():
    t = torch.optim.LBFGS(_params(torch, torch.float32))
    e = ember.optim.LBFGS(_params(ember, ember.float32))
    assert list(e.param_groups[0]) == list(t.param_groups[0])
    assert e.defaults == t.defaults


def _to_ember(value):
    if isinstance(value, torch.Tensor):
        return ember.tensor(value.detach().numpy().copy())
    if isinstance(value, dict):
        return {k: _to_ember(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_ember(v) for v in value]
    return value


@pytest.mark.parametrize("case", sorted(OPTIMIZERS))
def test_torch_state_dict_loads_and_continues_as_torch(case):
    t, tp = _run(torch, case, 2, torch.float64)
    e_params = [ember.nn.Parameter(ember.tensor(p.detach().numpy().copy())) for p in tp]
    e = _cls(ember, case)(e_params, **OPTIMIZERS[case])
    e.load_state_dict(_to_ember(t.state_dict()))
    assert list(e.param_groups[0]) == list(t.param_groups[0])
    for k in range(2, 5):
        _step(t, tp, k)
        _step(e, e_params, k)
        for a, b in zip(e_params, tp):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-6, rtol=0)


def _outcome(module, name: str, flags: dict):
    """``("ok",)``, or where the flags were refused (at construction or at the step) and
    the error's type and message."""
    params = _params(module, module.float32)
    try:
        opt = getattr(module.optim, name)(params, lr=0.01, **flags)
    except Exception as err:  # noqa: BLE001 - the refusal is the result under test
        return ("init", type(err), str(err))
    try:
        _step(opt, params, 0)
    except Exception as err:  # noqa: BLE001
        return ("step", type(err), str(err))
    return ("ok",)


FLAG_CASES = [
    (name, flags)
    for name in sorted({case.split()[0] for case in OPTIMIZERS})
    for flags in (
        *({flag: True} for flag in FLAGS),
        *({flag: False} for flag in FLAGS),
        {"fused": True, "foreach": True},
        {"fused": True, "differentiable": True},
    )
]


@pytest.mark.parametrize("name,flags", FLAG_CASES, ids=[f"{n}-{f}" for n, f in FLAG_CASES])
def test_flags_accepted_or_refused_as_torch(name, flags):
    expected = _outcome(torch, name, flags)
    got = _outcome(ember, name, flags)
    assert got[0] == expected[0], (got, expected)
    if expected[0] == "ok":
        return
    assert issubclass(got[1], expected[1] if expected[1] is not AssertionError else RuntimeError)
    assert name in got[2] or got[1] is TypeError
    for phrase in ("cannot be `True` together", "does not support `differentiable`", "leaf"):
        if phrase in expected[2]:
            assert phrase in got[2], got[2]
    if "capturable" in flags and expected[0] == "step":
        assert "GPU" in got[2] and "cpu" in got[2]
    if expected[1] is TypeError:
        assert "unexpected keyword argument" in got[2] and list(flags)[0] in got[2]


@pytest.mark.parametrize("flags", [{"foreach": True}, {"fused": True}])
def test_implementation_flags_change_no_numbers(flags):
    """foreach / fused select torch's kernels; ember runs its one rule: the same numbers."""
    plain, p1 = _run(ember, "Adam", 0, ember.float64)
    flagged_params = _params(ember, ember.float64)
    flagged = ember.optim.Adam(flagged_params, lr=0.01, **flags)
    for k in range(3):
        _step(plain, p1, k)
        _step(flagged, flagged_params, k)
    for a, b in zip(p1, flagged_params):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())
