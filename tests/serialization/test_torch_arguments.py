"""``ember.save`` / ``ember.load`` take ``torch.save`` / ``torch.load``'s other arguments, so
PyTorch code that passes them runs: the same calls work under torch and ember."""

import inspect
import pickle
import types

import pytest
import torch

import ember
from ember.serialization import CheckpointError


def test_signatures_take_torchs_parameters():
    for ours, theirs in ((ember.save, torch.save), (ember.load, torch.load)):
        mine = inspect.signature(ours).parameters
        for name, p in inspect.signature(theirs).parameters.items():
            if p.kind is p.VAR_KEYWORD:
                continue
            assert name in mine, f"{ours.__name__} lacks {name}"
            assert mine[name].kind == p.kind, name


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_the_calls_pytorch_code_makes(m, tmp_path):
    model = m.nn.Linear(2, 1)
    path = str(tmp_path / "model.pt")
    m.save(model, path, pickle_module=pickle, pickle_protocol=4)
    back = m.load(path, map_location="cpu", pickle_module=pickle, weights_only=False, mmap=False)
    assert type(back) is m.nn.Linear
    assert back.weight.tolist() == model.weight.tolist()
    m.save({"w": model.weight.detach()}, path, _use_new_zipfile_serialization=False)
    assert m.load(path)["w"].tolist() == model.weight.tolist()


def test_another_pickle_module_is_refused_by_name(tmp_path):
    other = types.ModuleType("dill")
    with pytest.raises(CheckpointError, match="save: pickle_module='dill' is not supported"):
        ember.save(ember.nn.Linear(1, 1), tmp_path / "m.pt", pickle_module=other)
    ember.save({"w": ember.ones(1)}, tmp_path / "w.pt")
    with pytest.raises(CheckpointError, match="load: pickle_module='dill'"):
        ember.load(tmp_path / "w.pt", pickle_module=other)
