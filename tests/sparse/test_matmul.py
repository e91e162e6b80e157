"""Sparse @ dense products against PyTorch 2.13: every entry point (``sparse.mm``, ``mm``,
``matmul``, ``@``, ``spmm``, ``sparse.addmm``, dense @ sparse, matrix @ vector) on patterns
with repeats, empty nnz and empty rows; values, the dense operand's gradient, the values'
gradient, and a sparse leaf's gradient (sparse through ``sparse.mm``, dense through ``mm``);
and the errors."""

import warnings

import numpy as np
import pytest
import torch

import ember

warnings.filterwarnings("ignore", message="Sparse invariant checks")

PATTERNS = {
    "repeats": ([[0, 1, 1, 0, 3], [2, 0, 2, 2, 1]], [3.0, 4.0, 5.0, 1.0, -2.0]),
    "empty_nnz": (np.zeros((2, 0), np.int64), np.zeros(0)),
    "one_row": ([[2, 2], [0, 1]], [1.5, -0.5]),
}
SIZE = (4, 3)

# name -> product of (module, sparse, dense) with the dense operand's shape
PRODUCTS = {
    "sparse.mm": (lambda m, s, d: m.sparse.mm(s, d), (3, 2)),
    "mm": (lambda m, s, d: m.mm(s, d), (3, 2)),
    "matmul": (lambda m, s, d: m.matmul(s, d), (3, 2)),
    "matmul_vector": (lambda m, s, d: m.matmul(s, d), (3,)),
    "matmul_op": (lambda m, s, d: s @ d, (3, 2)),
    "spmm": (lambda m, s, d: m.spmm(s, d), (3, 2)),
    "method_mm": (lambda m, s, d: s.mm(d), (3, 2)),
    "dense_at_sparse": (lambda m, s, d: d @ s, (2, 4)),
    "mm_dense_first": (lambda m, s, d: m.mm(d, s), (2, 4)),
    "addmm": (
        lambda m, s, d: m.sparse.addmm(m.ones(4, 2, dtype=d.dtype), s, d, beta=0.5, alpha=2),
        (3, 2),
    ),
}


def _run(mod, product, pattern, dshape, leaf: bool):
    idx, vals = PATTERNS[pattern]
    vals = mod.tensor(np.asarray(vals, np.float64), requires_grad=not leaf)
    s = mod.sparse_coo_tensor(mod.tensor(np.asarray(idx, np.int64)), vals, SIZE)
    if leaf:
        s.requires_grad_()
    d = mod.tensor(np.arange(np.prod(dshape), dtype=np.float64).reshape(dshape) / 7 - 0.5)
    d.requires_grad_()
    out = PRODUCTS[product][0](mod, s, d)
    w = mod.tensor(np.random.default_rng(0).standard_normal(tuple(out.shape)))
    (out * w).sum().backward()
    return out, d.grad, (s.grad if leaf else vals.grad)


def _same(e, t):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().cpu().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("pattern", list(PATTERNS))
@pytest.mark.parametrize("product", list(PRODUCTS))
@pytest.mark.parametrize("leaf", [False, True], ids=["values_grad", "leaf_grad"])
def test_products_and_gradients_match_torch(product, pattern, leaf):
    dshape = PRODUCTS[product][1]
    e_out, e_dg, e_sg = _run(ember, product, pattern, dshape, leaf)
    t_out, t_dg, t_sg = _run(torch, product, pattern, dshape, leaf)
    _same(e_out, t_out)
    _same(e_dg, t_dg)
    if t_sg is None:
        assert e_sg is None or not e_sg.to_dense().numpy().any()
        return
    assert e_sg.is_sparse == t_sg.is_sparse, "sparse vs dense leaf gradient, as torch gives it"
    if t_sg.is_sparse:
        _same(e_sg.coalesce()._indices(), t_sg.coalesce()._indices())
        e_sg, t_sg = e_sg.to_dense(), t_sg.to_dense()
    _same(e_sg, t_sg)


