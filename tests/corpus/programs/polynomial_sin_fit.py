# corpus: exact
"""Fitting y = sin(x) with a third-order polynomial three ways: raw tensors with manual
gradients, autograd, and nn.Sequential with nn.Flatten and an optimizer."""

import math

import torch

dtype = torch.float
device = torch.device("cpu")
x = torch.linspace(-math.pi, math.pi, 500, device=device, dtype=dtype)
y = torch.sin(x)

a = torch.tensor(0.1, device=device, dtype=dtype)
b = torch.tensor(-0.2, device=device, dtype=dtype)
c = torch.tensor(0.3, device=device, dtype=dtype)
d = torch.tensor(-0.4, device=device, dtype=dtype)
learning_rate = 1e-6
for t in range(500):
    y_pred = a + b * x + c * x**2 + d * x**3
    loss = (y_pred - y).pow(2).sum().item()
    if t % 100 == 99:
        print(t, f"{loss:.4f}")
    grad_y_pred = 2.0 * (y_pred - y)
    a -= learning_rate * grad_y_pred.sum()
    b -= learning_rate * (grad_y_pred * x).sum()
    c -= learning_rate * (grad_y_pred * x**2).sum()
    d -= learning_rate * (grad_y_pred * x**3).sum()
print(f"Result: y = {a.item():.5f} + {b.item():.5f} x + {c.item():.5f} x^2 + {d.item():.5f} x^3")

coeffs = torch.tensor([0.1, -0.2, 0.3, -0.4], requires_grad=True)
for _ in range(500):
    y_pred = coeffs[0] + coeffs[1] * x + coeffs[2] * x**2 + coeffs[3] * x**3
    loss = (y_pred - y).pow(2).sum()
    loss.backward()
    with torch.no_grad():
        coeffs -= learning_rate * coeffs.grad
        coeffs.grad = None
print(f"autograd: {coeffs.detach()} loss {loss.item():.4f}")

p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
print(xx.shape)
model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
torch.nn.init.constant_(model[0].weight, 0.0)
torch.nn.init.constant_(model[0].bias, 0.0)
loss_fn = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-6, momentum=0.9)
for t in range(300):
    loss = loss_fn(model(xx), y)
    if t % 100 == 99:
        print(t, f"{loss.item():.4f}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
linear_layer = model[0]
w = linear_layer.weight[:, 0].item(), linear_layer.weight[:, 1].item()
print(f"Result: y = {linear_layer.bias.item():.5f} + {w[0]:.5f} x + {w[1]:.5f} x^2 + ...")
