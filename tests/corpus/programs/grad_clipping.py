# corpus: exact
"""Gradient clipping by norm and by value, inside a training step."""

import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape) * (i + 1))
x = torch.linspace(-2, 2, 20).reshape(5, 4)
y = torch.linspace(0, 10, 5).unsqueeze(1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for step in range(5):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    clipped = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()))
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}, norm before {total_norm:.4f}, after {clipped:.4f}")

optimizer.zero_grad()
nn.functional.mse_loss(model(x), y).backward()
nn.utils.clip_grad_value_(model.parameters(), clip_value=0.05)
print(model[0].weight.grad.abs().max(), model[2].bias.grad)
norm_inf = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5, norm_type=float("inf"))
print(norm_inf)
params = [p.detach().clone() for p in model.parameters()]
vec = nn.utils.parameters_to_vector(model.parameters())
print(vec.shape, torch.equal(vec[:4], params[0].flatten()[:4]))
