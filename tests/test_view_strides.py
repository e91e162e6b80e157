"""``view`` refuses what PyTorch refuses (issue 16, item 6): a view whose shape the strides of a
non-contiguous tensor can't express used to copy silently (so writes through it were lost);
every view PyTorch allows still works and aliases its input."""

import itertools
import re

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

MESSAGE = (
    "view size is not compatible with input tensor's size and stride (at least one dimension "
    "spans across two contiguous subspaces). Use .reshape(...) instead."
)


def test_the_issues_example():
    x = ember.arange(6.0).reshape(2, 3)
    with pytest.raises(RuntimeError, match=re.escape(MESSAGE)) as info:
        x.t().view(-1)
    assert "shape [3, 2] and strides [1, 3] as shape [6]" in str(info.value)
    with pytest.raises(RuntimeError, match=re.escape(MESSAGE)):
        torch.arange(6.0).reshape(2, 3).t().view(-1)
    y = x.t().reshape(-1)  # what the message says to do: a copy
    assert y.tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda m: m.ones(3).expand(2, 3), (6,)),
        (lambda m: m.ones(2, 3, 4).permute(2, 0, 1), (8, 3)),
        (lambda m: m.ones(4, 6)[::2, :3], (6,)),
        (lambda m: m.ones(4, 6)[:, 1:4], (2, 6)),
        (lambda m: m.ones(2, 3).mT, (6,)),
        (lambda m: m.ones(2, 3).t().view_as(m.ones(6)), None),
    ],
)
def test_refused_like_torch(make, shape):
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match=re.escape(MESSAGE)):
            x = make(m)
            if shape is not None:
                x.view(*shape)


def _make(m, shape, perm, key):
    return m.arange(int(np.prod(shape))).reshape(*shape).permute(*perm)[key]


KEYS = [(slice(None),), (slice(None), slice(None), slice(None, None, 2)), (slice(0, 1),)]


@pytest.mark.parametrize("shape", [(2, 3, 4), (1, 3, 1), (4, 1, 6)])
def test_every_view_torch_allows_works_and_aliases(shape):
    checked = 0
    for perm, key in itertools.product(itertools.permutations(range(3)), KEYS):
        tx, ex = _make(torch, shape, perm, key), _make(ember, shape, perm, key)
        n = tx.numel()
        targets = {(n,), tuple(tx.shape)[::-1], tuple(tx.shape) + (1,), (1, *tx.shape)}
        targets |= {(a, n // a) for a in range(1, n + 1) if n % a == 0}
        for target in targets:
            try:
                tv = tx.view(*target)
            except RuntimeError:
                with pytest.raises(RuntimeError, match=re.escape(MESSAGE)):
                    ex.view(*target)
                continue
            ev = ex.view(*target)
            assert ev.tolist() == tv.tolist()
            if n:  # a write through the view shows in the input
                ev[(0,) * ev.ndim] += 1000
                tv[(0,) * tv.ndim] += 1000
                assert ex.tolist() == tx.tolist(), (perm, key, target)
            checked += 1
    assert checked > 20


def test_views_of_contiguous_and_size_one_dims_still_work():
    x = ember.zeros(2, 1, 3)
    y = x.permute(1, 0, 2).view(6)  # moving a size-1 dim keeps it viewable, as in PyTorch
    y[4] = 7.0
    assert x[1, 0, 1].item() == 7.0
    assert ember.zeros(0, 3).t().view(-1).shape == (0,)
    assert ember.tensor(3.0).view(1, 1).shape == (1, 1)
    z = ember.zeros(4, 6)[:, :3]  # rows: contiguous subspaces that can be split
    z.view(4, 3, 1)[2, 1, 0] = 1.0
    assert z[2, 1].item() == 1.0


def test_gradients_through_views_unchanged():
    x = ember.arange(6.0).reshape(2, 3).requires_grad_()
    (x.t().contiguous().view(-1) * ember.arange(6.0)).sum().backward()
    assert x.grad.tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
