"""The Tensor methods added over existing functions, against torch: in-place forms (values,
dtypes, version bumps, gradients through the tensor written), linalg methods, the matrix
properties and the predicates."""

import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _arrays(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal(s) + (2 * np.eye(s[-1]) if len(s) == 2 and s[0] == s[-1] else 0)
        for s in shapes
    ]


# name, call on (module, self, *others), shapes (self first), differentiable
INPLACE = [
    (
        "addmm_",
        lambda m, x, a, b: x.addmm_(a, b, beta=0.5, alpha=2),
        [(2, 4), (2, 3), (3, 4)],
        True,
    ),
    ("addmv_", lambda m, x, a, v: x.addmv_(a, v, alpha=3), [(2,), (2, 3), (3,)], True),
    ("addr_", lambda m, x, u, v: x.addr_(u, v, beta=2), [(2, 3), (2,), (3,)], True),
    ("baddbmm_", lambda m, x, a, b: x.baddbmm_(a, b), [(2, 3, 4), (2, 3, 5), (2, 5, 4)], True),
    ("cumsum_", lambda m, x: x.cumsum_(1), [(3, 4)], True),
    ("cumprod_", lambda m, x: x.cumprod_(0), [(3, 4)], True),
    ("exp2_", lambda m, x: x.exp2_(), [(3, 4)], True),
    ("renorm_", lambda m, x: x.renorm_(2, 0, 1.0), [(3, 4)], True),
    ("fill_diagonal_", lambda m, x: x.fill_diagonal_(3.5), [(3, 4)], True),
    ("fill_diagonal_wrap", lambda m, x: x.fill_diagonal_(-1.0, wrap=True), [(7, 2)], True),
    ("fill_diagonal_cube", lambda m, x: x.fill_diagonal_(2.0), [(3, 3, 3)], True),
    ("eq_", lambda m, x, y: x.eq_(y), [(3, 4), (3, 4)], False),
    ("ne_", lambda m, x: x.ne_(0.5), [(3, 4)], False),
    ("lt_", lambda m, x, y: x.lt_(y), [(3, 4), (4,)], False),
    ("le_", lambda m, x: x.le_(0.0), [(3, 4)], False),
    ("gt_", lambda m, x, y: x.gt_(y), [(3, 4), (3, 4)], False),
    ("ge_", lambda m, x: x.ge_(0.1), [(3, 4)], False),
    ("greater_", lambda m, x: x.greater_(0.1), [(3, 4)], False),
    ("greater_equal_", lambda m, x: x.greater_equal_(0.1), [(3, 4)], False),
    ("less_", lambda m, x: x.less_(0.1), [(3, 4)], False),
    ("less_equal_", lambda m, x: x.less_equal_(0.1), [(3, 4)], False),
    ("not_equal_", lambda m, x: x.not_equal_(0.1), [(3, 4)], False),
]


def _version(t) -> int:
    return t._version[0] if isinstance(t._version, list) else t._version


def _run(m, fn, arrays, grad):
    leaves = [m.tensor(a, requires_grad=grad) for a in arrays]
    x = leaves[0] * 1 if grad else leaves[0]
    before = _version(x)
    out = fn(m, x, *leaves[1:])
    assert out is x
    return leaves, x, before


@pytest.mark.parametrize("name, fn, shapes, diff", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_forms_match_torch(name, fn, shapes, diff):
    arrays = _arrays(shapes)
    tl, tx, tv = _run(torch, fn, arrays, diff)
    el, ex, ev = _run(ember, fn, arrays, diff)
    np.testing.assert_allclose(ex.detach().numpy(), tx.detach().numpy(), rtol=1e-10)
    assert str(ex.dtype)[6:] == str(tx.dtype)[6:]
    assert _version(ex) > ev and _version(tx) > tv  # bumped (torch: once per write it makes)
    if not diff:
        return
    w = np.random.default_rng(1).standard_normal(tuple(tx.shape))
    (tx * torch.tensor(w)).sum().backward()
    (ex * ember.tensor(w)).sum().backward()
    for e, t in zip(el, tl):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-8, atol=1e-12)


