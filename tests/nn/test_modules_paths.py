"""``ember.nn.modules.*``: PyTorch's module paths hold ember's own classes, and every name
PyTorch's submodule exports that ``ember.nn`` has."""

from __future__ import annotations

import importlib

import pytest
import torch

import ember
from ember.nn.modules import SUBMODULES


@pytest.mark.parametrize("name", sorted(SUBMODULES))
def test_submodule_as_torch(name):
    ours = importlib.import_module(f"ember.nn.modules.{name}")
    theirs = importlib.import_module(f"torch.nn.modules.{name}")
    assert ours is getattr(ember.nn.modules, name)
    assert set(SUBMODULES[name]) == set(theirs.__all__)  # the table is PyTorch's
    expected = [n for n in theirs.__all__ if hasattr(ember.nn, n)]
    assert ours.__all__ == expected
    for n in expected:
        assert getattr(ours, n) is getattr(ember.nn, n)
        assert getattr(ember.nn.modules, n) is getattr(ember.nn, n)


def test_imports_as_torch_writes_them():
    from ember.nn.modules.activation import ReLU
    from ember.nn.modules.batchnorm import BatchNorm2d
    from ember.nn.modules.container import ModuleList, Sequential
    from ember.nn.modules.conv import Conv2d
    from ember.nn.modules.dropout import Dropout
    from ember.nn.modules.linear import Linear
    from ember.nn.modules.loss import CrossEntropyLoss, MSELoss
    from ember.nn.modules.module import Module
    from ember.nn.modules.pooling import MaxPool2d
    from ember.nn.modules.rnn import LSTM

    nn = ember.nn
    pairs = [
        (ReLU, nn.ReLU),
        (BatchNorm2d, nn.BatchNorm2d),
        (ModuleList, nn.ModuleList),
        (Sequential, nn.Sequential),
        (Conv2d, nn.Conv2d),
        (Dropout, nn.Dropout),
        (Linear, nn.Linear),
        (CrossEntropyLoss, nn.CrossEntropyLoss),
        (MSELoss, nn.MSELoss),
        (Module, nn.Module),
        (MaxPool2d, nn.MaxPool2d),
        (LSTM, nn.LSTM),
    ]
    assert all(a is b for a, b in pairs)
    assert isinstance(Sequential(Linear(2, 3), ReLU()), Module)


def test_attribute_path_without_import():
    import ember as torch_  # a script's ``import ember as torch``

    layer = torch_.nn.modules.linear.Linear(3, 2)
    assert isinstance(layer, torch_.nn.Linear)
    assert isinstance(torch.nn.modules.linear.Linear(3, 2), torch.nn.Linear)  # as PyTorch's
