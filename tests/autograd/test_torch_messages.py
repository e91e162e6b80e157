"""Autograd errors whose first line is PyTorch's, word for word (programs print it); ember's
own detail (the op, the shapes) follows on the next lines."""

import warnings

import pytest
import torch

import ember


def _first_line(fn, m):
    with pytest.raises(RuntimeError) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn(m)
    line = str(info.value).splitlines()[0]
    # PyTorch opens "One of the variables..." the first time a process hits a changed saved
    # leaf and "one of..." after: compare past the first letter's case.
    return line[:1].lower() + line[1:]


def _leaf(m):
    x = m.ones(3, requires_grad=True)
    return x, m.linspace(-1, 1, 3, requires_grad=True)


def _twice(m):
    x, w = _leaf(m)
    out = (x.exp() * w).sum()
    out.backward()
    out.backward()


def _saved_leaf_changed(m):
    x, _ = _leaf(m)
    b = x**2
    with m.no_grad():
        x.mul_(2)
    b.sum().backward()


def _saved_output_changed(m, inplace="add_", make=lambda x: x.exp()):
    x, _ = _leaf(m)
    a = make(x)
    b = a**2
    getattr(a, inplace)(2)
    b.sum().backward()


def _under_anomaly(m):
    with m.autograd.detect_anomaly():
        _saved_output_changed(m)


CASES = {
    "backward of a non-scalar": lambda m: (_leaf(m)[0] * 2).backward(),
    "backward of a constant": lambda m: m.ones(2).sum().backward(),
    "grad of an unused input": lambda m: m.autograd.grad(
        (_leaf(m)[0] * 2).sum(), [_leaf(m)[0], m.ones(2, requires_grad=True)]
    ),
    "grad of an input without grad": lambda m: m.autograd.grad(_leaf(m)[0].sum(), m.ones(2)),
    "backward twice": _twice,
    "in-place on a leaf": lambda m: _leaf(m)[0].add_(1),
    "saved leaf changed": _saved_leaf_changed,
    "saved output of add_ changed": _saved_output_changed,
    "saved output of mul_ changed": lambda m: _saved_output_changed(m, "mul_", lambda x: x * 1),
    "saved 2-D output changed": lambda m: _saved_output_changed(
        m, "add_", lambda x: m.nn.functional.linear(x.view(1, 3), m.ones(2, 3))
    ),
    "saved output changed under anomaly": _under_anomaly,
}


@pytest.mark.parametrize("case", list(CASES))
def test_first_line_is_torchs(case):
    assert _first_line(CASES[case], ember) == _first_line(CASES[case], torch)


def test_embers_detail_follows():
    with pytest.raises(ember.AutogradError, match=r"\nadd_: a leaf tensor that requires grad"):
        _leaf(ember)[0].add_(1)
    with pytest.raises(ember.AutogradError, match=r"\nPowBackward0: one of the variables"):
        _saved_output_changed(ember)
