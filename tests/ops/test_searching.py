"""Finding, counting and index-driven copies (ember/functions/searching.py) against torch."""

import numpy as np
import pytest

import ember

from .harness import OpCase, generate

torch = pytest.importorskip("torch")


def _idx(*values):
    return np.array(values, dtype=np.int64)


CASES = [
    OpCase(
        "take",
        lambda m, a: m.take(a, m.tensor(_idx(0, 5, -1, 5))),
        [(2, 3)],
        ref=lambda a: a.reshape(-1)[[0, 5, -1, 5]],
    ),
    OpCase(
        "take_along_dim",
        lambda m, a: m.take_along_dim(a, m.tensor(np.array([[0], [2]])), dim=1),
        [(2, 3)],
    ),
    OpCase(
        "take_along_dim_broadcast",
        lambda m, a: m.take_along_dim(a, m.tensor(np.array([[1, 0, 1]])), dim=0),
        [(2, 3)],
    ),
    OpCase(
        "take_along_dim_flat",
        lambda m, a: m.take_along_dim(a, m.tensor(_idx(4, 0))),
        [(2, 3)],
    ),
    OpCase(
        "repeat_interleave",
        lambda m, a: a.repeat_interleave(2, dim=1),
        [(2, 3)],
        ref=lambda a: np.repeat(a, 2, axis=1),
    ),
    OpCase(
        "repeat_interleave_tensor",
        lambda m, a: m.repeat_interleave(a, m.tensor(_idx(1, 0, 3)), dim=0),
        [(3, 2)],
        ref=lambda a: np.repeat(a, [1, 0, 3], axis=0),
    ),
    OpCase(
        "repeat_interleave_flat",
        lambda m, a: a.repeat_interleave(3),
        [(2, 2)],
        ref=lambda a: np.repeat(a, 3),
    ),
    OpCase(
        "index_add",
        lambda m, a, b: a.index_add(0, m.tensor(_idx(0, 2, 0)), b, alpha=2.0),
        [(3, 2), (3, 2)],
    ),
    OpCase(
        "index_add_dim1",
        lambda m, a, b: m.index_add(a, 1, m.tensor(_idx(1, 1)), b),
        [(2, 3), (2, 2)],
    ),
    OpCase(
        "index_copy",
        lambda m, a, b: a.index_copy(1, m.tensor(_idx(2, 0)), b),
        [(2, 3), (2, 2)],
    ),
    OpCase(
        "index_fill",
        lambda m, a: a.index_fill(1, m.tensor(_idx(0, 2)), -1.5),
        [(2, 3)],
    ),
    OpCase(
        "masked_scatter",
        lambda m, a, b: a.masked_scatter(
            m.tensor(np.array([[True, False, True], [False, True, False]])).to(a.device), b
        ),
        [(2, 3), (2, 3)],
    ),
    OpCase(
        "masked_scatter_broadcast_mask",
        lambda m, a, b: a.masked_scatter(m.tensor(np.array([True, False, True])).to(a.device), b),
        [(2, 3), (5,)],
    ),
    OpCase("unfold", lambda m, a: a.unfold(1, 2, 1), [(2, 4)]),
    OpCase("unfold_step", lambda m, a: a.unfold(0, 2, 3), [(7, 2)]),
]
generate(globals(), CASES)


NONZERO_INPUTS = [
    [0, 1, 0, 2],
    [[0, 1], [2, 0], [0, 0]],
    [],
    [[[1, 0], [0, 1]]],
    5,
    0,
    [0.0, -0.0, float("nan"), 1.5],
]


@pytest.mark.parametrize("data", NONZERO_INPUTS)
def test_nonzero_argwhere_count(device, data):
    e, t = ember.tensor(data, device=device), torch.tensor(data)
    for got, want in [(e.nonzero(), t.nonzero()), (ember.argwhere(e), torch.argwhere(t))]:
        assert got.dtype == ember.int64 and got.device.type == device
        assert tuple(got.shape) == tuple(want.shape) and got.cpu().tolist() == want.tolist()
    got_t, want_t = ember.nonzero(e, as_tuple=True), torch.nonzero(t, as_tuple=True)
    assert [g.cpu().tolist() for g in got_t] == [w.tolist() for w in want_t]
    assert ember.count_nonzero(e).item() == torch.count_nonzero(t).item()
    if t.ndim:
        assert ember.count_nonzero(e, dim=0).cpu().tolist() == torch.count_nonzero(t, 0).tolist()


