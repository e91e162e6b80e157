"""Gradients of gradients (create_graph=True) against PyTorch: second and third derivatives,
Hessian-vector products, gradient penalties."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def both(a):
    return ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def close(e, t, tol=1e-9):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=tol, rtol=tol)


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def derivatives(m, f, x, order):
    """[f'(x), f''(x), ...] of a scalar-summed f, each through grad(create_graph=True)."""
    out, y = [], f(x).sum()
    for _ in range(order):
        (y,) = m.autograd.grad(y, x, create_graph=True)
        out.append(y)
        y = y.sum()
    return out


@pytest.mark.parametrize(
    "name, f",
    [
        ("cube", lambda x: x**3),
        ("tanh_chain", lambda x: (x.tanh() * 2).tanh()),
        ("exp_mul_sin", lambda x: x.exp() * x.sin()),
        ("log_div", lambda x: (x * x + 1).log() / (x * x + 2)),
        ("sigmoid", lambda x: x.sigmoid()),
    ],
)
def test_second_and_third_derivatives(name, f):
    ex, tx = both(rnd(5))
    for e, t in zip(derivatives(ember, f, ex, 3), derivatives(torch, f, tx, 3)):
        close(e, t)


def test_cube_values():
    x = ember.tensor(2.0, requires_grad=True)
    d1, d2, d3 = derivatives(ember, lambda t: t**3, x, 3)
    assert (d1.item(), d2.item(), d3.item()) == (12.0, 12.0, 6.0)
    assert not d3.requires_grad or d3.grad_fn is not None


def mlp(x, w1, w2):
    return ((x.mm(w1).tanh().mm(w2)) ** 2).sum()


def test_hessian_vector_product_of_mm_net():
    a = [rnd(4, 3), rnd(3, 5, seed=1), rnd(5, 2, seed=2)]
    v = [rnd(3, 5, seed=3), rnd(5, 2, seed=4)]
    res = {}
    for m in (ember, torch):
        x = m.tensor(a[0])
        w1, w2 = (m.tensor(t, requires_grad=True) for t in a[1:])
        g1, g2 = m.autograd.grad(mlp(x, w1, w2), [w1, w2], create_graph=True)
        dot = (g1 * m.tensor(v[0])).sum() + (g2 * m.tensor(v[1])).sum()
        res[m.__name__] = m.autograd.grad(dot, [w1, w2])
    for e, t in zip(res["ember"], res["torch"]):
        close(e, t)


def test_gradient_penalty_via_backward_create_graph():
    a = rnd(3, 4)
    res = {}
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        w = m.tensor(rnd(4, 2, seed=1), requires_grad=True)
        y = x.mm(w).sin().sum()
        (gx,) = m.autograd.grad(y, x, create_graph=True)
        loss = y + (gx * gx).sum()
        loss.backward()
        res[m.__name__] = (x.grad, w.grad)
    for e, t in zip(res["ember"], res["torch"]):
        close(e, t)


def test_backward_create_graph_grad_is_differentiable():
    ex, tx = both(rnd(3))
    for x in (ex, tx):
        (x**3).sum().backward(create_graph=True)
        g = x.grad
        assert g.requires_grad
        x.grad = None
        g.sum().backward()
    close(ex.grad, tx.grad)


def test_broadcast_second_order():
    ea, ta = both(rnd(2, 3))
    eb, tb = both(rnd(3, seed=1))
    r = {}
    for m, a, b in ((ember, ea, eb), (torch, ta, tb)):
        (gb,) = m.autograd.grad((a * b * b).sum(), b, create_graph=True)
        r[m.__name__] = m.autograd.grad((gb * gb).sum(), [a, b])
    for e, t in zip(r["ember"], r["torch"]):
        close(e, t)


def test_gradgradcheck_on_composites():
    x = ember.tensor(rnd(3, 3), requires_grad=True)
    w = ember.tensor(rnd(3, 2, seed=1), requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda a, b: a.mm(b).tanh(), (x, w))
