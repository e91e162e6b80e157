# corpus: exact
"""Logistic regression on two separable blobs, with BCEWithLogitsLoss and accuracy."""

import torch
import torch.nn as nn

n = 40
t = torch.linspace(0, 6.283, n)
x0 = torch.stack([torch.cos(t) - 1.5, torch.sin(t)], dim=1)
x1 = torch.stack([torch.cos(t) + 1.5, torch.sin(t) * 0.5], dim=1)
X = torch.cat([x0, x1])
y = torch.cat([torch.zeros(n), torch.ones(n)]).unsqueeze(1)


class LogisticRegression(nn.Module):
    def __init__(self, n_features):
        super().__init__()
        self.linear = nn.Linear(n_features, 1)

    def forward(self, x):
        return self.linear(x)


model = LogisticRegression(2)
nn.init.zeros_(model.linear.weight)
nn.init.zeros_(model.linear.bias)
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(100):
    logits = model(X)
    loss = criterion(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if (epoch + 1) % 20 == 0:
        with torch.no_grad():
            acc = ((torch.sigmoid(logits) > 0.5).float() == y).float().mean()
        print(f"epoch: {epoch + 1}, loss = {loss.item():.4f}, accuracy = {acc:.4f}")

print(model.linear.weight.data, model.linear.bias.data)
probs = torch.sigmoid(model(torch.tensor([[-2.0, 0.0], [2.0, 0.0], [0.0, 0.0]])))
print(probs.detach().squeeze())
bce = nn.BCELoss()
print(bce(torch.sigmoid(model(X)), y).item() - loss.item() < 0)
