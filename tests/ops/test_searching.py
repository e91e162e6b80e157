"""Finding, counting and index-driven copies (ember/functions/searching.py) against torch."""

import re

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


def _sorted_and_values(seq_shape, values_shape, ties=False):
    """A sorted sequence (with repeats when ``ties``) and values that hit it exactly."""

    def make(rng):
        seq = np.sort(rng.standard_normal(seq_shape), axis=-1)
        if ties:
            seq = np.round(seq, 1)
        vals = rng.standard_normal(values_shape)
        flat = vals.reshape(-1)
        flat[::3] = seq.reshape(-1)[: flat[::3].size]  # exact matches test left vs right
        return [seq, vals]

    return make


def _search_case(name, fn, seq_shape, values_shape, ties=False):
    return OpCase(
        name,
        fn,
        [seq_shape, values_shape],
        make=_sorted_and_values(seq_shape, values_shape, ties),
        grad=False,
        gradgrad=False,
    )


def _ref_histc(a, bins, lo, hi):
    return np.histogram(a, bins, (lo, hi))[0].astype(a.dtype)


CASES += [
    _search_case("searchsorted_1d", lambda m, s, v: m.searchsorted(s, v), (9,), (4, 5)),
    _search_case(
        "searchsorted_right_ties", lambda m, s, v: m.searchsorted(s, v, right=True), (12,), (7,), 1
    ),
    _search_case(
        "searchsorted_nd", lambda m, s, v: m.searchsorted(s, v, side="right"), (2, 3, 6), (2, 3, 4)
    ),
    _search_case(
        "searchsorted_int32", lambda m, s, v: m.searchsorted(s, v, out_int32=True), (5,), (3,)
    ),
    _search_case("searchsorted_0d_values", lambda m, s, v: m.searchsorted(s, v), (4,), ()),
    _search_case("searchsorted_empty_values", lambda m, s, v: m.searchsorted(s, v), (4,), (0,)),
    _search_case("bucketize", lambda m, s, v: m.bucketize(v, s), (7,), (3, 4)),
    _search_case("bucketize_right", lambda m, s, v: m.bucketize(v, s, right=True), (7,), (5,), 1),
    OpCase(
        "histc",
        lambda m, a: m.histc(a, bins=7, min=-1.5, max=2.0),
        [(50,)],
        ref=lambda a: _ref_histc(a, 7, -1.5, 2.0),
        grad=False,
        gradgrad=False,
    ),
    OpCase(
        "histc_data_range",
        lambda m, a: m.histc(a, bins=5),
        [(4, 10)],
        ref=lambda a: _ref_histc(a.reshape(-1), 5, a.min(), a.max()),
        grad=False,
        gradgrad=False,
    ),
    OpCase(
        "count_nonzero",
        lambda m, a: m.count_nonzero(a, dim=1),
        [(3, 4)],
        make=lambda rng: [rng.integers(-1, 2, (3, 4)).astype("float64")],
        ref=lambda a: np.count_nonzero(a, axis=1),
        grad=False,
    ),
    # outputs whose shape depends on the values: no graph (data_dependent)
    OpCase(
        "nonzero",
        lambda m, a: m.nonzero(a),
        [(3, 4)],
        make=lambda rng: [rng.integers(-1, 2, (3, 4)).astype("float64")],
        ref=np.argwhere,
        grad=False,
        data_dependent=True,
    ),
    OpCase(
        "argwhere",
        lambda m, a: m.argwhere(a),
        [(2, 3)],
        make=lambda rng: [rng.random((2, 3)) < 0.5],
        ref=np.argwhere,
        grad=False,
        data_dependent=True,
    ),
    OpCase(
        "unique",
        lambda m, a: m.unique(a),
        [(3, 4)],
        make=lambda rng: [rng.integers(0, 5, (3, 4))],
        ref=np.unique,
        grad=False,
        data_dependent=True,
    ),
    OpCase(
        "unique_consecutive",
        lambda m, a: m.unique_consecutive(a),
        [(8,)],
        make=lambda rng: [np.array([1, 1, 2, 2, 3, 1, 1, 2])],
        ref=lambda a: np.array([1, 2, 3, 1, 2]),
        grad=False,
        data_dependent=True,
    ),
    OpCase(
        "bincount",
        lambda m, a: m.bincount(a),
        [(6,)],
        make=lambda rng: [rng.integers(0, 5, 6)],
        ref=np.bincount,
        grad=False,
        data_dependent=True,
    ),
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


NAN = float("nan")


@pytest.mark.parametrize(
    "seq, vals, kw",
    [
        ([1.0, NAN], [NAN, 5.0, 0.5], {}),  # NaN: PyTorch's comparisons, not NumPy's order
        ([1.0, 2.0], [NAN, 5.0], {"right": True}),
        ([[1.0, 2.0], [3.0, 4.0]], [[NAN, 5.0, 0.0], [3.0, 3.0, 3.5]], {"right": True}),
        ([], [1.0, -1.0], {}),
        ([1, 3, 5], [2.5, 3.0], {}),  # int64 sequence, float values: promoted
        ([1.0, 2.0], [1, 2], {"side": "right"}),
        ([16777217], [16777216.5], {"right": True}),  # compared in float32, as PyTorch does
        ([3.0, 1.0, 2.0], [2.0, 0.0], {"sorter": [1, 2, 0]}),
        ([[3, 1, 2], [9, 7, 8]], [[2], [8]], {"sorter": [[1, 2, 0], [1, 2, 0]], "right": True}),
    ],
)
def test_searchsorted_edges_as_torch(device, seq, vals, kw):
    kw_t = dict(kw)
    kw_e = dict(kw)
    if "sorter" in kw:
        kw_t["sorter"] = torch.tensor(kw["sorter"])
        kw_e["sorter"] = ember.tensor(kw["sorter"], device=device)
    want = torch.searchsorted(torch.tensor(seq), torch.tensor(vals), **kw_t)
    got = ember.searchsorted(
        ember.tensor(seq, device=device), ember.tensor(vals, device=device), **kw_e
    )
    assert got.dtype is ember.int64 and got.device.type == device
    assert got.cpu().tolist() == want.tolist()


@pytest.mark.parametrize("value", [3, 2.5, 16777216.5, True])
@pytest.mark.parametrize("seq", [[1, 3, 5], [1.0, 3.0, 5.0], [16777217]])
def test_searchsorted_and_bucketize_scalar_values_as_torch(device, seq, value):
    for right in (False, True):
        want = torch.searchsorted(torch.tensor(seq), value, right=right)
        got = ember.searchsorted(ember.tensor(seq, device=device), value, right=right)
        assert got.shape == () and got.item() == want.item()
        want_b = torch.bucketize(value, torch.tensor(seq), right=right)
        assert ember.bucketize(value, ember.tensor(seq, device=device), right=right).item() == (
            want_b.item()
        )


@pytest.mark.parametrize(
    "data, bins, lo, hi",
    [
        ([1.0, 2.0, 1.0, NAN, 3.0, float("inf"), -float("inf")], 4, 0, 3),  # NaN, inf: not counted
        ([2.0, 2.0], 4, 0, 0),  # one point: widened by 1 on each side
        ([], 4, 0, 0),
        ([1.0, 2.0], 2, 1.5, 1.5),  # min == max (not 0): the data's range too
        ([0.1, 0.2, 0.3, 0.7, 1.0], 10, 0.1, 1.0),  # values on bin edges
        ([[0.5, 1.5], [2.5, 3.5]], 3, 0.5, 3.5),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc_edges_as_torch(device, data, bins, lo, hi, dtype):
    want = torch.histc(torch.tensor(data, dtype=getattr(torch, dtype)), bins, lo, hi)
    got = ember.histc(ember.tensor(data, dtype=getattr(ember, dtype), device=device), bins, lo, hi)
    assert got.dtype.name == dtype and got.device.type == device
    assert got.cpu().tolist() == want.tolist()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_histc_half_dtypes_as_torch(dtype):
    data = np.random.default_rng(0).uniform(-2, 2, 300)
    t = torch.tensor(data).to(getattr(torch, dtype))
    e = ember.tensor(data).to(getattr(ember, dtype))
    for bins, lo, hi in ((8, -1.0, 1.5), (5, 0, 0)):
        got, want = ember.histc(e, bins, lo, hi), torch.histc(t, bins, lo, hi)
        assert got.dtype.name == dtype and got.float().tolist() == want.float().tolist()


def test_histc_is_not_differentiable_as_in_torch():
    x = ember.tensor([0.5, 1.5], requires_grad=True)
    out = ember.histc(x, 2, 0, 2)
    assert not out.requires_grad and out.grad_fn is None


def _compiled_search(seq, vals, x):
    return (
        ember.searchsorted(seq, vals),
        ember.searchsorted(seq, 2.0, right=True),
        ember.bucketize(vals, seq, out_int32=True),
        ember.histc(x, 6, -2, 2),
        ember.histc(x, 4),
    )


@pytest.mark.parametrize("optimize", [True, False])
def test_search_and_histc_compile_as_eager_and_torch(device, optimize):
    f = ember.compile(_compiled_search, optimize=optimize)
    rng = np.random.default_rng(0)
    seq = np.sort(rng.standard_normal(10)).astype(np.float32)
    for k in range(3):
        vals = rng.standard_normal((3, 4)).astype(np.float32)
        x = (rng.standard_normal(50) * (k + 1)).astype(np.float32)  # a new data range each call
        args = [ember.tensor(a, device=device) for a in (seq, vals, x)]
        got = f(*args)
        eager = _compiled_search(*args)
        t = [torch.tensor(a) for a in (seq, vals, x)]
        want = (
            torch.searchsorted(t[0], t[1]),
            torch.searchsorted(t[0], 2.0, right=True),
            torch.bucketize(t[1], t[0], out_int32=True),
            torch.histc(t[2], 6, -2, 2),
            torch.histc(t[2], 4),
        )
        for g, e, w in zip(got, eager, want):
            assert g.dtype is e.dtype and g.cpu().tolist() == e.cpu().tolist() == w.tolist()
    assert f.traces == 1
    names = [type(n.op).__name__ for n in f.graph.nodes]
    assert names.count("SearchSorted") == 3 and names.count("Histc") == 2


def test_search_and_a_fixed_range_histc_need_no_host_read(device):
    """No value comes back to the host, so on a GPU the compiled step is captured as a CUDA
    graph (a capture that read one back would fail and warn)."""
    import warnings

    f = ember.compile(lambda s, v: (ember.searchsorted(s, v), ember.histc(v, 4, -1, 1)))
    s = ember.tensor([-0.5, 0.0, 0.5], device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for k in range(3):
            v = ember.tensor([-0.7, 0.1 * k, 0.6, 2.0], device=device)
            idx, hist = f(s, v)
            want = torch.histc(torch.tensor(v.cpu().tolist()), 4, -1, 1)
            assert hist.cpu().tolist() == want.tolist()
            assert idx.cpu().tolist() == ember.searchsorted(s, v).cpu().tolist()
    runner = f._latest.runner
    assert device == "cpu" or (runner.replays >= 1 and not runner.disabled)


def test_search_and_histc_in_a_static_graph():
    from ember import static

    g = static.Graph()
    with g.as_default():
        seq = static.placeholder((5,), name="seq")
        vals = static.placeholder((None,), name="vals")
        idx = ember.searchsorted(seq, vals, right=True)
        hist = ember.histc(vals, bins=3)
        assert len(idx.shape) == 1 and tuple(hist.shape) == (3,)
        with static.Session() as sess:
            s = np.array([1, 2, 3, 4, 5], np.float32)
            v = np.array([0.5, 2.0, 9.0, 3.5], np.float32)
            got_idx, got_hist = sess.run([idx, hist], {seq: s, vals: v})
    want_idx = torch.searchsorted(torch.tensor(s), torch.tensor(v), right=True)
    assert got_idx.tolist() == want_idx.tolist()
    assert got_hist.tolist() == torch.histc(torch.tensor(v), 3).tolist()


def test_a_saved_graph_with_search_ops_reads_back():
    import os
    import tempfile

    from ember import static

    f = ember.compile(lambda s, v: (ember.searchsorted(s, v, right=True), ember.histc(v, 3)))
    s, v = ember.tensor([1.0, 2.0, 3.0]), ember.tensor([2.0, 0.0, 5.0])
    want = [t.tolist() for t in f(s, v)]
    path = os.path.join(tempfile.mkdtemp(), "g")
    static.save(f, path)
    assert [t.tolist() for t in static.load(path)(s, v)] == want


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
            "index_add: index 3 is out of range for dimension 0 of size 3",
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


# (function of an input and a float tensor k whose values make the index or mask inside the
# function, a good k, a bad k): under ember.compile the index is symbolic while tracing, so the
# bounds / count checks are made when the graph runs, with eager's errors (and on cuda, the
# compiled function replays as a CUDA graph: the checks wait for no host)
RUN_TIME_CHECKS = [
    (lambda x, k: ember.take(x, k.long()), [0.0, -6.0, 5.0], [0.0, 6.0, 1.0]),
    (lambda x, k: x.index_add(1, k.long(), x[:, :2]), [2.0, 0.0], [3.0, 0.0]),
    (lambda x, k: x.index_add(1, k.long(), x[:, :2]), [2.0, 0.0], [-1.0, 0.0]),
    (lambda x, k: x.index_copy(1, k.long(), x[:, :2]), [2.0, 0.0], [0.0, -4.0]),
    (lambda x, k: x.index_fill(1, k.long(), -1.0), [1.0], [7.0]),
    (lambda x, k: x.masked_scatter(k.reshape(2, 1) > 0, x[0]), [1.0, 0.0], [1.0, 1.0]),
    # negative indices are refused by these, as in PyTorch (issue 16)
    (lambda x, k: x.gather(1, k.long().reshape(1, -1)), [2.0, 0.0], [0.0, -1.0]),
    (lambda x, k: x.scatter_add(1, k.long().reshape(1, -1), x[:1, :2]), [2.0, 0.0], [-1.0, 0.0]),
    (lambda x, k: x.scatter(1, k.long().reshape(1, -1), 5.0), [1.0], [3.0]),
    (lambda x, k: x.index_select(1, k.long()), [2.0, 0.0], [0.0, -1.0]),
    (lambda x, k: ember.take_along_dim(x, k.long().reshape(1, -1), 1), [2.0, 1.0], [3.0, 0.0]),
]


@pytest.mark.parametrize("fn, good, bad", RUN_TIME_CHECKS)
def test_index_checks_run_in_compiled_graphs(device, fn, good, bad):
    f = ember.compile(fn, verbose=False)
    x = ember.arange(6.0, device=device).reshape(2, 3)
    k = ember.tensor(good, device=device)
    assert f(x, k).cpu().tolist() == fn(x, k).cpu().tolist()
    k = ember.tensor(bad, device=device)
    # raised by the call on the CPU; on a GPU at the next read from the device (.cpu()),
    # without waiting for it inside the step (ember.backend.checks)
    with pytest.raises(ember.EmberError) as eager:
        fn(x, k).cpu()
    with pytest.raises(type(eager.value), match=re.escape(str(eager.value))):
        f(x, k).cpu()
    assert f.traces == 1


# (call on ember or torch, ember's error and message): PyTorch refuses each call too
SEARCH_ERRORS = [
    (
        lambda m: m.searchsorted(m.ones(2, 2), m.ones(3)),
        ember.ShapeError,
        r"searchsorted: .*first N-1 dimensions .* boundaries tensor \(2, 2\) and input value "
        r"tensor \(3,\)",
    ),
    (
        lambda m: m.searchsorted(m.tensor(1.0), m.ones(1)),
        ember.ShapeError,
        "searchsorted: boundaries tensor should have positive dimension",
    ),
    (
        lambda m: m.searchsorted(m.ones(1, 2), 3.0),
        ember.ShapeError,
        r"searchsorted: input value can be a scalar only .* shape \(1, 2\)",
    ),
    (
        lambda m: m.searchsorted(m.ones(2), m.ones(1), side="lft"),
        ember.ShapeError,
        "searchsorted: side can only be 'left' or 'right' but got 'lft'",
    ),
    (
        lambda m: m.searchsorted(m.ones(2), m.ones(1), side="left", right=True),
        ember.ShapeError,
        "searchsorted: side and right can't be set to opposites",
    ),
    (
        lambda m: m.searchsorted(m.ones(2), m.ones(1), sorter=m.tensor([0, 1], dtype=m.int32)),
        ember.DTypeError,
        "searchsorted: sorter must be a tensor of long dtype but got ember.int32",
    ),
    (
        lambda m: m.searchsorted(m.ones(2), m.ones(1), sorter=m.tensor([0, 1, 1])),
        ember.ShapeError,
        r"searchsorted: boundary and sorter must have the same size, .* \(2,\) .* \(3,\)",
    ),
    (
        lambda m: m.bucketize(m.ones(2), m.ones(2, 2)),
        ember.ShapeError,
        r"bucketize: boundaries must be 1-D, got shape \(2, 2\)",
    ),
    (
        lambda m: m.histc(m.tensor([1, 2])),
        ember.DTypeError,
        r"histc: expected a floating input, got ember.int64 \(shape \(2,\)\)",
    ),
    (lambda m: m.histc(m.ones(2), bins=0), ember.ShapeError, "histc: bins must be an int > 0"),
    (
        lambda m: m.histc(m.ones(2), bins=3, min=3, max=1),
        ember.ShapeError,
        "histc: max must be larger than min, got min 3 and max 1",
    ),
    (
        lambda m: m.histc(m.ones(2), min=float("nan"), max=1),
        ember.ShapeError,
        r"histc: range of \[nan, 1\] is not finite",
    ),
    (
        lambda m: m.histc(m.tensor([1.0, float("inf")])),
        ember.EmberError,
        r"histc: range of \[1, inf\] is not finite \(input of shape \(2,\)",
    ),
]


@pytest.mark.parametrize("call, error, match", SEARCH_ERRORS)
def test_search_and_histc_errors_as_torch(call, error, match):
    with pytest.raises((RuntimeError, NotImplementedError)):
        call(torch)
    with pytest.raises(error, match=match):
        call(ember)


def test_shape_errors_fail_when_the_graph_is_built():
    @ember.compile
    def f(s, v):
        return ember.searchsorted(s, v)

    with pytest.raises(ember.ShapeError, match=r"searchsorted: .*\(2, 2\).*\(3,\)"):
        f(ember.ones(2, 2), ember.ones(3))
