"""``ember.utils.data.{dataloader,dataset,sampler}``: PyTorch's paths, holding ember.data's
objects: each name PyTorch's submodule exports, where ember has it."""

from __future__ import annotations

import importlib

import pytest
import torch.utils.data  # noqa: F401  (loads the submodules compared with)

import ember
from ember.utils.data import SUBMODULES


@pytest.mark.parametrize("name", sorted(SUBMODULES))
def test_submodule_as_torch(name):
    ours = importlib.import_module(f"ember.utils.data.{name}")
    theirs = importlib.import_module(f"torch.utils.data.{name}")
    assert ours is getattr(ember.utils.data, name)
    assert list(SUBMODULES[name]) == list(theirs.__all__)
    assert ours.__all__ == list(theirs.__all__)  # ember has every one of them today
    for n in ours.__all__:
        assert getattr(ours, n) is getattr(ember.data, n) is getattr(ember.utils.data, n)


def test_imports_as_torch_writes_them():
    from ember.utils.data.dataloader import DataLoader, default_collate
    from ember.utils.data.dataset import Dataset, TensorDataset
    from ember.utils.data.sampler import RandomSampler, Sampler

    assert DataLoader is ember.utils.data.DataLoader is ember.data.DataLoader
    assert default_collate is ember.utils.data.default_collate
    assert Dataset is ember.utils.data.Dataset and TensorDataset is ember.data.TensorDataset
    assert Sampler is ember.utils.data.Sampler and RandomSampler is ember.data.RandomSampler
    data = TensorDataset(ember.arange(5))
    loader = DataLoader(data, batch_size=2, sampler=RandomSampler(data))
    assert sorted(x for (b,) in loader for x in b.tolist()) == [0, 1, 2, 3, 4]
