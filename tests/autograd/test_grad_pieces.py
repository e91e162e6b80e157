"""Gradients of a tensor used through several basic indexings (``split``, ``chunk``, slices):
the engine merges the pieces (``GradPieces``) and writes them with one ``BasicIndexGrads`` op,
instead of zeros, a write and a sum per piece. Values and gradients against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.ops import indexing as I


def _data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.fixture
def writes(monkeypatch):
    """The shapes and piece counts of every one-op gradient written, and of single pieces."""
    seen = []
    real_many, real_one = I.BasicIndexGrads.forward, I.BasicIndexGrad.forward

    def many(self, xp, *gs):
        seen.append(("many", self.shape, len(gs)))
        return real_many(self, xp, *gs)

    def one(self, xp, g):
        seen.append(("one", self.shape, 1))
        return real_one(self, xp, g)

    monkeypatch.setattr(I.BasicIndexGrads, "forward", many)
    monkeypatch.setattr(I.BasicIndexGrad, "forward", one)
    return seen


# name: (function of x for both libraries, x shape)
CASES = {
    "split in three (attention's q, k, v)": (
        lambda x: sum((p * (i + 1)).sum() for i, p in enumerate(x.split(4, -1))),
        (2, 3, 12),
    ),
    "chunk in four (an LSTM's gates)": (
        lambda x: (lambda i, f, g, o: (i.sigmoid() * g.tanh() + f * o).sum())(*x.chunk(4, 1)),
        (5, 8),
    ),
    "unequal parts, two unused": (lambda x: x.split([1, 2, 3, 2], 0)[1].exp().sum(), (8, 2)),
    "overlapping slices": (lambda x: (x[0:3] * x[1:4]).sum(), (5, 3)),
    "gaps between slices": (lambda x: (x[0:1] * 2).sum() + x[3:4].sum(), (5, 3)),
    "whole and sliced": (lambda x: (x * x).sum() + x[:, 1:].sum(), (3, 4)),
    "rows and columns": (lambda x: x[1].sum() + x[:, 2].sum() * 3, (4, 5)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_torch(name):
    fn, shape = CASES[name]
    x = _data(*shape)
    ex = ember.tensor(x, requires_grad=True)
    h = ex * 1.5  # a non-leaf: its gradient is merged in the engine's node gradients
    fn(h).backward()
    tx = torch.tensor(x, requires_grad=True)
    fn(tx * 1.5).backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_split_parts_are_written_by_one_op(writes):
    ex = ember.tensor(_data(2, 3, 12), requires_grad=True)
    CASES["split in three (attention's q, k, v)"][0](ex * 1.0).backward()
    assert writes == [("many", (2, 3, 12), 3)]


def test_unbind_steps_are_written_by_one_op(writes):
    """A recurrent layer's time steps: one op for all of them (the gradient of each step was
    zeros of the whole sequence)."""
    x = _data(7, 2, 3)
    ex = ember.tensor(x, requires_grad=True)
    steps = (ex * 1.0).unbind(0)
    sum((s * (i + 1)).sum() for i, s in enumerate(steps)).backward()
    assert writes == [("many", (7, 2, 3), 7)]
    tx = torch.tensor(x, requires_grad=True)
    sum((s * (i + 1)).sum() for i, s in enumerate((tx * 1.0).unbind(0))).backward()
    np.testing.assert_array_equal(ex.grad.numpy(), tx.grad.numpy())


def test_one_piece_is_basic_index_grad(writes):
    ex = ember.tensor(_data(4, 5), requires_grad=True)
    (ex * 1.0)[1:3].sum().backward()
    assert writes == [("one", (4, 5), 1)]
    np.testing.assert_array_equal(ex.grad.numpy()[1:3], 1.0)
    np.testing.assert_array_equal(ex.grad.numpy()[[0, 3]], 0.0)


def test_tiling_pieces_skip_the_zeros_and_others_keep_them():
    tile = ((("s", 0, 2, None),), (("s", 2, 5, None),))
    assert I._tiles(tile, (5, 3))
    assert not I._tiles(tile[:1], (5, 3))  # a gap
    assert not I._tiles(((("s", 0, 3, None),), (("s", 2, 5, None),)), (5, 3))  # overlap
    assert not I._tiles(((("s", 0, 4, 2),), (("s", 1, 5, 2),)), (5, 3))  # steps
    assert I._tiles(((1,), (0,)), (2, 3))  # an unbind's indices
    assert not I._tiles(((0,),), (2, 3)) and not I._tiles(((0,), (0,)), (1, 3))
    g = [np.ones((2, 3), np.float32), np.full((3, 3), 2.0, np.float32)]
    out = I.BasicIndexGrads(tile, (5, 3)).forward(np, *g)
    np.testing.assert_array_equal(out, np.concatenate(g))


def test_leaf_gradients_and_post_accumulate_hooks_get_tensors():
    x = _data(6, 4)
    w = ember.tensor(x, requires_grad=True)
    seen = []
    w.register_post_accumulate_grad_hook(lambda t: seen.append(type(t.grad)))
    a, b, c = w.split(2)
    (a.sum() + (b * 2).sum() + (c * c).sum()).backward()
    tw = torch.tensor(x, requires_grad=True)
    ta, tb, tc = tw.split(2)
    (ta.sum() + (tb * 2).sum() + (tc * tc).sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6)
    assert seen == [ember.Tensor]
    v = ember.tensor(x, requires_grad=True)
    (gv,) = ember.autograd.grad(sum(p.sum() for p in v.chunk(3)), v)
    np.testing.assert_array_equal(gv.numpy(), np.ones_like(x))


def test_retained_and_captured_intermediates_are_tensors():
    x = _data(4, 6)
    results = []
    for lib in (ember, torch):
        xt = lib.tensor(x, requires_grad=True)
        h = xt * 2
        h.retain_grad()
        q, k = h.chunk(2, 1)
        loss = (q * k).sum()
        (gh,) = lib.autograd.grad(loss, h, retain_graph=True)
        loss.backward()  # PyTorch's retained .grad takes both passes' gradients
        results.append((gh, h.grad))
    (gh, hg), (tgh, thg) = results
    assert isinstance(gh, ember.Tensor) and isinstance(hg, ember.Tensor)
    np.testing.assert_allclose(gh.numpy(), tgh.numpy(), rtol=1e-6)
    np.testing.assert_allclose(hg.numpy(), thg.numpy(), rtol=1e-6)


def test_second_order_through_the_merged_op():
    x = _data(3, 6)
    ex = ember.tensor(x, requires_grad=True)
    a, b = ex.chunk(2, 1)
    (g,) = ember.autograd.grad((a * a * b).sum(), ex, create_graph=True)
    (g * g).sum().backward()
    tx = torch.tensor(x, requires_grad=True)
    ta, tb = tx.chunk(2, 1)
    (tg,) = torch.autograd.grad((ta * ta * tb).sum(), tx, create_graph=True)
    (tg * tg).sum().backward()
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_compiled_step_equals_eager_and_records_the_one_op():
    x = _data(4, 9)
    w = ember.tensor(_data(9, 9, seed=1), requires_grad=True)

    def step(x):
        q, k, v = (x @ w).chunk(3, 1)
        loss = (q * k + v).sum()
        loss.backward()
        return loss

    fast = ember.compile(step)
    for _ in range(2):
        w.grad = None
        fast(ember.tensor(x))
    got = w.grad.numpy().copy()
    assert any(type(n.op) is I.BasicIndexGrads for n in fast.graph.nodes)
    w.grad = None
    step(ember.tensor(x))
    np.testing.assert_allclose(got, w.grad.numpy(), rtol=1e-6)
