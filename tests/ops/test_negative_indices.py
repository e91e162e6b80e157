"""Negative and out-of-range indices (issue 16, item 5): gather, scatter, scatter_add,
index_select, index_add, index_copy and take_along_dim refuse a negative index, as PyTorch does,
with an error naming the op, the index and the size; take, index_fill and tensor indexing count
a negative index from the end, as PyTorch does. On a GPU the check waits for no host: the error
comes at the next read from the device."""

import re

import pytest

import ember

torch = pytest.importorskip("torch")

# (call on ember or torch, ember's message (plain text) with {i} for the index)
CALLS = [
    (
        lambda m, i: m.gather(m.ones(2, 3), 1, m.tensor([[0, i]])),
        "gather(): index {i} is out of bounds for dimension 1 with size 3 (input of shape [2, 3])",
    ),
    (
        lambda m, i: m.gather(m.ones(3, 2), 0, m.tensor([[i, 0]])),
        "gather(): index {i} is out of bounds for dimension 0 with size 3",
    ),
    (
        lambda m, i: m.zeros(2, 3).scatter(1, m.tensor([[0, i]]), 1.0),
        "scatter(): index {i} is out of bounds for dimension 1 with size 3",
    ),
    (
        lambda m, i: m.zeros(2, 3).scatter(1, m.tensor([[0, i]]), m.ones(1, 2)),
        "scatter(): index {i} is out of bounds for dimension 1 with size 3",
    ),
    (
        lambda m, i: m.zeros(2, 3).scatter_add(1, m.tensor([[0, i]]), m.ones(1, 2)),
        "scatter_add(): index {i} is out of bounds for dimension 1 with size 3",
    ),
    (
        lambda m, i: m.zeros(3).index_add(0, m.tensor([i]), m.ones(1)),
        "index_add: index {i} is out of range for dimension 0 of size 3 "
        "(expected indices in [0, 3))",
    ),
    (
        lambda m, i: m.zeros(3).index_copy(0, m.tensor([i]), m.ones(1)),
        "index_copy: index {i} is out of range for dimension 0 of size 3",
    ),
    (
        lambda m, i: m.arange(3).index_select(0, m.tensor([0, i])),
        "index_select(): index {i} is out of range for dimension 0 with size 3",
    ),
    (
        lambda m, i: m.arange(6).reshape(2, 3).index_select(1, m.tensor([i], dtype=m.int32)),
        "index_select(): index {i} is out of range for dimension 1 with size 3",
    ),
    (
        lambda m, i: m.take_along_dim(m.ones(2, 3), m.tensor([i]), None),
        "take_along_dim(): index {i} is out of bounds for dimension 0 with size 6",
    ),
]


@pytest.mark.parametrize("index", [-1, -3, 3, 100], ids=lambda i: f"i{i}")
@pytest.mark.parametrize("call, message", CALLS)
def test_out_of_range_indices_raise_like_torch(call, message, index):
    if "size 6" in message and index == 3:
        index = 6  # in range of the 6 elements
    with pytest.raises((IndexError, RuntimeError)):  # noqa: PT011 PyTorch's own wording varies
        call(torch, index)
    with pytest.raises(IndexError, match=re.escape(message.format(i=index))):
        call(ember, index)


def test_the_issues_example():
    with pytest.raises(ember.EmberIndexError, match=r"gather\(\): index -1 is out of bounds"):
        ember.gather(ember.ones(2, 3), 1, ember.tensor([[0, -1]]))


def test_take_along_dim_with_dim_refuses_negative_indices():
    # (PyTorch's CPU kernel returns something here: ember refuses, as its gather does)
    x = ember.arange(6.0).reshape(2, 3)
    with pytest.raises(IndexError, match=r"take_along_dim\(\): index -1 is out of bounds for "):
        ember.take_along_dim(x, ember.tensor([[0, -1]]), 1)
    assert ember.take_along_dim(x, ember.tensor([[0, 2]]), 1).tolist() == [[0.0, 2.0], [3.0, 5.0]]


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.take(m.arange(6).reshape(2, 3), m.tensor([-1, -6])),
        lambda m: m.zeros(3).index_fill(0, m.tensor([-1]), 1.0),
        lambda m: m.arange(4)[m.tensor([-1, -4])],
        lambda m: m.arange(6).reshape(2, 3)[:, m.tensor([-1])],
    ],
)
def test_where_torch_counts_negative_indices_from_the_end_ember_does_too(call):
    assert call(ember).tolist() == call(torch).tolist()


def test_a_refused_in_place_scatter_leaves_the_tensor_unchanged():
    x = ember.zeros(2, 3)
    with pytest.raises(IndexError, match=r"scatter\(\): index -1"):
        x.scatter_(1, ember.tensor([[0, -1]]), 1.0)
    with pytest.raises(IndexError, match=r"scatter_add\(\): index -2"):
        x.scatter_add_(1, ember.tensor([[-2]]), ember.ones(1, 1))
    assert x.tolist() == [[0.0] * 3] * 2
    assert x._version == [0]  # (a shared counter cell)


def test_valid_indices_and_gradients_are_unchanged():
    x = ember.arange(6.0).reshape(2, 3).requires_grad_()
    tx = torch.arange(6.0).reshape(2, 3).requires_grad_()
    idx = [[2, 0], [1, 1]]
    y, ty = x.gather(1, ember.tensor(idx)), tx.gather(1, torch.tensor(idx))
    assert y.tolist() == ty.tolist()
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    assert x.grad.tolist() == tx.grad.tolist()


def test_empty_index_is_fine():
    x = ember.ones(2, 3)
    assert ember.gather(x, 1, ember.zeros(2, 0, dtype=ember.int64)).shape == (2, 0)
    assert x.index_select(1, ember.tensor([], dtype=ember.int64)).shape == (2, 0)


def test_on_a_gpu_the_check_waits_for_the_next_read(device):
    x = ember.ones(2, 3, device=device)
    index = ember.tensor([[0, -1]], device=device)
    if device == "cpu":
        with pytest.raises(IndexError, match=re.escape("gather(): index -1 is out of bounds")):
            x.gather(1, index)
        return
    y = x.gather(1, index)  # no host round trip here: the check is queued
    with pytest.raises(IndexError, match=re.escape("gather(): index -1 is out of bounds")):
        y.cpu()
    assert x.gather(1, index.abs()).cpu().tolist() == [[1.0, 1.0]]  # the queue is clear again
