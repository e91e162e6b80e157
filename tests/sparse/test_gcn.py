"""A two-layer GCN (Kipf & Welling) trained with ember and with PyTorch from the same initial
weights, on a normalized sparse adjacency: the losses agree to 1e-6 (float64) at every step."""

import warnings

import numpy as np
import torch

import ember

warnings.filterwarnings("ignore", message="Sparse invariant checks")

NODES, FEATURES, HIDDEN, CLASSES, STEPS = 12, 5, 8, 3, 20


def _graph(rng):
    """Symmetric random edges plus self loops, normalized D^-1/2 (A + I) D^-1/2, as COO."""
    a = np.triu(rng.random((NODES, NODES)) < 0.25, 1)
    a = (a | a.T | np.eye(NODES, dtype=bool)).astype(np.float64)
    d = a.sum(1) ** -0.5
    norm = d[:, None] * a * d[None, :]
    rows, cols = np.nonzero(norm)
    return np.stack([rows, cols]), norm[rows, cols]


def _train(mod, indices, values, x, labels, w1, b1, w2, b2) -> list:
    f64 = mod.float64
    adj = mod.sparse_coo_tensor(mod.tensor(indices), mod.tensor(values, dtype=f64), (NODES, NODES))
    params = [mod.tensor(p, dtype=f64, requires_grad=True) for p in (w1, b1, w2, b2)]
    opt = mod.optim.Adam(params, lr=0.05)
    feats, target = mod.tensor(x, dtype=f64), mod.tensor(labels)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        h = mod.relu(mod.sparse.mm(adj, feats @ params[0]) + params[1])
        logits = mod.spmm(adj, h @ params[2]) + params[3]
        loss = mod.nn.functional.cross_entropy(logits, target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_gcn_training_matches_torch():
    rng = np.random.default_rng(0)
    indices, values = _graph(rng)
    x = rng.standard_normal((NODES, FEATURES))
    labels = rng.integers(0, CLASSES, NODES)
    weights = (
        rng.standard_normal((FEATURES, HIDDEN)) * 0.5,
        np.zeros(HIDDEN),
        rng.standard_normal((HIDDEN, CLASSES)) * 0.5,
        np.zeros(CLASSES),
    )
    got = _train(ember, indices, values, x, labels, *weights)
    want = _train(torch, indices, values, x, labels, *weights)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    assert got[-1] < got[0] - 0.1, "the GCN did not learn: the comparison would be vacuous"
