# corpus: exact
"""Gradient accumulation over micro-batches, clip_grad_value_, flat parameter vectors."""

import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_value_, parameters_to_vector, vector_to_parameters

model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
for i, p in enumerate(model.parameters()):
    nn.init.constant_(p, 0.1 * (i + 1))
    with torch.no_grad():
        p.add_(0.05 * torch.cos(torch.arange(p.numel(), dtype=torch.float32)).reshape(p.shape))

X = torch.stack(
    [torch.sin(torch.arange(12.0)), torch.cos(torch.arange(12.0)), torch.linspace(-1, 1, 12)], 1
)
Y = torch.stack([X.sum(1), X[:, 0] - X[:, 2]], 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
loss_fn = nn.MSELoss()
accum = 3
for epoch in range(4):
    opt.zero_grad()
    total = 0.0
    for i in range(0, 12, 2):
        loss = loss_fn(model(X[i : i + 2]), Y[i : i + 2]) / accum
        loss.backward()
        total += loss.item()
        if (i // 2 + 1) % accum == 0:
            clip_grad_value_(model.parameters(), clip_value=0.2)
            opt.step()
            opt.zero_grad()
    print(epoch, round(total, 6))

print(model[0].weight)
vec = parameters_to_vector(model.parameters())
print(vec.shape, round(vec.sum().item(), 5), vec[:4])
vector_to_parameters(torch.linspace(-1, 1, vec.numel()), model.parameters())
print(model[2].bias, model[0].weight[0])
print(model(X[:2]))

for p in model.parameters():
    p.grad = torch.full_like(p, 0.5)
model[0].bias.grad = torch.tensor([-1.0, 0.1, 2.0, -0.3, 0.0])
clip_grad_value_(model[0].parameters(), 0.25)
print(model[0].bias.grad)
print(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0))
print(model[2].bias.grad)