def test_inplace_forms_refuse_leaves_that_require_grad():
    x = ember.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="addmm_: a leaf tensor that requires grad"):
        x.addmm_(ember.ones(2, 2), ember.ones(2, 2))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        torch.ones(2, 2, requires_grad=True).addmm_(torch.ones(2, 2), torch.ones(2, 2))


def test_fill_diagonal_errors_match_torch():
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match="dimensions must larger than 1"):
            m.ones(3).fill_diagonal_(0)
        with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
            m.ones(2, 3, 3).fill_diagonal_(0)


METHODS = [
    ("det", lambda m, x: x.det(), (2, 3, 3)),
    ("logdet", lambda m, x: (x @ x.mT).logdet(), (3, 3)),
    ("slogdet", lambda m, x: x.slogdet().logabsdet, (3, 3)),
    ("inverse", lambda m, x: x.inverse(), (3, 3)),
    ("matrix_power", lambda m, x: x.matrix_power(3), (3, 3)),
    ("cholesky", lambda m, x: (x @ x.mT).cholesky(), (3, 3)),
    ("cholesky_upper", lambda m, x: (x @ x.mT).cholesky(upper=True), (3, 3)),
    ("svd_S", lambda m, x: x.svd().S, (4, 3)),
    ("pinverse", lambda m, x: x.pinverse(), (4, 3)),
    ("H", lambda m, x: x.H, (4, 3)),
    ("mH", lambda m, x: x.mH, (2, 4, 3)),
    ("adjoint", lambda m, x: x.adjoint(), (2, 4, 3)),
    ("cov", lambda m, x: x.cov(), (3, 5)),
    ("corrcoef", lambda m, x: x.corrcoef(), (3, 5)),
    ("renorm", lambda m, x: x.renorm(1, 1, 0.5), (3, 5)),
]


@pytest.mark.parametrize("name, fn, shape", METHODS, ids=[c[0] for c in METHODS])
def test_methods_match_torch(name, fn, shape):
    (a,) = _arrays([shape])
    ta, ea = torch.tensor(a, requires_grad=True), ember.tensor(a, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        want, got = fn(torch, ta), fn(ember, ea)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-9, atol=1e-12)
    w = np.random.default_rng(1).standard_normal(tuple(want.shape))
    (want * torch.tensor(w)).sum().backward()
    (got * ember.tensor(w)).sum().backward()
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=1e-7, atol=1e-10)


def test_histogram_method_matches_torch():
    a = np.random.default_rng(0).standard_normal(50).astype(np.float32)
    want, got = torch.tensor(a).histogram(6), ember.tensor(a).histogram(6)
    for e, t in zip(got, want):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda m: m.ones(2, 2, 2).H, "only supported on matrices"),
        (lambda m: m.ones(3).mH, "matrices or batches of matrices"),
        (lambda m: m.ones(3).adjoint(), "matrices or batches of matrices"),
    ],
)
def test_matrix_property_errors_match_torch(call, message):
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match=message):
            call(m)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int64", "float16", "float32"])
def test_predicates_match_torch(dtype):
    t, e = (
        torch.zeros(2, 3, dtype=getattr(torch, dtype)),
        ember.zeros(2, 3, dtype=getattr(ember, dtype)),
    )
    assert e.is_signed() == t.is_signed()
    assert e.is_complex() == t.is_complex()
    assert e.is_same_size(ember.ones(2, 3)) == t.is_same_size(torch.ones(2, 3))
    assert e.is_same_size(ember.ones(3, 2)) == t.is_same_size(torch.ones(3, 2))


def test_retains_grad_matches_torch():
    for m in (torch, ember):
        leaf = m.ones(2, requires_grad=True)
        mid = leaf * 2
        assert (leaf.retains_grad, mid.retains_grad) == (False, False)
        leaf.retain_grad()
        mid.retain_grad()
        assert (leaf.retains_grad, mid.retains_grad) == (False, True)
