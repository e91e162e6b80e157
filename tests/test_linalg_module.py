"""ember.linalg (and the torch.* aliases det, logdet, slogdet, inverse, cholesky, svd,
matrix_power) against torch: values, first and second-order gradients, errors."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _spd(rng, n=3, batch=()):
    a = rng.standard_normal((*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _general(rng, n=3, batch=()):
    return rng.standard_normal((*batch, n, n)) + 2 * np.eye(n)


CASES = [
    ("inv", lambda m, a: m.linalg.inv(a), _general),
    ("inverse", lambda m, a: m.inverse(a), lambda r: _general(r, 3, (2,))),
    ("det", lambda m, a: m.linalg.det(a), lambda r: _general(r, 3, (2,))),
    ("logdet", lambda m, a: m.logdet(a), _spd),
    ("slogdet", lambda m, a: m.linalg.slogdet(a)[1], _general),
    ("solve", lambda m, a: m.linalg.solve(a, a[..., :1] * 2 + 1), _general),
    ("solve_vec", lambda m, a: m.linalg.solve(a, a[0]), _general),
    ("cholesky", lambda m, a: m.linalg.cholesky(a), lambda r: _spd(r, 3, (2,))),
    ("cholesky_upper", lambda m, a: m.linalg.cholesky(a, upper=True), _spd),
    ("eigvalsh", lambda m, a: m.linalg.eigvalsh(a), _spd),
    ("eigh_vectors_abs", lambda m, a: m.linalg.eigh(a)[1].abs(), _spd),
    ("svdvals", lambda m, a: m.linalg.svdvals(a), lambda r: r.standard_normal((4, 3))),
    ("matrix_norm_fro", lambda m, a: m.linalg.matrix_norm(a), _general),
    ("matrix_norm_nuc", lambda m, a: m.linalg.matrix_norm(a, "nuc"), _general),
    ("matrix_norm_2", lambda m, a: m.linalg.matrix_norm(a, 2), _general),
    ("matrix_norm_1", lambda m, a: m.linalg.matrix_norm(a, 1), _general),
    ("matrix_norm_inf", lambda m, a: m.linalg.matrix_norm(a, float("inf")), _general),
    ("vector_norm_3", lambda m, a: m.linalg.vector_norm(a, 3, dim=1), _general),
    ("norm", lambda m, a: m.linalg.norm(a), _general),
    ("matrix_power", lambda m, a: m.linalg.matrix_power(a, 3), _general),
    ("matrix_power_neg", lambda m, a: m.matrix_power(a, -2), _general),
    ("multi_dot", lambda m, a: m.linalg.multi_dot([a, a.T, a]), _general),
]


@pytest.mark.parametrize("name, fn, make", CASES, ids=[c[0] for c in CASES])
def test_values_and_grads_match_torch(device, name, fn, make):
    a = make(np.random.default_rng(0))
    ta = torch.tensor(a, requires_grad=True)
    ea = ember.tensor(a, device=device, requires_grad=True)
    want, got = fn(torch, ta), fn(ember, ea)
    np.testing.assert_allclose(
        got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-8, atol=1e-10
    )
    w = np.random.default_rng(1).standard_normal(tuple(want.shape))
    (want * torch.tensor(w)).sum().backward()
    (got * ember.tensor(w, device=device)).sum().backward()
    np.testing.assert_allclose(ea.grad.cpu().numpy(), ta.grad.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", ["inv", "logdet", "solve", "cholesky", "eigvalsh"])
def test_second_order(name):
    fns = {
        "inv": lambda a: ember.linalg.inv(a).sum(),
        "logdet": lambda a: ember.logdet(a @ a.T + 3 * ember.eye(3, dtype=a.dtype)),
        "solve": lambda a: ember.linalg.solve(a + 3 * ember.eye(3, dtype=a.dtype), a[:, 0]).sum(),
        "cholesky": lambda a: ember.linalg.cholesky(
            a @ a.T + 3 * ember.eye(3, dtype=a.dtype)
        ).sum(),
        "eigvalsh": lambda a: (ember.linalg.eigvalsh(a + a.T) ** 2).sum(),
    }
    a = ember.tensor(_general(np.random.default_rng(2)), requires_grad=True)
    assert ember.autograd.gradcheck(fns[name], (a,))
    assert ember.autograd.gradgradcheck(fns[name], (a,))


def test_svdvals_first_order():
    a = ember.tensor(np.random.default_rng(4).standard_normal((4, 3)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.linalg.svdvals(t).sum(), (a,))


def test_svd_and_rank(device):
    a = np.random.default_rng(3).standard_normal((4, 3))
    u, s, vh = ember.linalg.svd(ember.tensor(a, device=device))
    rebuilt = ((u * s.unsqueeze(0)) @ vh).cpu().numpy()
    np.testing.assert_allclose(rebuilt, a, atol=1e-10)
    t = torch.svd(torch.tensor(a))
    np.testing.assert_allclose(ember.svd(ember.tensor(a)).S.numpy(), t.S.numpy(), rtol=1e-10)
    low = np.outer([1.0, 2.0, 3.0], [1.0, -1.0])
    assert ember.linalg.matrix_rank(ember.tensor(low, device=device)).item() == 1
    sign, logabs = ember.linalg.slogdet(ember.tensor([[0.0, 1.0], [1.0, 0.0]], device=device))
    assert sign.item() == -1.0 and abs(logabs.item()) < 1e-12


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: ember.linalg.inv(ember.ones(2, 3)),
            r"linalg.inv: A must be batches of square matrices, but they are 2 by 3",
        ),
        (
            lambda: ember.linalg.inv(ember.ones(2, 2)),
            r"linalg.inv: the input \(shape \(2, 2\)\) is singular",
        ),
        (
            lambda: ember.linalg.cholesky(-ember.eye(2)),
            "linalg.cholesky: the input .* is not positive-definite",
        ),
        (
            lambda: ember.linalg.solve(ember.eye(2), ember.ones(3)),
            r"linalg.solve: incompatible shapes of A \(2, 2\) and B \(3,\)",
        ),
        (
            lambda: ember.linalg.det(ember.ones(2, 2, dtype=ember.int64)),
            "linalg.slogdet: expected a floating input",
        ),
    ],
)
def test_errors(call, match):
    with pytest.raises(ember.EmberError, match=match):
        call()
