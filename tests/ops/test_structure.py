"""Matrix structure (ember/functions/structure.py): op tables, torch parity, errors."""

import numpy as np
import pytest

import ember

from .harness import OpCase, generate

torch = pytest.importorskip("torch")


def _ints(*shape):
    return lambda rng: [rng.integers(-5, 5, shape).astype("float64")]


CASES = [
    OpCase("tril", lambda m, a: m.tril(a), [(4, 5)], ref=np.tril),
    OpCase("tril_k", lambda m, a: a.tril(-1), [(2, 3, 4)], ref=lambda a: np.tril(a, -1)),
    OpCase("triu", lambda m, a: m.triu(a, 2), [(5, 4)], ref=lambda a: np.triu(a, 2)),
    OpCase("diagonal", lambda m, a: a.diagonal(), [(4, 3)], ref=np.diagonal),
    OpCase(
        "diagonal_dims",
        lambda m, a: m.diagonal(a, 1, 0, 2),
        [(3, 2, 4)],
        ref=lambda a: np.diagonal(a, 1, 0, 2),
    ),
    OpCase("diagonal_neg", lambda m, a: a.diagonal(-1), [(4, 4)], ref=lambda a: np.diagonal(a, -1)),
    OpCase("diag_vec", lambda m, a: m.diag(a, 1), [(3,)], ref=lambda a: np.diag(a, 1)),
    OpCase("diag_mat", lambda m, a: m.diag(a, -1), [(3, 4)], ref=lambda a: np.diag(a, -1)),
    OpCase("diag_embed", lambda m, a: m.diag_embed(a), [(2, 3)]),
    OpCase("diag_embed_dims", lambda m, a: m.diag_embed(a, -1, 0, 2), [(2, 3)]),
    OpCase("diagflat", lambda m, a: m.diagflat(a), [(2, 2)], ref=np.diagflat),
    OpCase("trace", lambda m, a: m.trace(a), [(3, 4)], ref=np.trace),
    OpCase("kron", lambda m, a, b: m.kron(a, b), [(2, 3), (3, 2)], ref=np.kron),
    OpCase("kron_nd", lambda m, a, b: m.kron(a, b), [(2,), (2, 3)], ref=np.kron),
    OpCase("rot90", lambda m, a: m.rot90(a), [(2, 3)], ref=np.rot90),
    OpCase("rot90_k3", lambda m, a: a.rot90(3, (1, 2)), [(2, 3, 4)]),
    OpCase("rot90_k2", lambda m, a: m.rot90(a, -2), [(3, 4)], ref=lambda a: np.rot90(a, 2)),
    OpCase(
        "block_diag",
        lambda m, a, b: m.block_diag(a, b),
        [(2, 3), (1, 2)],
    ),
    OpCase("column_stack", lambda m, a, b: m.column_stack([a, b]), [(3,), (3, 2)]),
    OpCase(
        "tensordot",
        lambda m, a, b: m.tensordot(a, b, dims=2),
        [(2, 3, 4), (3, 4, 2)],
        ref=lambda a, b: np.tensordot(a, b, 2),
    ),
    OpCase(
        "tensordot_lists",
        lambda m, a, b: m.tensordot(a, b, dims=([0, 2], [1, 0])),
        [(2, 3, 4), (4, 2, 5)],
        ref=lambda a, b: np.tensordot(a, b, ([0, 2], [1, 0])),
    ),
    OpCase("inner", lambda m, a, b: m.inner(a, b), [(2, 3), (4, 3)], ref=np.inner),
    OpCase("mv", lambda m, a, b: m.mv(a, b), [(3, 4), (4,)], ref=np.dot),
    OpCase("cross", lambda m, a, b: m.cross(a, b, dim=1), [(2, 3), (2, 3)]),
    OpCase("cross_default", lambda m, a, b: m.cross(a, b), [(3, 2), (3, 2)]),
    OpCase(
        "baddbmm",
        lambda m, a, b, c: m.baddbmm(a, b, c, beta=0.5, alpha=2.0),
        [(2, 3, 2), (2, 3, 4), (2, 4, 2)],
    ),
    OpCase("addmv", lambda m, a, b, c: m.addmv(a, b, c, alpha=3.0), [(3,), (3, 2), (2,)]),
    OpCase("addr", lambda m, a, b, c: m.addr(a, b, c, beta=2.0), [(3, 2), (3,), (2,)]),
    OpCase("dist", lambda m, a, b: m.dist(a, b), [(3, 4), (3, 4)]),
    OpCase("dist_p1", lambda m, a, b: m.dist(a, b, 3), [(5,), (5,)], gradgrad=False),
    OpCase("cdist", lambda m, a, b: m.cdist(a, b), [(3, 4), (2, 4)]),
    OpCase("cdist_p1", lambda m, a, b: m.cdist(a, b, p=1.0), [(2, 3, 2), (2, 4, 2)]),
    OpCase(
        "broadcast_tensors",
        lambda m, a, b: m.broadcast_tensors(a, b),
        [(2, 1), (3,)],
        ref=lambda a, b: np.broadcast_arrays(a, b)[0],
    ),
    OpCase("cartesian_prod", lambda m, a, b: m.cartesian_prod(a, b), [(3,), (2,)]),
    OpCase("combinations", lambda m, a: m.combinations(a, 2), [(4,)]),
    OpCase(
        "combinations_with_replacement",
        lambda m, a: m.combinations(a, 2, with_replacement=True),
        [(3,)],
    ),
    OpCase(
        "meshgrid",
        lambda m, a, b: m.meshgrid(a, b, indexing="ij"),
        [(3,), (2,)],
        ref=lambda a, b: np.meshgrid(a, b, indexing="ij")[0],
    ),
    OpCase(
        "meshgrid_xy",
        lambda m, a, b: m.meshgrid(a, b, indexing="xy")[1],
        [(3,), (2,)],
        ref=lambda a, b: np.meshgrid(a, b, indexing="xy")[1],
    ),
]
generate(globals(), CASES)


