# corpus: exact
"""A multi-layer perceptron on a synthetic 3-class spiral, trained with Adam in mini-batches."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

N, K = 30, 3
xs, ys = [], []
for k in range(K):
    r = torch.linspace(0.1, 1.0, N)
    th = torch.linspace(k * 4.0, (k + 1) * 4.0, N) + 0.2 * torch.sin(torch.arange(N) * 1.7)
    xs.append(torch.stack([r * torch.sin(th), r * torch.cos(th)], dim=1))
    ys.append(torch.full((N,), k, dtype=torch.long))
X, Y = torch.cat(xs), torch.cat(ys)
perm = torch.arange(N * K).remainder(7).argsort(stable=True)
X, Y = X[perm], Y[perm]


class MLP(nn.Module):
    def __init__(self, d_in=2, hidden=32, d_out=3):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, d_out)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


model = MLP()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        n = p.numel()
        p.copy_(torch.sin(torch.arange(n, dtype=torch.float32) * (1.3 + i)).reshape(p.shape))
        p.mul_(1.0 / math.sqrt(p.shape[-1]))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
loss_fn = nn.CrossEntropyLoss()
batch_size = 30
for epoch in range(15):
    total = 0.0
    for i in range(0, len(X), batch_size):
        xb, yb = X[i : i + batch_size], Y[i : i + batch_size]
        loss = loss_fn(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * len(xb)
    if epoch % 3 == 2:
        with torch.no_grad():
            correct = (model(X).argmax(dim=1) == Y).sum().item()
        print(f"epoch {epoch}: loss {total / len(X):.5f}, correct {correct}/{len(X)}")
model.eval()
with torch.no_grad():
    probs = F.softmax(model(X[:3]), dim=1)
print(probs)
