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


def compiled_equals_eager(name: str, kwargs: dict):
    """Train two equal MLPs with optimizer ``name(**kwargs)``, one eagerly and one through
    ``ember.compile``, over ``batches()``, checking losses and weights after every step;
    returns ``(eager optimizer, compiled optimizer, compiled step)``."""
    from ember.static import passes

    m1, m2 = mlp_pair()
    o1 = getattr(ember.optim, name)(m1.parameters(), **kwargs)
    o2 = getattr(ember.optim, name)(m2.parameters(), **kwargs)
    step = ember.compile(train_step)
    for x, y in batches():
        want = train_step(m1, o1, x, y)
        got = step(m2, o2, x, y)
        passes.wait_for_kernels()
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-6)
        for (k, a), b in zip(m1.state_dict().items(), m2.state_dict().values()):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-7, err_msg=k)
    return o1, o2, step
