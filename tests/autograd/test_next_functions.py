"""``grad_fn.next_functions`` of named composites against PyTorch 2.13: a composite named as
PyTorch's one node (``MseLossBackward0``, ``AddmmBackward0``, ``NllLossBackward0``) shows its
inputs' nodes (AccumulateGrad for leaves, None for tensors that need no gradient), not the
primitive ops inside it; its values and gradients are untouched."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember


def _r(T, *shape, grad=True):
    data = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
    return T.tensor(data, requires_grad=grad)


def _tutorial(T):
    """The 'Neural Networks' tutorial's network and loss: conv, relu, max pool, linear, MSE."""
    T.manual_seed(0)
    conv, fc = T.nn.Conv2d(1, 2, 3), T.nn.Linear(2 * 3 * 3, 4)
    x = T.nn.functional.max_pool2d(T.nn.functional.relu(conv(_r(T, 1, 1, 8, 8, grad=False))), 2)
    return T.nn.MSELoss()(fc(T.flatten(x, 1)), _r(T, 1, 4, grad=False))


CASES = {
    "tutorial network": _tutorial,
    "F.mse_loss": lambda T: T.nn.functional.mse_loss(_r(T, 4, 3), _r(T, 4, 3, grad=False)),
    "F.mse_loss both grad": lambda T: T.nn.functional.mse_loss(_r(T, 4, 3), _r(T, 4, 3) * 2),
    "F.linear": lambda T: T.nn.functional.linear(_r(T, 4, 3), _r(T, 2, 3), _r(T, 2)),
    "F.linear input no grad": lambda T: T.nn.functional.linear(
        _r(T, 4, 3, grad=False), _r(T, 2, 3), _r(T, 2)
    ),
    "F.cross_entropy": lambda T: T.nn.functional.cross_entropy(_r(T, 4, 3), T.tensor([0, 1, 2, 0])),
    "F.nll_loss": lambda T: T.nn.functional.nll_loss(_r(T, 4, 3), T.tensor([0, 1, 2, 0])),
    # the 'Autograd' tutorial's loss on z = x @ w + b: next_functions is (AddBackward0, None)
    "F.binary_cross_entropy_with_logits": lambda T: (
        T.nn.functional.binary_cross_entropy_with_logits(
            T.ones(5) @ _r(T, 5, 3) + _r(T, 3), T.zeros(3)
        )
    ),
    "F.binary_cross_entropy_with_logits both grad, sum": lambda T: (
        T.nn.functional.binary_cross_entropy_with_logits(
            _r(T, 4, 3), _r(T, 4, 3).sigmoid(), pos_weight=T.ones(3), reduction="sum"
        )
    ),
    "F.binary_cross_entropy": lambda T: T.nn.functional.binary_cross_entropy(
        _r(T, 4, 3).sigmoid(), _r(T, 4, 3, grad=False).sigmoid(), weight=T.ones(3)
    ),
}


def _chain(fn, depth: int = 3) -> list:
    """The names along next_functions, breadth first, to ``depth`` levels."""
    out, level = [], [fn]
    for _ in range(depth):
        names = [None if f is None else type(f).__name__ for f in level]
        out.append(names)
        level = [n for f in level if f is not None for n, _ in getattr(f, "next_functions", ())]
    return out


# torch's addmm takes weight.t(): a TBackward0 node before the weight's AccumulateGrad, which
# ember's linear (no node of its own for the transpose) shows directly
_EMBER_FOR_TORCH = {"TBackward0": "AccumulateGrad"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_next_functions_chain_matches_torch(case):
    expected = _chain(CASES[case](torch).grad_fn, depth=2)
    got = _chain(CASES[case](ember).grad_fn, depth=2)
    assert got == [[_EMBER_FOR_TORCH.get(n, n) for n in level] for level in expected]


def test_tutorial_chain_is_mse_addmm_accumulate_grad():
    fn = _tutorial(ember).grad_fn
    addmm = fn.next_functions[0][0]
    assert [type(f).__name__ for f in (fn, addmm, addmm.next_functions[0][0])] == [
        "MseLossBackward0", "AddmmBackward0", "AccumulateGrad",
    ]  # fmt: skip
    assert fn.next_functions[1] == (None, 0)


def test_naming_inputs_changes_no_gradient():
    grads = []
    for T in (torch, ember):
        w = _r(T, 2, 3)
        T.nn.functional.mse_loss(
            T.nn.functional.linear(_r(T, 4, 3), w), _r(T, 4, 2, grad=False)
        ).backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5)