@pytest.mark.parametrize("product", ["sparse.mm", "dense_at_sparse", "matmul_vector"])
def test_products_on_cuda_equal_the_cpu(product, device):
    dshape = PRODUCTS[product][1]
    idx, vals = PATTERNS["repeats"]
    rng = np.random.default_rng(1)
    dense = rng.standard_normal(dshape).astype(np.float32)
    results = []
    for dev in ("cpu", device):
        v = ember.tensor(np.asarray(vals, np.float32), device=dev, requires_grad=True)
        s = ember.sparse_coo_tensor(ember.tensor(idx, device=dev), v, SIZE)
        d = ember.tensor(dense, device=dev, requires_grad=True)
        out = PRODUCTS[product][0](ember, s, d)
        assert out.device.type == dev
        (out * out).sum().backward()
        results.append([t.detach().cpu().numpy() for t in (out, d.grad, v.grad)])
    for got, want in zip(*results[::-1]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _sparse(mod, dtype="float32", size=SIZE, hybrid=False):
    vals = np.ones((2, 2) if hybrid else 2, dtype)
    return mod.sparse_coo_tensor(
        mod.tensor([[0, 1], [1, 2]]), mod.tensor(vals), size + ((2,) if hybrid else ())
    )


# (name, call with a module, torch's message fragment, ember's message fragment)
ERRORS = [
    (
        "inner_size",
        lambda m: m.sparse.mm(_sparse(m), m.ones(4, 2)),
        "Expected dim 0 size 3, got 4",
        "sparse.mm: shapes (4, 3) (sparse_coo) and (4, 2) cannot be multiplied (3 != 4)",
    ),
    (
        "dtype",
        lambda m: m.mm(_sparse(m), m.ones(3, 2, dtype=m.float64)),
        "expected scalar type Float but found Double",
        "mm: expected the sparse and dense operands to have the same dtype, got ember.float32 "
        "(sparse_coo) and ember.float64",
    ),
    (
        "hybrid",
        lambda m: m.sparse.mm(_sparse(m, hybrid=True), m.ones(3, 2)),
        "",
        "sparse.mm: the sparse operand must be a 2-D matrix without dense dims",
    ),
]


@pytest.mark.parametrize("name, call, torch_says, ember_says", ERRORS, ids=[e[0] for e in ERRORS])
def test_product_errors(name, call, torch_says, ember_says):
    with pytest.raises(RuntimeError) as want:
        call(torch)
    assert torch_says in str(want.value)
    with pytest.raises(ember.EmberError) as got:
        call(ember)
    assert ember_says in str(got.value)


def test_sparse_at_sparse_is_refused_clearly():
    with pytest.raises(ember.ShapeError, match="mm: sparse @ sparse is not supported"):
        ember.mm(_sparse(ember), _sparse(ember).t())


# dense-only functions given a sparse tensor: (call, the function name the error must carry)
DENSE_ONLY = [
    (lambda s: ember.exp(s), "exp"),
    (lambda s: ember.relu(s), "relu"),
    (lambda s: ember.nn.functional.softmax(s, 1), "softmax"),
    (lambda s: s.view(12), "view"),
    (lambda s: s.reshape(12), "reshape"),
    (lambda s: s[0], "getitem"),
    (lambda s: ember.cat([s, s]), "cat"),
    (lambda s: s.max(), "max"),
    (lambda s: ember.ones(4, 3) + s, "add"),
    (lambda s: s.item(), "item"),
]


@pytest.mark.parametrize("call, name", DENSE_ONLY, ids=[d[1] for d in DENSE_ONLY])
def test_dense_functions_refuse_sparse_by_name(call, name):
    """PyTorch: NotImplementedError "Could not run 'aten::exp' with arguments from the
    'SparseCPU' backend"; ember names the function and sparse_coo, never computes."""
    with pytest.raises(NotImplementedError) as got:
        call(_sparse(ember))
    assert isinstance(got.value, ember.EmberError)
    assert str(got.value).startswith(
        f"{name}: not supported for sparse_coo tensors (got size (4, 3)"
    )
