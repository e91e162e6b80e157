"""Legacy names old tutorials use: ember.FloatTensor & co, ``x.type(...)``, ``Variable``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

TYPES = [
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "BFloat16Tensor",
    "ByteTensor",
    "CharTensor",
    "ShortTensor",
    "IntTensor",
    "LongTensor",
    "BoolTensor",
]


@pytest.mark.parametrize("name", TYPES)
def test_legacy_constructors_match_torch(name):
    for args in ([[1, 0]], [2, 3], [], [[1.7, 2.2]]):
        t = getattr(torch, name)(*args)
        e = getattr(ember, name)(*args)
        assert tuple(e.shape) == tuple(t.shape)
        assert repr(e.dtype) == repr(t.dtype).replace("torch", "ember")
        if args and isinstance(args[0], list):
            np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())


@pytest.mark.parametrize("name", TYPES)
def test_type_names_and_isinstance(name):
    x = ember.ones(2).type(getattr(ember, name))
    assert x.type() == f"ember.{name}"
    assert isinstance(x, getattr(ember, name))
    assert isinstance(x, ember.Tensor)
    assert not isinstance(x, getattr(ember.cuda, name))
    others = [n for n in TYPES if n != name]
    assert not any(isinstance(x, getattr(ember, n)) for n in others)
    assert x.type(f"torch.{name}").type() == f"ember.{name}"
    assert x.type(f"ember.{name}").dtype is getattr(ember, name).dtype


def test_legacy_type_reprs_and_attributes():
    assert repr(ember.FloatTensor) == "<class 'ember.FloatTensor'>"
    assert repr(ember.cuda.LongTensor) == "<class 'ember.cuda.LongTensor'>"
    assert ember.FloatTensor.dtype is ember.float32 and not ember.FloatTensor.is_cuda
    assert ember.cuda.FloatTensor.is_cuda
    assert not isinstance([1.0], ember.FloatTensor)


def test_old_tutorial_snippet():
    dtype = ember.FloatTensor
    x = ember.randn(4, 3).type(dtype)
    w = ember.autograd.Variable(ember.randn(3, 2).type(dtype), requires_grad=True)
    y = x.mm(w).clamp(min=0).sum()
    y.backward()
    assert w.grad.shape == (3, 2) and isinstance(w.grad, ember.FloatTensor)


def test_variable():
    t = ember.ones(2)
    v = ember.autograd.Variable(t, requires_grad=True)
    assert isinstance(v, ember.Tensor) and v.requires_grad and v.is_leaf
    assert not t.requires_grad  # the wrapped tensor is left alone
    assert not ember.autograd.Variable(t).requires_grad
    assert ember.autograd.Variable([1.0, 2.0]).tolist() == [1.0, 2.0]