@pytest.mark.parametrize("fn", ["tril_", "triu_"])
def test_inplace_triangles(device, fn):
    x = ember.arange(12.0, device=device).reshape(3, 4)
    out = getattr(x, fn)(1)
    assert out is x
    want = getattr(torch.arange(12.0).reshape(3, 4), fn)(1)
    assert x.cpu().tolist() == want.tolist()


def test_inplace_triangle_grad_through_non_leaf(device):
    w = ember.ones(3, 3, device=device, requires_grad=True)
    y = (w * 2).tril_()
    y.sum().backward()
    assert w.grad.cpu().tolist() == np.tril(np.full((3, 3), 2.0)).tolist()


@pytest.mark.parametrize(
    "row, col, offset", [(3, 3, 0), (4, 3, 1), (3, 5, -1), (0, 3, 0), (3, 4, 5)]
)
def test_triangle_indices(device, row, col, offset):
    for name in ("tril_indices", "triu_indices"):
        got = getattr(ember, name)(row, col, offset, device=device)
        want = getattr(torch, name)(row, col, offset)
        assert got.dtype == ember.int64 and got.device.type == device
        assert got.cpu().tolist() == want.tolist() and tuple(got.shape) == tuple(want.shape)


@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("sizes", [(2, 3), (2, 3, 4), (4,)])
def test_meshgrid(device, indexing, sizes):
    tensors = [np.arange(n) * (k + 1) for k, n in enumerate(sizes)]
    got = ember.meshgrid(*[ember.tensor(t, device=device) for t in tensors], indexing=indexing)
    want = torch.meshgrid(*[torch.tensor(t) for t in tensors], indexing=indexing)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.cpu().tolist() == w.tolist()


def test_broadcast_cartesian_combinations(device):
    a, b = ember.tensor([1, 2, 3], device=device), ember.tensor([4, 5], device=device)
    ta, tb = torch.tensor([1, 2, 3]), torch.tensor([4, 5])
    assert ember.cartesian_prod(a, b).cpu().tolist() == torch.cartesian_prod(ta, tb).tolist()
    for r, rep in [(2, False), (2, True), (3, False), (4, False)]:
        got = ember.combinations(a, r, with_replacement=rep)
        want = torch.combinations(ta, r, with_replacement=rep)
        assert got.cpu().tolist() == want.tolist() and tuple(got.shape) == tuple(want.shape)
    x, y = ember.broadcast_tensors(ember.ones(2, 1, device=device), a)
    assert tuple(x.shape) == tuple(y.shape) == (2, 3)


def test_block_diag_promotes_and_handles_vectors(device):
    got = ember.block_diag(
        ember.tensor([1, 2], device=device), ember.tensor([[1.5]], device=device)
    )
    want = torch.block_diag(torch.tensor([1, 2]), torch.tensor([[1.5]]))
    assert got.dtype == ember.float32 and got.cpu().tolist() == want.tolist()


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: ember.tril(ember.ones(3)),
            r"tril: input must have at least 2 dimensions, got shape \(3,\)",
        ),
        (
            lambda: ember.diag(ember.ones(2, 2, 2)),
            r"diag: expected a 1-D or 2-D input, got shape \(2, 2, 2\)",
        ),
        (
            lambda: ember.diagonal(ember.ones(2, 2), 0, 1, 1),
            "diagonal: dim1 and dim2 cannot be the same",
        ),
        (lambda: ember.trace(ember.ones(3)), r"trace: expected a matrix, got shape \(3,\)"),
        (
            lambda: ember.tensordot(ember.ones(2, 3), ember.ones(4, 5), 1),
            r"tensordot: contracted dimensions need to match.*\(2, 3\) and \(4, 5\)",
        ),
        (
            lambda: ember.mv(ember.ones(2, 3), ember.ones(2, 3)),
            r"mv: expected a matrix and a vector",
        ),
        (
            lambda: ember.cross(ember.ones(2, 2), ember.ones(2, 2)),
            r"cross: no dimension of size 3 in shape \(2, 2\)",
        ),
        (
            lambda: ember.cross(ember.ones(3, 2), ember.ones(3, 2), dim=1),
            "cross: dimension 1 does not have size 3",
        ),
        (
            lambda: ember.meshgrid(ember.ones(2, 2)),
            r"meshgrid: expects 0-D or 1-D tensors, got shape \(2, 2\)",
        ),
        (
            lambda: ember.meshgrid(ember.ones(2), indexing="yx"),
            "meshgrid: indexing must be 'ij' or 'xy'",
        ),
        (lambda: ember.rot90(ember.ones(2, 2), 1, (0, 0)), "rot90: the two dims must differ"),
        (
            lambda: ember.block_diag(ember.ones(1, 1, 1)),
            r"block_diag: input 0 must have 2 or fewer dimensions",
        ),
        (
            lambda: ember.cdist(ember.ones(2, 3), ember.ones(2, 4)),
            r"cdist: expected .* shapes \(2, 3\) and \(2, 4\)",
        ),
        (lambda: ember.inner(ember.ones(2), ember.ones(3)), r"inner: last dimensions must match"),
    ],
)
def test_errors_name_the_function_and_shapes(call, match):
    with pytest.raises(ember.EmberError, match=match):
        call()
