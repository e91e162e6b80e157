# corpus: trajectory rtol=0.5 atol=0.05
"""Random pieces: WeightedRandomSampler, random_split with a seeded Generator, trunc_normal_,
and a small net initialised with it, trained a few steps."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, WeightedRandomSampler, random_split

torch.manual_seed(7)
weights = torch.tensor([0.1, 0.1, 0.8, 0.0])
sampler = WeightedRandomSampler(weights, num_samples=12, replacement=True)
draws = list(sampler)
print(len(sampler), len(draws), all(0 <= d < 3 for d in draws), 3 in draws)
no_repl = list(WeightedRandomSampler([1.0, 2.0, 3.0, 4.0], num_samples=4, replacement=False))
print(sorted(no_repl))

data = TensorDataset(torch.arange(20.0).reshape(10, 2), torch.arange(10))
gen = torch.Generator().manual_seed(42)
train, val = random_split(data, [8, 2], generator=gen)
print(len(train), len(val), type(train).__name__)
parts = random_split(range(10), [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(0))
print([len(p) for p in parts], sorted(i for p in parts for i in p))
loader = DataLoader(data, batch_size=4, sampler=WeightedRandomSampler(torch.ones(10), 8))
print([xb.shape for xb, _ in loader])

w = torch.empty(200, 50)
nn.init.trunc_normal_(w, mean=0.0, std=0.5, a=-1.0, b=1.0)
print(w.shape, bool(w.min() >= -1.0), bool(w.max() <= 1.0))
print(round(w.mean().item(), 1), round(w.std().item(), 1))

net = nn.Sequential(nn.Linear(2, 16), nn.GELU(), nn.Linear(16, 1))
for m in net:
    if isinstance(m, nn.Linear):
        nn.init.trunc_normal_(m.weight, std=0.2)
        nn.init.zeros_(m.bias)
X = torch.stack([torch.linspace(-1, 1, 32), torch.sin(torch.linspace(0, 6, 32))], 1)
y = (X[:, :1] * X[:, 1:]).clone()
opt = torch.optim.Adam(net.parameters(), lr=0.02)
for step in range(40):
    opt.zero_grad()
    loss = nn.functional.mse_loss(net(X), y)
    loss.backward()
    opt.step()
    if step % 10 == 9:
        print(step, loss.item())
