"""Optimizer.load_state_dict's mismatch errors carry PyTorch's messages (a program that
prints them prints the same line)."""

import pytest
import torch

import ember


def _message(lib, saved_groups, groups):
    ps = [lib.nn.Parameter(lib.zeros(2)) for _ in range(3)]
    src = lib.optim.SGD([{"params": ps[a:b]} for a, b in saved_groups], lr=0.1)
    dst = lib.optim.SGD([{"params": ps[a:b]} for a, b in groups], lr=0.1)
    with pytest.raises(ValueError) as info:
        dst.load_state_dict(src.state_dict())
    return str(info.value)


@pytest.mark.parametrize(
    "saved, mine",
    [
        ([(0, 1), (1, 3)], [(0, 3)]),
        ([(0, 3)], [(0, 1), (1, 3)]),
        ([(0, 1), (1, 3)], [(0, 2), (2, 3)]),
    ],
)
def test_mismatch_messages_match_torch(saved, mine):
    assert _message(ember, saved, mine) == _message(torch, saved, mine)
