"""Tensor.storage(), untyped_storage() and storage_offset() (ember/storage.py) beside PyTorch
2.13: sizes, bytes, values, offsets and memory sharing of views, on the CPU and on cuda."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember

VIEWS = {
    "whole": lambda t: t,
    "row": lambda t: t[1],
    "tail": lambda t: t[1:, 2:],
    "transposed": lambda t: t.t(),
    "strided": lambda t: t[:, ::2],
    "reshaped": lambda t: t.reshape(12)[5:],
    "detached": lambda t: t[2].detach(),
}


def _pair(dtype: str, device: str = "cpu"):
    data = np.arange(12).reshape(3, 4).astype(dtype)
    return ember.tensor(data, device=device), torch.tensor(data)


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("dtype", ["float32", "int16", "float64"])
def test_views_share_their_bases_storage_as_in_torch(view, dtype, device):
    e, t = _pair(dtype, device)
    ev, tv = VIEWS[view](e), VIEWS[view](t)
    assert ev.storage_offset() == tv.storage_offset()
    es, ts = ev.untyped_storage(), tv.untyped_storage()
    assert es.data_ptr() == e.untyped_storage().data_ptr()
    assert (es.nbytes(), es.size(), len(es)) == (ts.nbytes(), ts.size(), len(ts))
    assert es.tolist() == ts.tolist()
    assert es.device.type == device


def test_separate_tensors_have_separate_storages():
    a, b = ember.zeros(3), ember.zeros(3)
    assert a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr()
    assert a.clone().untyped_storage().data_ptr() != a.untyped_storage().data_ptr()


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16"])
def test_the_typed_storage_reads_the_dtype_as_torch(dtype, device):
    data = (np.arange(6) % 3).astype(dtype)
    e, t = ember.tensor(data, device=device)[2:], torch.tensor(data)[2:]
    _reset_the_once_warnings()
    with pytest.warns(UserWarning) as got:
        es = e.storage()
    with pytest.warns(UserWarning) as want:
        ts = t.storage()
    assert str(got[0].message) == str(want[0].message)  # TypedStorage is deprecated
    assert (es.size(), len(es), es.element_size(), es.nbytes()) == (
        ts.size(),
        len(ts),
        ts.element_size(),
        ts.nbytes(),
    )
    assert str(es.dtype).split(".")[-1] == str(ts.dtype).split(".")[-1]
    assert es.tolist() == ts.tolist()
    assert es.data_ptr() == e.untyped_storage().data_ptr() == es.untyped().data_ptr()
    assert es.device.type == device


def _reset_the_once_warnings():
    ember.storage._warned_typed_storage[0] = False
    torch.storage._reset_warn_typed_storage_removal()


def test_the_deprecation_warns_once_as_torch():
    for m in (ember, torch):
        x = m.zeros(2)
        _reset_the_once_warnings()
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            x.storage()
            x.storage()
        assert len(record) == 1


def test_an_empty_storage_is_at_address_zero():
    e, t = ember.zeros(0), torch.zeros(0)
    assert e.untyped_storage().data_ptr() == t.untyped_storage().data_ptr() == 0
    assert e.untyped_storage().nbytes() == t.untyped_storage().nbytes() == 0


def test_the_storage_types_are_separate_classes_as_in_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        typed = ember.zeros(1).storage()
    assert not isinstance(typed, type(ember.zeros(1).untyped_storage()))
    assert not isinstance(torch.zeros(1).storage(), torch.UntypedStorage)


def test_a_symbolic_tensor_has_no_storage():
    x = ember.static.placeholder((2,), ember.float32)
    with pytest.raises(ember.EmberError, match="symbolic tensor.*no storage"):
        x.untyped_storage()
