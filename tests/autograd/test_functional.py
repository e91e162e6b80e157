"""ember.autograd.functional against torch.autograd.functional."""

import numpy as np
import pytest

import ember
from ember.autograd import functional as EF

torch = pytest.importorskip("torch")
TF = torch.autograd.functional


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def same(e, t):
    if isinstance(t, tuple):
        assert isinstance(e, tuple) and len(e) == len(t)
        for a, b in zip(e, t):
            same(a, b)
        return
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=1e-10, rtol=1e-10)


def f1(x):
    return x.sin() * x


def f2(x, y):
    return (x.mm(y)).tanh(), (x * x).sum()


def scalar(x, y):
    return (x.mm(y).tanh() ** 2).sum()


def args(m):
    return m.tensor(rnd(2, 3)), m.tensor(rnd(3, 2, seed=1))


def test_jacobian():
    same(EF.jacobian(f1, ember.tensor(rnd(3))), TF.jacobian(f1, torch.tensor(rnd(3))))
    same(EF.jacobian(f2, args(ember)), TF.jacobian(f2, args(torch)))


def test_hessian():
    same(
        EF.hessian(lambda x: (x**3).sum(), ember.tensor(rnd(3))),
        TF.hessian(lambda x: (x**3).sum(), torch.tensor(rnd(3))),
    )
    same(EF.hessian(scalar, args(ember)), TF.hessian(scalar, args(torch)))


def test_vjp_jvp_hvp_vhp():
    v = rnd(3, seed=5)
    x = rnd(3)
    same(EF.vjp(f1, ember.tensor(x), ember.tensor(v)), TF.vjp(f1, torch.tensor(x), torch.tensor(v)))
    same(EF.jvp(f1, ember.tensor(x), ember.tensor(v)), TF.jvp(f1, torch.tensor(x), torch.tensor(v)))
    vs = (rnd(2, 3, seed=6), rnd(3, 2, seed=7))
    for ef, tf in ((EF.hvp, TF.hvp), (EF.vhp, TF.vhp)):
        same(
            ef(scalar, args(ember), tuple(ember.tensor(a) for a in vs)),
            tf(scalar, args(torch), tuple(torch.tensor(a) for a in vs)),
        )


def test_create_graph_jacobian_is_differentiable():
    x = ember.tensor(rnd(3), requires_grad=True)
    j = EF.jacobian(f1, x, create_graph=True)
    j.sum().backward()
    tx = torch.tensor(rnd(3), requires_grad=True)
    TF.jacobian(f1, tx, create_graph=True).sum().backward()
    same(x.grad, tx.grad)
