"""``axis`` and ``keepdims`` (NumPy's names) wherever PyTorch takes them for ``dim`` and
``keepdim``: ``ember.*`` functions and Tensor methods, against torch."""

import numpy as np
import pytest
import torch

import ember

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) % 7

CASES = {
    "sum": lambda m, x: m.sum(x, axis=1, keepdims=True),
    "x.sum": lambda m, x: x.sum(axis=-1, keepdims=True),
    "mean": lambda m, x: m.mean(x, axis=(0, 2)),
    "x.mean": lambda m, x: x.mean(axis=0, keepdims=True),
    "prod": lambda m, x: m.prod(x, axis=2),
    "std": lambda m, x: x.std(axis=1, keepdims=True),
    "var": lambda m, x: m.var(x, axis=1),
    "amax": lambda m, x: m.amax(x, axis=1, keepdims=True),
    "max.values": lambda m, x: x.max(axis=2).values,
    "min.indices": lambda m, x: m.min(x, axis=1).indices,
    "argmax": lambda m, x: m.argmax(x, axis=1, keepdims=True),
    "x.argmin": lambda m, x: x.argmin(axis=2),
    "cumsum": lambda m, x: m.cumsum(x, axis=1),
    "logsumexp": lambda m, x: m.logsumexp(x, axis=2, keepdims=True),
    "any": lambda m, x: (x > 3).any(axis=1),
    "all": lambda m, x: m.all(x > 0, axis=2),
    "softmax": lambda m, x: x.softmax(axis=1),
    "cat": lambda m, x: m.cat([x, x], axis=1),
    "stack": lambda m, x: m.stack([x, x], axis=0),
    "squeeze": lambda m, x: m.squeeze(x[:, :1], axis=1),
    "unsqueeze": lambda m, x: x.unsqueeze(axis=0),
    "sort.values": lambda m, x: x.sort(axis=1).values,
    "topk.values": lambda m, x: m.topk(x, 2, axis=2).values,
    "median.values": lambda m, x: x.median(axis=2).values,
    "count_nonzero": lambda m, x: m.count_nonzero(x, axis=0),
}


@pytest.mark.parametrize("name", CASES)
def test_numpy_names_as_torch(name):
    fn = CASES[name]
    want = fn(torch, torch.from_numpy(X.copy()))
    got = fn(ember, ember.tensor(X))
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_both_names_are_refused():
    x = ember.tensor(X)
    with pytest.raises(TypeError, match="both 'dim' and its NumPy name 'axis'"):
        x.sum(dim=1, axis=1)
    with pytest.raises(TypeError):
        torch.from_numpy(X).sum(dim=1, axis=1)


def test_binary_operators_stay_unwrapped():
    """Only functions with a ``dim`` or ``keepdim`` take the names: ``x + y`` pays nothing."""
    assert not hasattr(ember.Tensor.__add__, "__wrapped__")
