"""Sparse COO tensors against PyTorch 2.13: construction (a table of index/value/size cases:
repeats, empty nnz, inferred sizes, hybrid values, int32 indices), coalesce, to_dense,
to_sparse, metadata, repr, conversions, and the errors (messages' substance as torch's)."""

import warnings

import numpy as np
import pytest
import torch

import ember

warnings.filterwarnings("ignore", message="Sparse invariant checks")

# (name, indices, values, size or None, kwargs)
BUILD = [
    ("repeats", [[0, 1, 1, 0], [2, 0, 2, 2]], [3.0, 4.0, 5.0, 1.0], (2, 3), {}),
    ("inferred_size", [[0, 1, 1, 0], [2, 0, 2, 2]], [3.0, 4.0, 5.0, 1.0], None, {}),
    ("coalesced_already", [[0, 1], [1, 2]], [1.5, -2.0], (3, 3), {}),
    ("one_entry", [[2], [1]], [7.0], (3, 3), {}),
    ("empty", np.zeros((2, 0), np.int64), np.zeros(0, np.float32), (2, 3), {}),
    ("empty_inferred", np.zeros((2, 0), np.int64), np.zeros(0, np.float32), None, {}),
    ("hybrid", [[0, 1, 0]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], (2, 2), {}),
    ("three_dims", [[0, 1, 0], [1, 1, 1], [2, 0, 2]], [1.0, 2.0, 3.0], (2, 2, 3), {}),
    ("int32_indices", np.array([[0, 1], [1, 0]], np.int32), [1.0, 2.0], (2, 2), {}),
    ("float64", [[0, 1], [1, 0]], [1.0, 2.0], (2, 2), {"dtype": "float64"}),
    ("int_values", [[0, 1, 1], [1, 0, 0]], [1, 2, 3], (2, 2), {}),
    ("is_coalesced_flag", [[0, 1], [1, 0]], [1.0, 2.0], (2, 2), {"is_coalesced": True}),
    ("requires_grad", [[0, 1], [1, 0]], [1.0, 2.0], (2, 2), {"requires_grad": True}),
]


def _lib_args(mod, indices, values, size, kwargs):
    kw = dict(kwargs)
    if "dtype" in kw:
        kw["dtype"] = getattr(mod, kw["dtype"])
    args = [mod.tensor(np.asarray(indices)), mod.tensor(np.asarray(values))]
    return args + ([size] if size is not None else []), kw


def build(mod, case, **extra):
    _, indices, values, size, kwargs = case
    args, kw = _lib_args(mod, indices, values, size, kwargs)
    return mod.sparse_coo_tensor(*args, **kw, **extra)


def same(e, t, exact=False):
    """An ember tensor (dense) equals a torch one: shape, dtype name and values."""
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().cpu().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-7)


def same_sparse(e, t):
    assert e.is_sparse and t.is_sparse
    assert tuple(e.shape) == tuple(t.shape)
    assert (e.sparse_dim(), e.dense_dim(), e._nnz()) == (t.sparse_dim(), t.dense_dim(), t._nnz())
    assert e.is_coalesced() == t.is_coalesced()
    same(e._indices(), t._indices())
    same(e._values(), t._values())


@pytest.mark.parametrize("case", BUILD, ids=[c[0] for c in BUILD])
def test_construction_matches_torch(case, device):
    e, t = build(ember, case, device=device), build(torch, case)
    assert e.device.type == device
    same_sparse(e, t)
    assert e.requires_grad == t.requires_grad and e.is_leaf == t.is_leaf
    assert e.layout is ember.sparse_coo and str(e.layout) == str(t.layout).replace("torch", "ember")
    assert (e.dim(), e.numel(), len(e)) == (t.dim(), t.numel(), len(t))
    same(e.to_dense(), t.to_dense())
    same_sparse(e.coalesce(), t.coalesce())
    if t.is_coalesced():
        same(e.indices(), t.indices())
        same(e.values(), t.values())


@pytest.mark.parametrize("case", BUILD, ids=[c[0] for c in BUILD])
def test_repr_matches_torch(case):
    e, t = build(ember, case), build(torch, case)
    assert repr(e) == repr(t).replace("torch.", "ember.")
    assert repr(e.coalesce().detach()) == repr(t.coalesce().detach()).replace("torch.", "ember.")


