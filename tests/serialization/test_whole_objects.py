"""``ember.save`` of whole objects and ``ember.load``'s weights-only rule, against PyTorch 2.13.

Each case builds the same object over torch and over ember, saves it with each library's
``save`` and loads it with each library's ``load``: both must load it by default or both refuse
it naming the same class, both must load it once the same classes are allowlisted, and both
with ``weights_only=False``.
"""

from __future__ import annotations

import io
import json
import pickle
import re
from collections import Counter, OrderedDict

import numpy as np
import pytest

import ember
from ember.serialization import CheckpointError, WeightsOnlyError
from ember.serialization import safetensors as st

torch = pytest.importorskip("torch")


class Point:
    """A user class holding a tensor (defined here, so both libraries pickle this path)."""

    def __init__(self, x, label):
        self.x, self.label = x, label


def _cycle(lib):
    a = [lib.ones(1)]
    a.append(a)
    return a


def _trained(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return {"model": model, "opt": opt, "epoch": 3}


def _sequential(lib):
    return lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU())


# name -> (build(lib), allowlist(lib) or None when allowlisting is not part of the case)
CASES = {
    "set_and_tuple_keys": (lambda lib: {"s": {1, 2}, (1, 2): lib.ones(2)}, None),
    "cycle": (_cycle, None),
    "parameter": (lambda lib: {"p": lib.nn.Parameter(lib.ones(2))}, None),
    "bytes_complex_counter": (
        lambda lib: {"b": b"\x00\xff", "c": 1 + 2j, "n": Counter("aab"), "t": lib.ones(1)},
        None,
    ),
    "user_class": (lambda lib: Point(lib.arange(3), "p"), lambda lib: [Point]),
    "module": (_sequential, lambda lib: [lib.nn.Sequential, lib.nn.Linear, lib.nn.ReLU]),
    "model_and_optimizer": (_trained, None),
}


def _save(lib, obj) -> bytes:
    buf = io.BytesIO()
    lib.save(obj, buf)
    return buf.getvalue()


def _load(lib, blob: bytes, **kw):
    """The object, or the name of the refused global's class (its last path part)."""
    try:
        return lib.load(io.BytesIO(blob), **kw)
    except Exception as e:
        text = str(e)
        assert "Weights only load failed" in text, text
        return text.split("GLOBAL ", 1)[1].split(" ", 1)[0].rsplit(".", 1)[-1]


