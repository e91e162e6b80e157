"""Shared pieces of the compiled-step tests: a small MLP trained by ``mse_loss`` and the data of
its steps (the ``jit`` and ``gpu`` fixtures are in conftest)."""

import numpy as np

import ember
import ember.nn as nn
import ember.nn.functional as F


def mlp_pair(device="cpu"):
    """Two ``12 -> 16 -> 3`` MLPs with the same weights."""
    ember.manual_seed(0)
    a = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 3)).to(device)
    b = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 3)).to(device)
    b.load_state_dict(a.state_dict())
    return a, b


def train_step(model, opt, x, y):
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss


def batches(device="cpu", n=5):
    """``n`` batches ``(x, y)`` of 6 samples for ``mlp_pair``'s models."""
    rng = np.random.default_rng(1)
    return [
        tuple(
            ember.tensor(rng.standard_normal(s).astype(np.float32), device=device)
            for s in ((6, 12), (6, 3))
        )
        for _ in range(n)
    ]
