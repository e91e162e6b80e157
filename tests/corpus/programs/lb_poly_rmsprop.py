# corpus: exact
"""Learning PyTorch with Examples, optim: the cubic fit of sin(x) as
nn.Sequential(nn.Linear(3, 1), nn.Flatten(0, 1)) on x.unsqueeze(-1).pow(p), trained with
optim.RMSprop(lr=1e-3)."""

import math

import torch

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
loss_fn = torch.nn.MSELoss(reduction="sum")
model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
torch.nn.init.constant_(model[0].weight, 0.0)
torch.nn.init.constant_(model[0].bias, 0.0)
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
for t in range(600):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, f"{loss.item():.4f}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
linear_layer = model[0]
print(
    f"Result: y = {linear_layer.bias.item():.5f} + {linear_layer.weight[:, 0].item():.5f} x + "
    f"{linear_layer.weight[:, 1].item():.5f} x^2 + {linear_layer.weight[:, 2].item():.5f} x^3"
)
print(sorted(optimizer.state_dict()["state"][0].keys()))
