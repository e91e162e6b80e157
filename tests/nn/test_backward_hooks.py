"""Module backward hooks against PyTorch 2.13: ``register_full_backward_hook``,
``register_full_backward_pre_hook`` and the deprecated ``register_backward_hook``.

Each case builds the same module in torch and ember (same weights), runs it with hooks that
record what they are given (and, for some, replace it), and compares the calls, the gradients
they saw and the leaves' gradients after backward.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember


def _arr(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _seeded(module, T):
    with T.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(T.tensor(_arr(*p.shape, seed=i + 1)))
    return module


class _Two:
    """A module of two tensor inputs and a non-tensor one, with two results."""

    @staticmethod
    def make(T):
        class Two(T.nn.Module):
            def forward(self, a, k, b):
                return a * k + b, a - b

        return Two()


# name -> (module(T), inputs(T): args, which args require grad)
CASES = {
    "Linear": (lambda T: T.nn.Linear(3, 2), lambda T: (T.tensor(_arr(4, 3)),), (True,)),
    "Linear, input without grad": (
        lambda T: T.nn.Linear(3, 2),
        lambda T: (T.tensor(_arr(4, 3)),),
        (False,),
    ),
    "Conv2d": (
        lambda T: T.nn.Conv2d(2, 3, 3, padding=1),
        lambda T: (T.tensor(_arr(1, 2, 5, 5)),),
        (True,),
    ),
    "Sequential": (
        lambda T: T.nn.Sequential(T.nn.Linear(3, 4), T.nn.ReLU(), T.nn.Linear(4, 2)),
        lambda T: (T.tensor(_arr(2, 3)),),
        (True,),
    ),
    "two inputs and a number": (
        _Two.make,
        lambda T: (T.tensor(_arr(3)), 3.0, T.tensor(_arr(3, seed=5))),
        (True, None, True),
    ),
    "two inputs, one without grad": (
        _Two.make,
        lambda T: (T.tensor(_arr(3)), 3.0, T.tensor(_arr(3, seed=5))),
        (True, None, False),
    ),
}


def _np(g):
    return None if g is None else g.detach().numpy().copy()


def _run(T, case, replace_input: bool, replace_output: bool):
    make, inputs, grads = CASES[case]
    module = _seeded(make(T), T)
    args = inputs(T)
    for a, rg in zip(args, grads):
        if rg:
            a.requires_grad_()
    calls = []

    def pre_hook(mod, grad_output):
        calls.append(("pre", [_np(g) for g in grad_output]))
        if replace_output:
            return tuple(None if g is None else g * 2 for g in grad_output)
        return None

    def hook(mod, grad_input, grad_output):
        calls.append(("full", [_np(g) for g in grad_input], [_np(g) for g in grad_output]))
        if replace_input:
            return tuple(None if g is None else g + 1 for g in grad_input)
        return None

    module.register_full_backward_pre_hook(pre_hook)
    module.register_full_backward_hook(hook)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = module(*args)
        outs = out if isinstance(out, tuple) else (out,)
        outs[0].sum().backward()
    leaf_grads = [_np(a.grad) if isinstance(a, T.Tensor) else None for a in args]
    params = [_np(p.grad) for p in module.parameters()]
    return calls, leaf_grads, params, [str(w.message)[:40] for w in caught]


def _same(a, b):
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), (a, b)
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    else:
        assert a == b


@pytest.mark.parametrize("replace", ["none", "grad_input", "grad_output"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_full_backward_hooks_match_torch(case, replace):
    flags = (replace == "grad_input", replace == "grad_output")
    _same(_run(torch, case, *flags), _run(ember, case, *flags))


def test_result_node_is_backward_hook_function_and_inplace_on_it_is_refused():
    names, errors = [], []
    for T in (torch, ember):
        m = T.nn.Linear(3, 2)
        m.register_full_backward_hook(lambda *a: None)
        y = m(T.ones(1, 3, requires_grad=True))
        names.append(type(y.grad_fn).__name__)
        with pytest.raises(RuntimeError) as info:
            y.relu_()
        errors.append(str(info.value))
    assert names[1] == names[0] == "BackwardHookFunctionBackward"
    assert "being modified inplace" in errors[0]
    assert "relu_" in errors[1] and "modified in place" in errors[1] and "clone" in errors[1]


@pytest.mark.parametrize("first", ["full", "regular"])
def test_mixing_full_and_regular_backward_hooks_is_refused(first):
    messages = []
    for T in (torch, ember):
        m = T.nn.Linear(2, 2)
        register = [m.register_full_backward_hook, m.register_backward_hook]
        if first == "regular":
            register.reverse()
        register[0](lambda *a: None)
        with pytest.raises(RuntimeError) as info:
            register[1](lambda *a: None)
        messages.append(str(info.value))
    assert messages[1] == messages[0]


@pytest.mark.parametrize(
    "make, leaf, several_nodes",
    [
        (lambda T: T.nn.ReLU(), False, False),
        (lambda T: T.nn.ReLU(), True, True),  # torch: the leaf's AccumulateGrad is not its grad_fn
        (lambda T: T.nn.Linear(3, 2), False, True),
    ],
    ids=["ReLU", "ReLU on a leaf", "Linear"],
)
def test_regular_backward_hook_warns_as_torch(make, leaf, several_nodes):
    seen = {}
    for T in (torch, ember):
        m = make(T)
        calls = []
        m.register_backward_hook(lambda mod, gin, gout, calls=calls: calls.append(_np(gin[0])))
        x = T.tensor(_arr(4, 3), requires_grad=True)
        x = x if leaf else x * 1
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m(x).sum().backward()
        future = [w for w in caught if issubclass(w.category, FutureWarning)]
        seen[T.__name__] = (len(future), calls)
    assert seen["ember"][0] == seen["torch"][0] == int(several_nodes)
    if not several_nodes:  # one node: the hook's grad_input is the input's gradient in both
        _same(seen["torch"][1], seen["ember"][1])


def test_hook_returning_the_wrong_number_of_gradients_is_refused():
    for T in (torch, ember):
        m = T.nn.Linear(3, 2)
        m.register_full_backward_hook(lambda mod, gin, gout: (gin[0], gin[0]))
        y = m(T.ones(1, 3, requires_grad=True))
        with pytest.raises(
            RuntimeError, match="invalid number of grad_input, got 2, but expected 1"
        ):
            y.sum().backward()


def test_removed_hook_is_not_called():
    m = ember.nn.Linear(3, 2)
    calls = []
    handle = m.register_full_backward_hook(lambda *a: calls.append(1))
    handle.remove()
    m(ember.ones(1, 3, requires_grad=True)).sum().backward()
    assert calls == [] and type(m(ember.ones(1, 3)).grad_fn).__name__ == "AddmmBackward0"
