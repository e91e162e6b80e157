"""nn.utils.parametrize and nn.utils.parametrizations against torch: parametrized values,
gradients of the originals, names, state_dict keys, reprs, caching, assignment through
right_inverse, chaining, removal; weight_norm, spectral_norm and orthogonal."""

import numpy as np
import pytest
import torch
import torch.nn.utils.parametrize as tP
from torch.nn.utils import parametrizations as tPs

import ember
import ember.nn.utils.parametrize as eP
from ember.nn.utils import parametrizations as ePs

W = np.linspace(-1, 1, 9).reshape(3, 3)
X = np.cos(np.arange(6.0)).reshape(2, 3)


def _symmetric(lib, inverse=False):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    class InvertibleSymmetric(Symmetric):
        def right_inverse(self, X):
            return X.triu()

    return InvertibleSymmetric() if inverse else Symmetric()


def _scale(lib):
    class Scale(lib.nn.Module):
        def forward(self, X):
            return 2 * X

        def right_inverse(self, X):
            return X / 2

    return Scale()


def _linear(lib, w=W):
    m = lib.nn.Linear(w.shape[1], w.shape[0])
    with lib.no_grad():
        m.weight.copy_(lib.tensor(w, dtype=lib.float64))
        m.bias.fill_(0.1)
    return m.double()


def _names(m):
    return ([n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()],
            list(m.state_dict()))  # fmt: skip


def _np(t):
    return t.detach().numpy()


def test_custom_parametrization_values_grads_names_repr():
    t, e = _linear(torch), _linear(ember)
    tP.register_parametrization(t, "weight", _symmetric(torch))
    eP.register_parametrization(e, "weight", _symmetric(ember))
    assert type(e).__name__ == type(t).__name__ == "ParametrizedLinear"
    assert repr(e).replace("ember", "torch") == repr(t)
    assert _names(e) == _names(t)
    np.testing.assert_allclose(_np(e.weight), _np(t.weight))
    assert e.weight.grad_fn.name() == t.weight.grad_fn.name()
    t(torch.tensor(X)).pow(2).sum().backward()
    e(ember.tensor(X)).pow(2).sum().backward()
    np.testing.assert_allclose(
        _np(e.parametrizations.weight.original.grad), _np(t.parametrizations.weight.original.grad)
    )
    assert eP.is_parametrized(e) and not eP.is_parametrized(e, "bias")
    assert eP.type_before_parametrizations(e) is ember.nn.Linear


def test_cached_computes_once():
    e = _linear(ember)
    eP.register_parametrization(e, "weight", _symmetric(ember))
    assert e.weight is not e.weight
    with eP.cached():
        assert e.weight is e.weight


@pytest.mark.parametrize("leave", [True, False])
def test_chaining_assignment_and_removal(leave):
    t, e = _linear(torch), _linear(ember)
    for lib, m, P in ((torch, t, tP), (ember, e, eP)):
        P.register_parametrization(m, "weight", _scale(lib))
        P.register_parametrization(m, "weight", _symmetric(lib, inverse=True))
        with lib.no_grad():
            m.weight = lib.tensor(W.T * 3, dtype=lib.float64)  # through right_inverse
    np.testing.assert_allclose(_np(e.parametrizations.weight.original),
                               _np(t.parametrizations.weight.original))  # fmt: skip
    np.testing.assert_allclose(_np(e.weight), _np(t.weight))
    tP.remove_parametrizations(t, "weight", leave_parametrized=leave)
    eP.remove_parametrizations(e, "weight", leave_parametrized=leave)
    assert type(e) is ember.nn.Linear and _names(e) == _names(t)
    assert isinstance(e.weight, ember.nn.Parameter)
    np.testing.assert_allclose(_np(e.weight), _np(t.weight))


def test_errors_as_torch():
    e = _linear(ember)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized"):
        eP.register_parametrization(e, "nothing", _symmetric(ember))
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        eP.remove_parametrizations(e, "weight")
    eP.register_parametrization(e, "weight", _symmetric(ember))
    with pytest.raises(RuntimeError, match="Symmetric does not implement right_inverse"):
        e.weight = ember.zeros(3, 3)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm(dim):
    w = np.cos(np.arange(8.0)).reshape(2, 4)
    t, e = tPs.weight_norm(_linear(torch, w), dim=dim), ePs.weight_norm(_linear(ember, w), dim=dim)
    assert _names(e) == _names(t)
    np.testing.assert_allclose(_np(e.parametrizations.weight.original0),
                               _np(t.parametrizations.weight.original0))  # fmt: skip
    np.testing.assert_allclose(_np(e.weight), _np(t.weight))
    assert e.weight.grad_fn.name() == t.weight.grad_fn.name()
    x = np.linspace(-1, 1, 8).reshape(2, 4)
    t(torch.tensor(x)).pow(2).sum().backward()
    e(ember.tensor(x)).pow(2).sum().backward()
    for i in (0, 1):
        name = f"original{i}"
        np.testing.assert_allclose(_np(getattr(e.parametrizations.weight, name).grad),
                                   _np(getattr(t.parametrizations.weight, name).grad))  # fmt: skip


@pytest.mark.parametrize("training", [False, True])
def test_spectral_norm_with_torch_vectors(training):
    w = np.sin(np.arange(20.0)).reshape(4, 5)
    t, e = tPs.spectral_norm(_linear(torch, w)), ePs.spectral_norm(_linear(ember, w))
    assert _names(e) == _names(t)
    with torch.no_grad(), ember.no_grad():  # the same starting vectors
        for b in ("_u", "_v"):
            getattr(e.parametrizations.weight[0], b).copy_(
                ember.tensor(_np(getattr(t.parametrizations.weight[0], b))))  # fmt: skip
    t.train(training)
    e.train(training)
    np.testing.assert_allclose(_np(e.weight), _np(t.weight), rtol=1e-10)
    np.testing.assert_allclose(_np(e.parametrizations.weight[0]._u),
                               _np(t.parametrizations.weight[0]._u), rtol=1e-10)  # fmt: skip


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4)])
def test_orthogonal_matches_torch_and_stays_orthogonal(orthogonal_map, shape):
    w = np.eye(*shape) + 0.1 * np.sin(np.arange(np.prod(shape))).reshape(shape)
    if shape[0] != shape[1]:
        w = np.linalg.qr(w.T)[0].T  # already orthogonal: no random completion
    t = tPs.orthogonal(_linear(torch, w), orthogonal_map=orthogonal_map)
    e = ePs.orthogonal(_linear(ember, w), orthogonal_map=orthogonal_map)
    assert _names(e)[:2] == _names(t)[:2]
    np.testing.assert_allclose(_np(e.weight), _np(t.weight), atol=1e-12)
    for lib, m in ((torch, t), (ember, e)):
        opt = lib.optim.SGD(m.parameters(), lr=0.5)
        m(lib.tensor(np.cos(np.arange(shape[1] * 2.0)).reshape(2, shape[1]))).pow(
            3
        ).sum().backward()
        opt.step()
    np.testing.assert_allclose(_np(e.weight), _np(t.weight), rtol=1e-9, atol=1e-12)
    q = _np(e.weight)
    small = min(shape)
    gram = q @ q.T if shape[0] < shape[1] else q.T @ q
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-10)


def test_orthogonal_unsupported_maps_say_so():
    with pytest.raises(NotImplementedError, match="householder|use_trivialization"):
        ePs.orthogonal(ember.nn.Linear(3, 2), orthogonal_map="householder")
