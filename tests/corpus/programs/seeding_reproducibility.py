# corpus: exact
"""Reproducibility: the same seed gives the same draws, generators are independent,
and random functions have the shapes, dtypes and ranges asked for."""

import random

import numpy as np
import torch


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


seed_everything(42)
a = torch.rand(3)
seed_everything(42)
b = torch.rand(3)
print(torch.equal(a, b), a.shape, a.dtype)
g1 = torch.Generator().manual_seed(7)
g2 = torch.Generator().manual_seed(7)
print(torch.equal(torch.randn(4, generator=g1), torch.randn(4, generator=g2)))
print(g1.initial_seed())
state = torch.get_rng_state()
c = torch.randn(2)
torch.set_rng_state(state)
print(torch.equal(c, torch.randn(2)))
n = torch.randn(10000)
print(abs(n.mean().item()) < 0.05, abs(n.std().item() - 1) < 0.05)
u = torch.rand(1000)
print(bool(u.min() >= 0), bool(u.max() < 1))
r = torch.randint(0, 5, (1000,))
print(r.dtype, sorted(r.unique().tolist()))
p = torch.randperm(6)
print(sorted(p.tolist()), p.dtype)
print(torch.randn(2, 3).shape, torch.rand_like(torch.zeros(2, 2)).shape)
print(torch.randint_like(torch.zeros(3), 10).dtype, torch.normal(0.0, 1.0, size=(2,)).shape)
m = torch.multinomial(torch.tensor([0.0, 1.0, 0.0]), 3, replacement=True)
print(m)
print(torch.bernoulli(torch.ones(3)), torch.bernoulli(torch.zeros(3)))
print(torch.initial_seed())
