"""In-place writes through views (CopySlices): values and gradients against PyTorch, shared
version counters, and second order through the rebased history."""

import numpy as np
import pytest
import torch

import ember


def _run(m, prog, seed=0):
    rng = np.random.default_rng(seed)
    x = m.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = m.tensor(rng.standard_normal(4), requires_grad=True)
    out = prog(m, x, w)
    g = rng.standard_normal(tuple(out.shape))
    out.backward(m.tensor(g))
    return [out.detach().numpy().copy()] + [
        None if t.grad is None else t.grad.numpy().copy() for t in (x, w)
    ]


def _p_mul_select(m, x, w):
    y = x * 1
    y[0].mul_(2)
    return y


def _p_add_column(m, x, w):
    y = x * 2
    v = y[:, 1]
    v.add_(w[:3])
    return y * y


def _p_copy_into_buffer(m, x, w):
    buf = m.zeros(5, dtype=x.dtype)
    buf[1:].copy_(w)
    return buf * 3


def _p_view_used_after(m, x, w):
    y = x + 1
    v = y[1:, ::2]
    v.mul_(w[:2])
    return v.sum() + y.sum(0)  # the view and the base both carry the write


def _p_chain_of_views(m, x, w):
    y = x + 0
    y[1:].view(-1)[2:5].sub_(w[:3] * 4)  # slice, reshape, slice
    y.t()[1:, ::2][0].mul_(w[1])  # permute, slices, select
    return y


def _p_intermediate_view_used_after(m, x, w):
    y = x * 2
    u = y.t()
    u[1].add_(w[:3])  # u is an intermediate view of the chain y -> u -> u[1]
    return u.t() * 3 + y


def _p_setitem_through_view(m, x, w):
    y = x * 3
    row = y[2]
    row[1:3] = w[:2] ** 2
    return y.sum(0) + row


def _p_two_writes(m, x, w):
    y = x * 1
    y[0].add_(w)
    y[:, 0].mul_(w[:3])
    return y


def _p_narrow_write(m, x, w):
    y = x.clone()
    a = y[0].clone()
    b = y.narrow(0, 1, 1)
    b.div_(w.abs() + 1)
    return y + a.sum()


def _p_fill_view(m, x, w):
    y = x * w
    y[:, 2:].zero_()
    return y


def _p_view_of_no_grad_base_then_base_write(m, x, w):
    buf = m.ones(2, 4, dtype=x.dtype)
    buf[1].mul_(w)
    buf.add_(x[:2])
    return buf


def _p_transposed_base(m, x, w):
    y = (x * 1).t()  # the base of the next view is itself a (non-contiguous) view
    y[1].add_(w[:3])
    return x * 0 + y.t()


def _p_augmented_basic(m, x, w):
    y = x * 2
    y[:, 1] += w[:3]  # getitem (a view), += through it, setitem of the view onto itself
    y[0] *= 3
    v = y[1]
    v[1:] -= w[:3]
    return y * y


def _p_augmented_advanced(m, x, w):
    y = x * 2
    y[y < 0] = 0
    y[:, m.tensor([True, False, True, True])] *= 3
    y[m.tensor([2, 0]), 1] += w[:2]
    y[0, 0] = y[1, 1] + 2
    return y * y


def _p_self_reference(m, x, w):
    y = x * 2
    v = y[0]
    v.add_(y[1] + (v + v))
    u = y.t()[2]
    u.sub_(y[:, 0].exp())
    return y * y


PROGRAMS = [
    _p_mul_select,
    _p_add_column,
    _p_copy_into_buffer,
    _p_view_used_after,
    _p_chain_of_views,
    _p_setitem_through_view,
    _p_two_writes,
    _p_narrow_write,
    _p_intermediate_view_used_after,
    _p_fill_view,
    _p_view_of_no_grad_base_then_base_write,
    _p_transposed_base,
    _p_augmented_basic,
    _p_augmented_advanced,
    _p_self_reference,
]


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.__name__[3:])
def test_matches_torch(prog):
    got, want = _run(ember, prog), _run(torch, prog)
    for g, t in zip(got, want):
        if t is None:
            assert g is None or not np.any(g)
        else:
            np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("prog", PROGRAMS[:6] + PROGRAMS[-3:], ids=lambda p: p.__name__[3:])
def test_second_order(prog):
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = ember.tensor(rng.standard_normal(4), requires_grad=True)

    def f(x, w):
        return (prog(ember, x, w) ** 2).sum()

    assert ember.autograd.gradcheck(f, (x, w), fast_mode=True)
    assert ember.autograd.gradgradcheck(f, (x, w), fast_mode=True)


def test_grad_fn_after_write_through_view():
    x = ember.ones(2, 3, requires_grad=True)
    y = x * 1
    v = y[0]
    v.add_(1)
    assert y.grad_fn.name() == "CopySlices"
    assert v.grad_fn is not None and v._version is y._version and y._version[0] == 1


def test_version_counter_shared_by_views():
    x = ember.ones(3, requires_grad=True)
    w = ember.ones(3, requires_grad=True)
    y = x * 1
    z = y * w  # saves y
    y[1:].add_(1)  # bumps y's version through a view
    with pytest.raises(ember.AutogradError, match="modified by an inplace operation"):
        z.sum().backward()

    y = x * 1
    v = y[1:]
    z = v * w[1:]  # saves the view v
    y.add_(1)  # bumps v's version through the base
    with pytest.raises(ember.AutogradError, match="modified by an inplace operation"):
        z.sum().backward()


def test_leaf_view_write_refused_and_allowed_under_no_grad():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(ember.AutogradError, match="view of a leaf tensor that requires grad"):
        x[1:].mul_(2)
    with pytest.raises(ember.AutogradError, match="view of a leaf tensor that requires grad"):
        x[1:][0] = 3.0
    with ember.no_grad():
        x[1:].mul_(2)
    assert x.tolist() == [1.0, 2.0, 2.0] and x.is_leaf


def test_write_through_view_of_fortran_base():
    # the view chain copies when replayed on a C-ordered gradient: CopySlices writes by position
    a = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    results = []
    for m in (ember, torch):
        w = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        base = m.from_numpy(a.copy(order="F"))
        v = base.t().reshape(-1)
        v[1:4].copy_(w * 2)
        (base * m.arange(6.0).reshape(2, 3)).sum().backward()
        results.append((base.detach().numpy().copy(), w.grad.numpy().copy()))
    np.testing.assert_allclose(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1])


def test_consumer_recorded_before_write_keeps_old_history():
    got, want = (_run(m, _p_consumer_before_write) for m in (ember, torch))
    for g, t in zip(got, want):
        np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12)


def _p_consumer_before_write(m, x, w):
    y = x * 2
    s = y[0].sum()  # recorded before the write: must see the old values
    y[0].add_(w)
    return y * s