UNIQUE_INPUTS = [[3, 1, 2, 3, 1, 1], [[1, 2], [1, 2], [0, 5]], [2.5, -1.0, 2.5], []]


@pytest.mark.parametrize("data", UNIQUE_INPUTS)
@pytest.mark.parametrize("dim", [None, 0])
def test_unique(device, data, dim):
    e, t = ember.tensor(data, device=device), torch.tensor(data)
    got = ember.unique(e, return_inverse=True, return_counts=True, dim=dim)
    want = torch.unique(t, return_inverse=True, return_counts=True, dim=dim)
    for g, w in zip(got, want):
        assert g.cpu().tolist() == w.tolist() and tuple(g.shape) == tuple(w.shape)
    assert e.unique().cpu().tolist() == t.unique().tolist()
    assert got[0].dtype == e.dtype


@pytest.mark.parametrize("data", [[1, 1, 2, 2, 3, 1, 1, 2], [[1, 1], [1, 1], [2, 0], [1, 1]], [7]])
@pytest.mark.parametrize("dim", [None, 0])
def test_unique_consecutive(device, data, dim):
    e, t = ember.tensor(data, device=device), torch.tensor(data)
    got = ember.unique_consecutive(e, return_inverse=True, return_counts=True, dim=dim)
    want = torch.unique_consecutive(t, return_inverse=True, return_counts=True, dim=dim)
    for g, w in zip(got, want):
        assert g.cpu().tolist() == w.tolist()


@pytest.mark.parametrize("weights", [None, [0.5, 1.0, 2.0, 0.25, 1.0]])
@pytest.mark.parametrize("minlength", [0, 8])
def test_bincount(device, weights, minlength):
    data = [1, 3, 3, 0, 5]
    e_w = None if weights is None else ember.tensor(weights, device=device)
    t_w = None if weights is None else torch.tensor(weights)
    got = ember.bincount(ember.tensor(data, device=device), e_w, minlength)
    want = torch.bincount(torch.tensor(data), t_w, minlength)
    assert got.dtype.name == str(want.dtype).split(".")[1]
    assert got.cpu().tolist() == want.tolist()


@pytest.mark.parametrize("bins, lo, hi", [(4, 0, 3), (5, 0, 0), (3, 1.5, 2.5)])
def test_histc(device, bins, lo, hi):
    data = [1.0, 2.0, 1.0, 2.5, 3.0, -1.0, 0.2]
    got = ember.histc(ember.tensor(data, device=device), bins, lo, hi)
    want = torch.histc(torch.tensor(data), bins, lo, hi)
    assert got.cpu().tolist() == want.tolist()


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_and_bucketize(device, right):
    seq, vals = [1, 3, 3, 5, 9], [0, 3, 4, 9, 10]
    e = ember.searchsorted(
        ember.tensor(seq, device=device), ember.tensor(vals, device=device), right=right
    )
    t = torch.searchsorted(torch.tensor(seq), torch.tensor(vals), right=right)
    assert e.dtype == ember.int64 and e.cpu().tolist() == t.tolist()
    side = "right" if right else "left"
    e2 = ember.searchsorted(
        ember.tensor(seq, device=device), ember.tensor(vals, device=device), side=side
    )
    assert e2.cpu().tolist() == t.tolist()
    rows = [[1, 2, 3], [0, 5, 10]]
    e3 = ember.searchsorted(
        ember.tensor(rows, device=device),
        ember.tensor([[2, 3], [6, -1]], device=device),
        right=right,
    )
    t3 = torch.searchsorted(torch.tensor(rows), torch.tensor([[2, 3], [6, -1]]), right=right)
    assert e3.cpu().tolist() == t3.tolist()
    eb = ember.bucketize(
        ember.tensor([[1, 5], [9, 3]], device=device),
        ember.tensor(seq, device=device),
        right=right,
        out_int32=True,
    )
    tb = torch.bucketize(
        torch.tensor([[1, 5], [9, 3]]), torch.tensor(seq), right=right, out_int32=True
    )
    assert eb.dtype == ember.int32 and eb.cpu().tolist() == tb.tolist()
    assert (
        ember.searchsorted(ember.tensor(seq, device=device), 4).item()
        == torch.searchsorted(torch.tensor(seq), 4).item()
    )


