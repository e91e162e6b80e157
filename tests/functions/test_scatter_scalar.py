"""gather / scatter / scatter_add with a 0-d input, index or src against PyTorch 2.13: a
scalar counts as a 1-d tensor of one element (the 'Transforms' tutorial's one-hot target
``torch.zeros(10).scatter_(0, torch.tensor(y), value=1)``), and results keep their 0-d shape."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

CASES = {
    "scatter_ value, 0-d index": lambda T: T.zeros(10).scatter_(0, T.tensor(3), value=1),
    "scatter 0-d src": lambda T: T.zeros(5).scatter(0, T.tensor(4), T.tensor(5.0)),
    "scatter 0-d index, 1-d src": lambda T: T.zeros(5).scatter(0, T.tensor(1), T.tensor([5.0, 6])),
    "scatter 0-d input": lambda T: T.zeros(()).scatter(0, T.tensor([0]), 4.0),
    "scatter_ 0-d input and index": lambda T: T.zeros(()).scatter_(-1, T.tensor(0), 9.0),
    "scatter_add 0-d index": lambda T: T.ones(4).scatter_add(0, T.tensor(2), T.tensor(5.0)),
    "scatter_add_ 0-d": lambda T: T.ones(()).scatter_add_(0, T.tensor(0), T.tensor(2.0)),
    "gather 0-d index": lambda T: T.arange(10.0).gather(0, T.tensor(3)),
    "gather 0-d input": lambda T: T.tensor(2.5).gather(0, T.tensor([0, 0])),
    "take_along_dim-like 0-d both": lambda T: T.tensor(7).gather(0, T.tensor(0)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_scalar_operands_match_torch(case):
    want, got = CASES[case](torch), CASES[case](ember)
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_one_hot_target_gradient_through_0d_gather():
    for T in (torch, ember):
        x = T.linspace(0.0, 1.0, 6, requires_grad=True)
        x.gather(0, T.tensor(4)).mul(3.0).backward()
        np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 0, 0, 3, 0])


@pytest.mark.parametrize("index", [1, [1]])
def test_index_of_other_rank_still_refused(index):
    for T in (torch, ember):
        with pytest.raises(RuntimeError, match="same number of dimensions"):
            T.zeros(3, 2).scatter(0, T.tensor(index), 7.0)
