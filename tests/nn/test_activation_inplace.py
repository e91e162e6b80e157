"""In-place activations and dropout under autograd, against PyTorch 2.13.

Each case runs the same call in torch and in ember on a leaf that requires grad and on a
non-leaf: where torch refuses (a leaf; a negative slope at backward) ember refuses too, and
otherwise the values, the grad_fn name, the identity of the result and the leaf's gradient
are torch's. ``F.relu_`` and the other in-place functions of ``nn.functional`` are checked
against torch's the same way.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

EXACT = 0.0  # gradients of select-style activations are equal bit for bit
CLOSE = 1e-6  # exp-based ones round differently (ember's composite vs torch's kernel)

# name -> (call(F, x, inplace), gradient tolerance)
CASES = {
    "relu": (lambda F, x, ip: F.relu(x, inplace=ip), EXACT),
    "relu6": (lambda F, x, ip: F.relu6(x, inplace=ip), EXACT),
    "hardtanh": (lambda F, x, ip: F.hardtanh(x, -0.5, 0.5, inplace=ip), EXACT),
    "leaky_relu slope>0": (lambda F, x, ip: F.leaky_relu(x, 0.2, inplace=ip), EXACT),
    "leaky_relu slope=0": (lambda F, x, ip: F.leaky_relu(x, 0.0, inplace=ip), EXACT),
    "leaky_relu slope<0": (lambda F, x, ip: F.leaky_relu(x, -0.2, inplace=ip), EXACT),
    "elu": (lambda F, x, ip: F.elu(x, 1.0, inplace=ip), CLOSE),
    "elu alpha<0": (lambda F, x, ip: F.elu(x, -0.5, inplace=ip), CLOSE),
    "celu": (lambda F, x, ip: F.celu(x, 0.5, inplace=ip), CLOSE),
    "celu alpha<0": (lambda F, x, ip: F.celu(x, -1.0, inplace=ip), CLOSE),
    "selu": (lambda F, x, ip: F.selu(x, inplace=ip), CLOSE),
    "silu": (lambda F, x, ip: F.silu(x, inplace=ip), CLOSE),
    "mish": (lambda F, x, ip: F.mish(x, inplace=ip), CLOSE),
    "hardswish": (lambda F, x, ip: F.hardswish(x, inplace=ip), CLOSE),
    "hardsigmoid": (lambda F, x, ip: F.hardsigmoid(x, inplace=ip), CLOSE),
    "threshold": (lambda F, x, ip: F.threshold(x, 0.5, -1.0, inplace=ip), EXACT),
    "threshold value>threshold": (lambda F, x, ip: F.threshold(x, 0.5, 1.0, inplace=ip), EXACT),
    "rrelu eval": (lambda F, x, ip: F.rrelu(x, 0.1, 0.3, inplace=ip), EXACT),
    "rrelu eval slope<0": (lambda F, x, ip: F.rrelu(x, -0.3, -0.1, inplace=ip), EXACT),
    "dropout eval": (lambda F, x, ip: F.dropout(x, 0.5, training=False, inplace=ip), EXACT),
    "nn.LeakyReLU(0.2, inplace=True)": (
        lambda F, x, ip: F.__nn__.LeakyReLU(0.2, inplace=ip)(x),
        EXACT,
    ),
    "nn.ELU(inplace=True)": (lambda F, x, ip: F.__nn__.ELU(inplace=ip)(x), CLOSE),
    "nn.SiLU(inplace=True)": (lambda F, x, ip: F.__nn__.SiLU(inplace=ip)(x), CLOSE),
    "nn.ReLU6(inplace=True)": (lambda F, x, ip: F.__nn__.ReLU6(inplace=ip)(x), EXACT),
    "nn.Hardtanh(inplace=True)": (lambda F, x, ip: F.__nn__.Hardtanh(inplace=ip)(x), EXACT),
    "nn.Threshold(inplace=True)": (
        lambda F, x, ip: F.__nn__.Threshold(0.1, 20.0, inplace=ip)(x),
        EXACT,
    ),
}

# the in-place functions of nn.functional: name -> its extra arguments
FUNCTIONS = {
    "relu_": (),
    "elu_": (0.7,),
    "leaky_relu_": (0.3,),
    "hardtanh_": (-0.5, 2.0),
    "threshold_": (0.5, -2.0),
    "celu_": (1.5,),
    "selu_": (),
    "rrelu_": (0.2, 0.4),
}


class _F:
    """``module.nn.functional`` with ``__nn__``: the module's ``nn`` (for the module cases)."""

    def __init__(self, T):
        self._f, self.__nn__ = T.nn.functional, T.nn

    def __getattr__(self, name):
        return getattr(self._f, name)


def _values():
    return np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)


