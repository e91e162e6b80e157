"""ember.utils.checkpoint against plain computation and torch.utils.checkpoint."""

import gc
import warnings
import weakref

import numpy as np
import pytest

import ember
from ember.utils.checkpoint import checkpoint, checkpoint_sequential

torch = pytest.importorskip("torch")
import torch.utils.checkpoint as TC  # noqa: E402


def pair(lib):
    rng = np.random.default_rng(0)
    m = lib.nn.Sequential(
        lib.nn.Linear(3, 8), lib.nn.Tanh(), lib.nn.Dropout(0.0), lib.nn.Linear(8, 2)
    ).double()
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    return m


X = np.random.default_rng(1).standard_normal((4, 3))


def grads(lib, run, x_requires_grad):
    m = pair(lib)
    x = lib.tensor(X, requires_grad=x_requires_grad)
    out = run(lib, m, x)
    if not out.requires_grad:  # reentrant, no input requiring grad: torch's output has no history
        return [None] * (len(list(m.parameters())) + 1)
    (out**2).sum().backward()
    got = [p.grad for p in m.parameters()] + [x.grad]
    return [None if g is None else g.numpy() for g in got]


def plain(lib, m, x):
    return m(x)


def with_checkpoint(reentrant):
    def run(lib, m, x):
        fn = checkpoint if lib is ember else TC.checkpoint
        return fn(m, x, use_reentrant=reentrant)

    return run


def sequential(reentrant):
    def run(lib, m, x):
        fn = checkpoint_sequential if lib is ember else TC.checkpoint_sequential
        return fn(m, 2, x, use_reentrant=reentrant)

    return run


@pytest.mark.parametrize("reentrant", [True, False])
@pytest.mark.parametrize("make", [with_checkpoint, sequential])
@pytest.mark.parametrize("x_requires_grad", [True, False])
def test_gradients_equal_plain_and_torch(reentrant, make, x_requires_grad):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = grads(ember, make(reentrant), x_requires_grad)
        ref = grads(torch, make(reentrant), x_requires_grad)
    assert [g is None for g in got] == [g is None for g in ref]
    for a, b in zip(got, ref):
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10)
    if not (reentrant and not x_requires_grad):  # reentrant without an input needing grad: None
        for a, b in zip(got, grads(ember, plain, x_requires_grad)):
            if b is not None:
                np.testing.assert_allclose(a, b, rtol=1e-12)


def test_autograd_grad_through_the_non_reentrant_variant():
    lin = ember.nn.Linear(3, 2).double()
    x = ember.tensor(X)
    (gw,) = ember.autograd.grad(checkpoint(lin, x, use_reentrant=False).sum(), lin.weight)
    (ref,) = ember.autograd.grad(lin(x).sum(), lin.weight)
    np.testing.assert_allclose(gw.numpy(), ref.numpy())


def test_intermediates_are_not_kept():
    kept = []

    def block(t):
        h = t.exp()
        kept.append(weakref.ref(h))
        return h.sin()

    x = ember.ones(3, requires_grad=True)
    y_plain = block(x)
    y_ckpt = checkpoint(block, x, use_reentrant=False)
    gc.collect()
    assert kept[0]() is not None  # plain: sin's history holds exp's output
    assert kept[1]() is None  # checkpointed: nothing holds it
    y_ckpt.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (np.cos(np.e) * np.e) * np.ones(3), rtol=1e-6)
    del y_plain


def test_dropout_masks_replayed_in_backward():
    drop = ember.nn.Dropout(0.5)
    x = ember.ones(64, requires_grad=True)
    ember.manual_seed(0)
    y = checkpoint(drop, x, use_reentrant=False)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())  # grad = mask * 2


def test_warnings_and_errors_as_torch():
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed"):
        checkpoint(lambda t: t * 2, ember.ones(1, requires_grad=True))
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed"):
        TC.checkpoint(lambda t: t * 2, torch.ones(1, requires_grad=True))
    messages = []
    for fn, lib in ((checkpoint, ember), (TC.checkpoint, torch)):
        with pytest.raises(ValueError) as info:
            fn(lambda t, k=1: t * k, lib.ones(1), use_reentrant=True, k=2)
        messages.append(str(info.value))
    assert messages[0] == messages[1] == "Unexpected keyword arguments: k"
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        checkpoint(lambda t: t * 2, ember.ones(1), use_reentrant=True)
    out = checkpoint(
        lambda t, k=1: t * k, ember.ones(1, requires_grad=True), k=3, use_reentrant=False
    )
    assert out.item() == 3.0