@pytest.mark.parametrize("sparse_dim", [None, 1, 2])
def test_to_sparse_matches_torch(sparse_dim, device):
    x = np.array([[0.0, 1.5, 0.0], [0.0, 0.0, 0.0], [2.0, 0.0, -3.0]])
    e = ember.tensor(x, device=device).to_sparse(*([sparse_dim] if sparse_dim else []))
    t = torch.tensor(x).to_sparse(*([sparse_dim] if sparse_dim else []))
    same_sparse(e, t)
    same_sparse(ember.tensor(x).to_sparse_coo(), torch.tensor(x).to_sparse_coo())
    assert e.to_sparse() is e
    dense = ember.tensor(x)
    assert dense.to_dense() is dense and dense.layout is ember.strided and not dense.is_sparse


def test_to_sparse_gradient_matches_torch(device):
    x = np.array([[0.0, 1.5], [2.0, 0.0]])
    ex = ember.tensor(x, device=device, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    (ember.sparse.sum(ex.to_sparse() * 3.0)).backward()
    (torch.sparse.sum(tx.to_sparse() * 3.0)).backward()
    same(ex.grad, tx.grad)


def test_values_gradient_through_coalesce_and_to_dense(device):
    idx = [[0, 1, 1, 0], [2, 0, 2, 2]]
    w = np.arange(6.0).reshape(2, 3)
    grads = []
    for mod in (ember, torch):
        v = mod.tensor([3.0, 4.0, 5.0, 1.0], dtype=mod.float64, requires_grad=True)
        kw = {"device": device} if mod is ember else {}
        s = mod.sparse_coo_tensor(mod.tensor(idx), v.to(**kw), (2, 3)).coalesce()
        (s.to_dense() * mod.tensor(w).to(**kw)).sum().backward()
        grads.append(v.grad)
    same(*grads)


CONVERSIONS = [
    ("double", lambda s: s.double()),
    ("float", lambda s: s.double().float()),
    ("long", lambda s: s.long()),
    ("to_dtype", lambda s: s.to(s.double().dtype)),
    ("cpu", lambda s: s.cpu()),
    ("detach", lambda s: s.detach()),
    ("clone", lambda s: s.clone()),
    ("mul", lambda s: s * 2),
    ("rmul", lambda s: 0.5 * s),
    ("div", lambda s: s / 4),
    ("neg", lambda s: -s),
    ("add_self", lambda s: s + s),
    ("add_coalesced", lambda s: s.coalesce() + (s * 3).coalesce()),
    ("sub_other", lambda s: s - s.coalesce().t().t()),
    ("t", lambda s: s.t()),
    ("transpose", lambda s: s.transpose(1, 0)),
    ("sum_dim0", lambda s: s.sum(0) if s.is_sparse else s),
]


# Uncoalesced + differently uncoalesced: PyTorch's stored entries follow its kernel's internals
# (here, the first operand's pattern); ember concatenates. The tensors are equal once coalesced.
SAME_VALUE_ONLY = {"sub_other"}


@pytest.mark.parametrize("name, fn", CONVERSIONS, ids=[c[0] for c in CONVERSIONS])
def test_sparse_methods_match_torch(name, fn, device):
    idx, vals = [[0, 1, 1, 0], [2, 0, 2, 2]], [3.0, 4.0, 5.0, 1.0]
    e = fn(ember.sparse_coo_tensor(idx, vals, (2, 3), device=device))
    t = fn(torch.sparse_coo_tensor(idx, vals, (2, 3)))
    assert e.device.type == ("cpu" if name == "cpu" else device)
    if name in SAME_VALUE_ONLY:
        e, t = e.coalesce(), t.coalesce()
    same_sparse(e, t)


def test_add_of_different_patterns_matches_torch():
    a = [[[0, 1, 1, 0], [2, 0, 2, 2]], [3.0, 4.0, 5.0, 1.0]]
    b = [[[1], [1]], [7.0]]
    for coalesce in (False, True):
        es, ts = [], []
        for i, v in (a, b):
            e, t = ember.sparse_coo_tensor(i, v, (2, 3)), torch.sparse_coo_tensor(i, v, (2, 3))
            es.append(e.coalesce() if coalesce else e)
            ts.append(t.coalesce() if coalesce else t)
        for e, t in (
            (es[0] + es[1], ts[0] + ts[1]),
            (es[0].add(es[1], alpha=2), ts[0].add(ts[1], alpha=2)),
        ):
            assert e.is_coalesced() == t.is_coalesced()
            same_sparse(e.coalesce(), t.coalesce())  # uncoalesced: entry order is torch's internals
    mixed = ember.sparse_coo_tensor(*a, (2, 3)) + ember.sparse_coo_tensor(*b, (2, 3)).double()
    assert mixed.dtype is ember.float64


SUMS = [None, 0, 1, -1, (0, 1), (1, 0)]


@pytest.mark.parametrize("dim", SUMS, ids=[str(d) for d in SUMS])
@pytest.mark.parametrize("hybrid", [False, True], ids=["plain", "hybrid"])
def test_sparse_sum_matches_torch(dim, hybrid, device):
    idx = [[0, 1, 1, 0], [2, 0, 2, 2]]
    vals = np.arange(8.0).reshape(4, 2) if hybrid else np.arange(4.0)
    size = (2, 3, 2) if hybrid else (2, 3)
    ev = ember.tensor(vals, device=device, requires_grad=True)
    tv = torch.tensor(vals, requires_grad=True)
    e = ember.sparse.sum(ember.sparse_coo_tensor(idx, ev, size), dim)
    t = torch.sparse.sum(torch.sparse_coo_tensor(idx, tv, size), dim)
    if t.is_sparse:
        same_sparse(e, t)
        e, t = e.to_dense(), t.to_dense()
    same(e, t)
    (e * e).sum().backward()
    (t * t).sum().backward()
    same(ev.grad, tv.grad)


def test_sparse_leaf_grads_match_torch():
    """``to_dense`` and ``sparse.sum`` give a sparse leaf a sparse gradient on its coalesced
    pattern (repeats get one entry)."""
    idx, vals = [[0, 1, 1, 0], [2, 0, 2, 2]], [3.0, 4.0, 5.0, 1.0]
    w = np.arange(6.0).reshape(2, 3)
    for loss in (
        lambda m, s: (s.to_dense() * m.tensor(w, dtype=m.float32)).sum(),
        lambda m, s: m.sparse.sum(s) * 2,
    ):
        e = ember.sparse_coo_tensor(idx, vals, (2, 3), requires_grad=True)
        t = torch.sparse_coo_tensor(idx, vals, (2, 3), requires_grad=True)
        loss(ember, e).backward()
        loss(torch, t).backward()
        assert e.grad.is_sparse and t.grad.is_sparse
        same(e.grad.to_dense(), t.grad.to_dense())
        same(e.grad.coalesce()._indices(), t.grad.coalesce()._indices())
        e.grad = None
        assert e.grad is None


def test_non_leaf_metadata_matches_torch():
    v = ember.tensor([1.0, 2.0], requires_grad=True)
    s = ember.sparse_coo_tensor([[0, 1], [1, 0]], v, (2, 2))
    ts = torch.sparse_coo_tensor([[0, 1], [1, 0]], torch.tensor([1.0, 2.0], requires_grad=True))
    assert (s.is_leaf, s.requires_grad) == (ts.is_leaf, ts.requires_grad)
    assert s.grad_fn.name() == type(ts.grad_fn).__name__
    assert repr(s) == repr(ts).replace("torch.", "ember.")
    assert s.grad is None
    assert not s.detach().requires_grad and s.detach().is_leaf


# (name, build with mod, torch's message fragment (check_invariants=True where torch needs it))
ERRORS = [
    (
        "index_beyond_size",
        lambda m, **k: m.sparse_coo_tensor([[0, 1], [0, 3]], [1.0, 2.0], (2, 3), **k),
        "size is inconsistent with indices: for dim 1, size is 3 but found index 3",
    ),
    (
        "negative_index",
        lambda m, **k: m.sparse_coo_tensor([[0, -1], [0, 0]], [1.0, 2.0], (2, 3), **k),
        "found negative index -1 for dim 0",
    ),
    (
        "negative_index_inferred",
        lambda m, **k: m.sparse_coo_tensor([[0, -1], [0, 0]], [1.0, 2.0], **k),
        "found negative index -1 for dim 0",
    ),
    (
        "nnz_mismatch",
        lambda m, **k: m.sparse_coo_tensor([[0, 1], [0, 0]], [1.0, 2.0, 3.0], (2, 3), **k),
        "indices and values must have same nnz, but got nnz from indices: 2, nnz from values: 3",
    ),
    (
        "indices_1d",
        lambda m, **k: m.sparse_coo_tensor([0, 1], [1.0, 2.0], (2, 3), **k),
        "indices must be sparse_dim x nnz, but got: [2]",
    ),
    (
        "size_too_short",
        lambda m, **k: m.sparse_coo_tensor([[0, 1], [0, 0]], [1.0, 2.0], (2,), **k),
        "'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = 1, sparse_dim = 2, "
        "dense_dim = 0",
    ),
    (
        "dense_size_mismatch",
        lambda m, **k: m.sparse_coo_tensor([[0, 1], [0, 0]], [[1.0, 2], [3, 4]], (2, 3, 4), **k),
        "values has incorrect size, expected [2, 4], got [2, 2]",
    ),
    (
        "uncoalesced_indices",
        lambda m, **k: m.sparse_coo_tensor([[0, 0]], [1.0, 2.0], (2,), **k).indices(),
        "Cannot get indices on an uncoalesced tensor, please call .coalesce() first",
    ),
    (
        "uncoalesced_values",
        lambda m, **k: m.sparse_coo_tensor([[0, 0]], [1.0, 2.0], (2,), **k).values(),
        "Cannot get values on an uncoalesced tensor, please call .coalesce() first",
    ),
    (
        "add_sizes",
        lambda m, **k: (
            m.sparse_coo_tensor([[0]], [1.0], (2,), **k)
            + m.sparse_coo_tensor([[0]], [1.0], (3,), **k)
        ),
        "add: expected sizes of 'self' and 'other' to match, but [2] != [3]",
    ),
    (
        "add_dense",
        lambda m, **k: m.sparse_coo_tensor([[0]], [1.0], (2,), **k) + m.ones(2),
        "add(sparse, dense) is not supported",
    ),
    (
        "numpy",
        lambda m, **k: m.sparse_coo_tensor([[0]], [1.0], (2,), **k).numpy(),
        "can't convert Sparse layout tensor to numpy",
    ),
    (
        "sum_dim_repeated",
        lambda m, **k: m.sparse.sum(m.sparse_coo_tensor([[0]], [1.0], (2,), **k), (0, 0)),
        "dim 0 appears multiple times in the list of dims",
    ),
]


@pytest.mark.parametrize("name, fn, fragment", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_carry_torchs_message(name, fn, fragment):
    takes_check = "size" in name or "index" in name and "uncoalesced" not in name
    with pytest.raises(Exception, match="") as want:
        fn(torch, **({"check_invariants": True} if takes_check else {}))
    assert fragment in str(want.value)
    with pytest.raises(ember.EmberError) as got:
        fn(ember)
    assert fragment in str(got.value)
    assert isinstance(got.value, (RuntimeError, TypeError, ValueError, IndexError))


def test_float_indices_are_refused():
    """PyTorch truncates float indices silently; ember refuses them."""
    with pytest.raises(ember.DTypeError, match="sparse_coo_tensor: indices must be an integer"):
        ember.sparse_coo_tensor(ember.tensor([[0.5]]), [1.0])


@pytest.mark.parametrize("device", ["cuda"], indirect=True)
def test_index_check_on_cuda_is_deferred_to_the_next_read(device):
    with pytest.raises(ember.EmberIndexError, match="for dim 0, size is 3 but found index 5"):
        s = ember.sparse_coo_tensor(
            ember.tensor([[0, 5]], device=device), ember.ones(2, device=device), (3,)
        )
        s._values().cpu()