def test_repeat_interleave_counts_only_and_type_as(device):
    got = ember.repeat_interleave(ember.tensor([1, 0, 2], device=device))
    assert got.cpu().tolist() == torch.repeat_interleave(torch.tensor([1, 0, 2])).tolist()
    assert (
        ember.tensor([1, 2], device=device).type_as(ember.zeros(1, dtype=ember.float64)).dtype
        == ember.float64
    )


@pytest.mark.parametrize("name", ["index_add_", "index_copy_", "index_fill_", "masked_scatter_"])
def test_inplace_forms(device, name):
    args = {
        "index_add_": (0, [2, 0], [[1.0, 2.0], [3.0, 4.0]]),
        "index_copy_": (0, [2, 0], [[1.0, 2.0], [3.0, 4.0]]),
        "index_fill_": (1, [1], 7.0),
        "masked_scatter_": ([[True, False], [False, False], [True, True]], [5.0, 6.0, 7.0]),
    }[name]

    def run(lib, dev=None):
        x = lib.arange(6.0).reshape(3, 2)
        if dev:
            x = x.to(dev)
        conv = []
        for k, a in enumerate(args):
            if isinstance(a, list):
                dtype = lib.bool if isinstance(a[0], list) and isinstance(a[0][0], bool) else None
                if name != "masked_scatter_" and k == 1:
                    dtype = lib.int64
                a = lib.tensor(a, dtype=dtype) if dtype is not None else lib.tensor(a)
                if dev:
                    a = a.to(dev)
            conv.append(a)
        out = getattr(x, name)(*conv)
        assert out is x
        return x

    assert run(ember, device).cpu().tolist() == run(torch).tolist()


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: ember.bincount(ember.tensor([1.0])),
            ember.ShapeError,
            "bincount: input must be a 1-D tensor of non-negative integers",
        ),
        (
            lambda: ember.bincount(ember.tensor([1, -2])),
            ember.ShapeError,
            "bincount: input must be non-negative, found -2",
        ),
        (
            lambda: ember.take(ember.ones(2, 2), ember.tensor([4])),
            ember.EmberIndexError,
            "take: index 4 is out of range for a tensor of 4 elements",
        ),
        (
            lambda: ember.take(ember.ones(2), ember.tensor([0.0])),
            ember.DTypeError,
            "take: index must be an int64 or int32 tensor, got ember.float32",
        ),
        (
            lambda: ember.ones(3).index_add(0, ember.tensor([3]), ember.ones(1)),
            ember.EmberIndexError,
            "index_add: index out of range for dimension 0 of size 3",
        ),
        (
            lambda: ember.ones(3, 2).index_copy(0, ember.tensor([0]), ember.ones(2, 2)),
            ember.ShapeError,
            r"index_copy: source of shape \(2, 2\) does not match input \(3, 2\)",
        ),
        (
            lambda: ember.zeros(3).masked_scatter(ember.tensor([True, True, False]), ember.ones(1)),
            ember.ShapeError,
            "masked_scatter: mask has 2 True elements but source has only 1",
        ),
        (
            lambda: ember.arange(3).unfold(0, 4, 1),
            ember.ShapeError,
            "unfold: maximum size for tensor at dimension 0 is 3 but size is 4",
        ),
        (
            lambda: ember.tensor([1, 2]).repeat_interleave(ember.tensor([1, 2, 3])),
            ember.ShapeError,
            "repeat_interleave: repeats must have the same size",
        ),
        (
            lambda: ember.histc(ember.tensor([1, 2])),
            ember.DTypeError,
            "histc: expected a floating input",
        ),
        (
            lambda: ember.bucketize(ember.tensor([1]), ember.ones(2, 2)),
            ember.ShapeError,
            r"bucketize: boundaries must be 1-D, got shape \(2, 2\)",
        ),
    ],
)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
