"""ember.return_types against torch.return_types: the field table, reprs, tuple behaviour."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

import ember
from ember import return_types

X = [[1.0, 5.0, 2.0], [4.0, 3.0, 6.0]]
SQUARE = [[2.0, 1.0], [1.0, 3.0]]

# (label, the call on a module: ember or torch, its input data)
CALLS = [
    ("max", lambda m, x: x.max(dim=1), X),
    ("min", lambda m, x: m.min(x, 0), X),
    ("max_keepdim", lambda m, x: x.max(1, keepdim=True), X),
    ("sort", lambda m, x: m.sort(x, dim=1, descending=True), X),
    ("topk", lambda m, x: m.topk(x.flatten(), 3), X),
    ("kthvalue", lambda m, x: x.kthvalue(2, dim=1), X),
    ("median", lambda m, x: x.median(dim=0), X),
    ("nanmedian", lambda m, x: m.nanmedian(x, 1), X),
    ("mode", lambda m, x: m.mode(x, 1), X),
    ("cummax", lambda m, x: m.cummax(x, 1), X),
    ("cummin", lambda m, x: x.cummin(0), X),
    ("aminmax", lambda m, x: m.aminmax(x, dim=1), X),
    ("slogdet", lambda m, x: m.slogdet(x), SQUARE),
    ("linalg_slogdet", lambda m, x: m.linalg.slogdet(x), SQUARE),
    ("linalg_eigh", lambda m, x: m.linalg.eigh(x), SQUARE),
    ("linalg_svd", lambda m, x: m.linalg.svd(x), SQUARE),
    ("svd", lambda m, x: m.svd(x), SQUARE),
]


def _torch_repr(r) -> str:
    return repr(r).replace("torch.", "ember.")


@pytest.mark.parametrize("label, call, data", CALLS, ids=[c[0] for c in CALLS])
def test_result_matches_torch(label, call, data):
    want = call(torch, torch.tensor(data))
    got = call(ember, ember.tensor(data))
    assert type(got).__name__ == type(want).__name__
    assert type(got).__module__ == "ember.return_types"
    assert got._fields == type(want).__match_args__
    assert isinstance(got, tuple) and len(got) == len(want)
    for field in type(want).__match_args__:
        np.testing.assert_allclose(
            abs(getattr(got, field).numpy()), abs(getattr(want, field).numpy()), rtol=1e-5
        )
    if label not in ("linalg_eigh", "linalg_svd", "svd"):  # vectors' signs are free
        assert repr(got) == _torch_repr(want)
        assert str(got) == _torch_repr(want)


def test_table_is_torchs():
    """Every public torch.return_types type (the `_out` twins aside) with torch's fields."""
    want = {
        name: getattr(torch.return_types, name).__match_args__
        for name in torch.return_types.__all__
        if not name.endswith("_out") and hasattr(getattr(torch.return_types, name), "n_fields")
    }
    assert return_types.FIELDS == want
    assert all(isinstance(getattr(ember.return_types, n), type) for n in want)


def test_tuple_behaviour_as_torch():
    t = torch.tensor(X).max(dim=1)
    r = ember.tensor(X).max(dim=1)
    values, indices = r
    assert values is r.values is r[0] and indices is r.indices is r[-1]
    assert type(r[0:1]) is type(t[0:1]) is tuple
    assert r == tuple(r)
    assert (r == tuple(r)) is (t == tuple(t)) is True


def test_built_from_one_sequence_as_torch_or_field_by_field():
    v, i = ember.tensor([1.0]), ember.tensor([0])
    t = torch.return_types.max((torch.tensor([1.0]), torch.tensor([0])))
    a, b = return_types.max((v, i)), return_types.max(v, i)
    assert a == b == (v, i) and a.indices is i
    assert repr(a) == _torch_repr(t)


def test_pickles_and_rebuilds_by_type():
    r = ember.tensor(X).sort(dim=1)
    back = pickle.loads(pickle.dumps(r))
    assert type(back) is return_types.sort
    np.testing.assert_array_equal(back.values.numpy(), r.values.numpy())
    rebuilt = type(r)(*[e * 2 for e in r])  # how ember's tree helpers rebuild named tuples
    assert type(rebuilt) is return_types.sort
    np.testing.assert_array_equal(rebuilt.indices.numpy(), r.indices.numpy() * 2)


def test_grad_fn_in_repr_as_torch():
    t = torch.tensor([1.0, 2.0], requires_grad=True).max(0)
    r = ember.tensor([1.0, 2.0], requires_grad=True).max(0)
    assert repr(r).splitlines()[0] == _torch_repr(t).splitlines()[0]
    assert "grad_fn=" in repr(r.values)
