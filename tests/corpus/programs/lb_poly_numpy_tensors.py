# corpus: exact
"""Learning PyTorch with Examples: fitting sin(x) with a cubic, first in NumPy with manual
gradients, then with tensors and manual gradients, then with autograd."""

import math

import numpy as np
import torch

x = np.linspace(-math.pi, math.pi, 2000)
y = np.sin(x)
a, b, c, d = 0.1, -0.1, 0.2, -0.2
learning_rate = 1e-6
for t in range(1000):
    y_pred = a + b * x + c * x**2 + d * x**3
    loss = np.square(y_pred - y).sum()
    if t % 200 == 199:
        print(t, f"{loss:.6f}")
    grad_y_pred = 2.0 * (y_pred - y)
    a -= learning_rate * grad_y_pred.sum()
    b -= learning_rate * (grad_y_pred * x).sum()
    c -= learning_rate * (grad_y_pred * x**2).sum()
    d -= learning_rate * (grad_y_pred * x**3).sum()
print(f"Result: y = {a} + {b} x + {c} x^2 + {d} x^3")

dtype = torch.float
device = torch.device("cpu")
x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)
a = torch.full((), 0.1, device=device, dtype=dtype)
b = torch.full((), -0.1, device=device, dtype=dtype)
c = torch.full((), 0.2, device=device, dtype=dtype)
d = torch.full((), -0.2, device=device, dtype=dtype)
for t in range(1000):
    y_pred = a + b * x + c * x**2 + d * x**3
    loss = (y_pred - y).pow(2).sum().item()
    if t % 200 == 199:
        print(t, f"{loss:.4f}")
    grad_y_pred = 2.0 * (y_pred - y)
    grad_a = grad_y_pred.sum()
    grad_b = (grad_y_pred * x).sum()
    grad_c = (grad_y_pred * x**2).sum()
    grad_d = (grad_y_pred * x**3).sum()
    a -= learning_rate * grad_a
    b -= learning_rate * grad_b
    c -= learning_rate * grad_c
    d -= learning_rate * grad_d
print(f"Result: y = {a.item():.5f} + {b.item():.5f} x + {c.item():.5f} x^2 + {d.item():.5f} x^3")

dtype = torch.float64
x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
y = torch.sin(x)
a = torch.tensor(0.1, dtype=dtype, requires_grad=True)
b = torch.tensor(-0.1, dtype=dtype, requires_grad=True)
c = torch.tensor(0.2, dtype=dtype, requires_grad=True)
d = torch.tensor(-0.2, dtype=dtype, requires_grad=True)
for t in range(1000):
    y_pred = a + b * x + c * x**2 + d * x**3
    loss = (y_pred - y).pow(2).sum()
    if t % 200 == 199:
        print(t, f"{loss.item():.6f}")
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
print(f"Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3")
print(a.dtype, a.grad, loss.grad_fn)