def _outcome(T, call, leaf: bool, inplace: bool):
    """What the call does in module ``T``: ('raise', stage, message) or ('ok', ...)."""
    a = T.tensor(_values(), requires_grad=True)
    x = a if leaf else a * 1
    try:
        y = call(_F(T), x, inplace)
    except RuntimeError as e:
        return ("raise", "forward", str(e))
    name = None if y.grad_fn is None else type(y.grad_fn).__name__
    same_object, values = y is x, y.detach().numpy().copy()
    try:
        y.backward(T.tensor(np.linspace(-1, 2, 12, dtype=np.float32).reshape(3, 4)))
    except RuntimeError as e:
        return ("raise", "backward", str(e))
    return ("ok", name, same_object, values, a.grad.numpy())


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non-leaf"])
@pytest.mark.parametrize("inplace", [True, False], ids=["inplace", "out-of-place"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_activation_matches_torch(case, inplace, leaf):
    call, tol = CASES[case]
    expected = _outcome(torch, call, leaf, inplace)
    got = _outcome(ember, call, leaf, inplace)
    assert got[:2] == expected[:2], (got, expected)
    if expected[0] == "raise":
        words = {"forward": "leaf", "backward": "negative slope"}[expected[1]]
        assert words in expected[2] and words in got[2]
        return
    _, name, same_object, values, grad = got
    if not (case.startswith("rrelu") or case.startswith("dropout")) or inplace:
        assert name == expected[1]
    assert same_object == expected[2]
    if tol == EXACT:  # bit for bit, zero signs included
        assert values.tobytes() == expected[3].tobytes(), (values, expected[3])
        assert grad.tobytes() == expected[4].tobytes(), (grad, expected[4])
    else:
        np.testing.assert_allclose(values, expected[3], rtol=tol, atol=tol)
        np.testing.assert_allclose(grad, expected[4], rtol=tol, atol=tol)


def test_inplace_activation_of_a_tensor_another_node_saved_is_refused_as_in_torch():
    """exp saves its output; relu_ overwrites it: backward through exp fails in both."""
    messages = []
    for T in (torch, ember):
        a = T.tensor([0.5, -1.0], requires_grad=True)
        y = a.exp()
        z = y * 1
        T.nn.functional.leaky_relu(y, 0.1, inplace=True)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
            (z + y).sum().backward()
        messages.append(str(info.value))
    assert "ExpBackward0" in messages[1] and "version 1; expected version 0" in messages[1]


def test_inplace_without_grad_writes_the_tensor():
    for name, args in FUNCTIONS.items():
        x, t = ember.tensor(_values()), torch.tensor(_values())
        assert getattr(ember.nn.functional, name)(x, *args) is x
        getattr(torch.nn.functional, name)(t, *args)
        np.testing.assert_allclose(x.numpy(), t.numpy(), rtol=1e-6, err_msg=name)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_functional_inplace_forms_match_torch(name):
    args = FUNCTIONS[name]
    results = []
    for T in (torch, ember):
        a = T.tensor(_values(), requires_grad=True)
        x = a * 1
        y = getattr(T.nn.functional, name)(x, *args)
        assert y is x
        y.sum().backward()
        results.append((type(y.grad_fn).__name__, y.detach().numpy(), a.grad.numpy()))
        with pytest.raises(RuntimeError, match="leaf"):
            getattr(T.nn.functional, name)(a, *args)
    (tn, tv, tg), (en, ev, eg) = results
    assert en == tn
    np.testing.assert_allclose(ev, tv, rtol=1e-6)
    np.testing.assert_allclose(eg, tg, rtol=1e-6, atol=1e-7)


@pytest.mark.filterwarnings("ignore:dropout2d. Received a 3D input")  # torch's, on purpose
@pytest.mark.parametrize(
    "call",
    [
        lambda F, x: F.dropout(x, 0.5, training=True, inplace=True),
        lambda F, x: F.dropout2d(x, 0.5, training=True, inplace=True),
        lambda F, x: F.dropout1d(x, 0.5, training=True, inplace=True),
        lambda F, x: F.alpha_dropout(x, 0.5, training=True, inplace=True),
        lambda F, x: F.rrelu(x, 0.1, 0.3, training=True, inplace=True),
    ],
    ids=["dropout", "dropout2d", "dropout1d", "alpha_dropout", "rrelu training"],
)
def test_random_inplace_forms_write_the_input_and_differentiate_like_torch(call):
    """Random masks differ between the libraries; what must agree is the grad_fn, that the
    input is overwritten, and that the gradient is d(output)/d(input) of the drawn mask."""
    names = []
    for T in (torch, ember):
        a = T.tensor(np.linspace(-3, 3, 24, dtype=np.float32).reshape(2, 3, 4) + 0.125,
                     requires_grad=True)  # fmt: skip
        x = a * 1
        y = call(T.nn.functional, x)
        assert y is x
        names.append(type(y.grad_fn).__name__)
        ratio = y.detach().numpy() / a.detach().numpy()
        y.sum().backward()
        if names[-1] != "AddBackward0":  # alpha_dropout's output is an affine map: y = k x + b
            np.testing.assert_allclose(a.grad.numpy(), ratio, rtol=1e-6)
        with pytest.raises(RuntimeError, match="leaf"):
            call(T.nn.functional, a)
    assert names[1] == names[0]


def test_leaky_relu_negative_slope_refusal_names_the_function():
    x = ember.tensor([-1.0, 2.0], requires_grad=True) * 1
    y = ember.nn.functional.leaky_relu_(x, -0.5)
    np.testing.assert_array_equal(y.detach().numpy(), [0.5, 2.0])
    with pytest.raises(ember.AutogradError, match=r"leaky_relu_: .*negative slope \(-0.5\)"):
        y.sum().backward()