def _same(mine, theirs):
    """``mine`` (ember) has ``theirs``' (torch) structure and values."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, ember.Tensor)
        assert type(mine).__name__ == type(theirs).__name__
        np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())
    elif isinstance(theirs, torch.nn.Module):
        assert type(mine).__name__ == type(theirs).__name__ and mine.training == theirs.training
        _same(dict(mine.state_dict()), dict(theirs.state_dict()))
    elif isinstance(theirs, torch.optim.Optimizer):
        assert type(mine).__name__ == type(theirs).__name__
        assert len(mine.param_groups[0]["params"]) == len(theirs.param_groups[0]["params"])
    elif isinstance(theirs, dict):
        assert type(mine) is type(theirs) and list(mine) == list(theirs)
        for k in theirs:
            _same(mine[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert type(mine) is type(theirs) and len(mine) == len(theirs)
        for a, b in zip(mine, theirs):
            if b is theirs:
                assert a is mine  # a cycle stays a cycle
            else:
                _same(a, b)
    elif isinstance(theirs, Point):
        assert type(mine) is Point and mine.label == theirs.label
        _same(mine.x, theirs.x)
    else:
        assert type(mine) is type(theirs) and mine == theirs


def _sync(mine, theirs):
    """Give ember's modules in ``mine`` the weights of torch's in ``theirs``."""
    if isinstance(theirs, torch.nn.Module):
        sd = {
            k: ember.from_numpy(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()
        }
        mine.load_state_dict(sd)
    elif isinstance(theirs, dict):
        for k in theirs:
            _sync(mine[k], theirs[k])


@pytest.mark.parametrize("case", list(CASES))
def test_weights_only_rule_matches_torch(case):
    build, allow = CASES[case]
    mine, theirs = build(ember), build(torch)
    _sync(mine, theirs)
    mine_blob, their_blob = _save(ember, mine), _save(torch, theirs)
    mine, theirs = _load(ember, mine_blob), _load(torch, their_blob)
    if isinstance(theirs, str):  # refused: the same class is named
        assert mine == theirs
    else:
        _same(mine, theirs)
    if allow is not None:
        with ember.serialization.safe_globals(allow(ember)):
            mine = _load(ember, mine_blob)
        with torch.serialization.safe_globals(allow(torch)):
            theirs = _load(torch, their_blob)
        _same(mine, theirs)
    _same(_load(ember, mine_blob, weights_only=False), _load(torch, their_blob, weights_only=False))


def test_nn_and_optim_classes_are_not_allowed_by_default():
    for lib in (ember, torch):
        for obj in (lib.nn.Linear(2, 2), lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1)):
            assert isinstance(_load(lib, _save(lib, obj)), str)


def test_refusal_message_names_ember_api(tmp_path):
    ember.save(Point(ember.ones(1), "a"), tmp_path / "p.pt")
    with pytest.raises(WeightsOnlyError) as info:
        ember.load(tmp_path / "p.pt")
    text = str(info.value)
    path = f"{__name__}.Point"
    assert text.startswith(f"{tmp_path / 'p.pt'}: Weights only load failed.")
    assert (
        f"Unsupported global: GLOBAL {path} was not an allowed global by default. Please use "
        f"`ember.serialization.add_safe_globals([{path}])` or the "
        f"`ember.serialization.safe_globals([{path}])` context manager to allowlist this global "
        "if you trust this class/function."
    ) in text
    assert "Re-running `ember.load` with `weights_only` set to `False` will likely succeed" in text
    assert isinstance(info.value, CheckpointError)
    assert isinstance(info.value, pickle.UnpicklingError)


def test_add_safe_globals_and_tuple_entries():
    blob = _save(ember, Point(ember.ones(1), "a"))
    try:
        ember.serialization.add_safe_globals([(Point, f"{__name__}.Point")])
        assert ember.load(io.BytesIO(blob)).label == "a"
    finally:
        ember.serialization.clear_safe_globals()
    assert ember.serialization.get_safe_globals() == []


@pytest.mark.parametrize("entry", [(Point, "a", "b"), (Point, 3)], ids=["long", "not-str"])
def test_bad_tuple_entries_fail_as_in_torch(entry):
    blob = _save(ember, Point(ember.ones(1), "a"))
    their_blob = _save(torch, Point(torch.ones(1), "a"))
    with torch.serialization.safe_globals([entry]):
        with pytest.raises((ValueError, TypeError)) as theirs:
            torch.load(io.BytesIO(their_blob))
    with ember.serialization.safe_globals([entry]):
        with pytest.raises(type(theirs.value), match=re.escape(str(theirs.value))):
            ember.load(io.BytesIO(blob))


def test_training_continues_as_torchs():
    """Model and optimizer saved together, loaded, stepped: as PyTorch's round trip does."""
    mine, theirs = _trained(ember), _trained(torch)
    for p, q in zip(mine["model"].parameters(), theirs["model"].parameters()):
        p.detach().copy_(ember.from_numpy(q.detach().numpy()))
    x = np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3)

    def step(objs, lib, tensor):
        objs["opt"].zero_grad()
        objs["model"](tensor).pow(2).sum().backward()
        objs["opt"].step()

    step(mine, ember, ember.from_numpy(x))
    step(theirs, torch, torch.from_numpy(x))
    mine = ember.load(io.BytesIO(_save(ember, mine)), weights_only=False)
    theirs = torch.load(io.BytesIO(_save(torch, theirs)), weights_only=False)
    assert mine["opt"].param_groups[0]["params"][0] is mine["model"][0].weight
    step(mine, ember, ember.from_numpy(x))
    step(theirs, torch, torch.from_numpy(x))
    for p, q in zip(mine["model"].parameters(), theirs["model"].parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)


def _document(blob: bytes) -> tuple[dict, dict]:
    arrays, meta = st.read(io.BytesIO(blob))
    return arrays, json.loads(meta["ember"])


def test_state_dict_files_keep_the_json_skeleton():
    model = _sequential(ember)
    arrays, doc = _document(_save(ember, model.state_dict()))
    assert doc["version"] == 1 and "pickle" not in doc
    assert list(arrays) == list(model.state_dict())


def test_a_whole_module_keeps_its_tensors_outside_the_pickle():
    model = ember.nn.Sequential(ember.nn.Linear(64, 64), ember.nn.BatchNorm1d(64))
    blob = _save(ember, {"model": model, "extra": ember.ones(3)})
    arrays, doc = _document(blob)
    assert doc["version"] == 2 and len(doc["pickle"]) < 4096  # 17 KB of weights live outside
    assert sorted(arrays) == sorted([f"model.{k}" for k in model.state_dict()] + ["tensor.7"])
    back = ember.load(io.BytesIO(blob), weights_only=False)
    np.testing.assert_array_equal(back["model"][0].weight.detach(), model[0].weight.detach())
    assert type(back["model"][1].running_mean) is type(model[1].running_mean)


def test_ordered_dict_of_modules_and_buffers_keep_their_classes():
    m = ember.nn.Module()
    m.steps = ember.nn.Buffer(ember.zeros(1), persistent=False)
    back = ember.load(io.BytesIO(_save(ember, OrderedDict(m=m))), weights_only=False)
    assert type(back["m"].steps).__name__ == "Buffer" and not back["m"].steps.persistent
    assert list(back["m"].state_dict()) == []


def test_an_unpicklable_object_is_named():
    with pytest.raises(CheckpointError, match="save: cannot pickle the object"):
        ember.save({"f": lambda: 0}, io.BytesIO())
