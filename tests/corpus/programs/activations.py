# corpus: exact
"""Activation functions as modules and as functions, with their gradients."""

import torch
import torch.nn as nn
import torch.nn.functional as F

x = torch.linspace(-3, 3, 7)
modules = [
    nn.ReLU(),
    nn.LeakyReLU(0.1),
    nn.ELU(),
    nn.SELU(),
    nn.CELU(0.5),
    nn.GELU(),
    nn.GELU(approximate="tanh"),
    nn.SiLU(),
    nn.Mish(),
    nn.Softplus(beta=2),
    nn.Sigmoid(),
    nn.Tanh(),
    nn.Hardtanh(-1, 1),
    nn.Hardsigmoid(),
    nn.Hardswish(),
    nn.ReLU6(),
    nn.Softsign(),
    nn.Tanhshrink(),
    nn.LogSigmoid(),
    nn.Threshold(0.5, -1.0),
]
for m in modules:
    print(m, m(x))
prelu = nn.PReLU()
print(prelu, prelu(x), prelu.weight)
print(nn.Softmax(dim=0)(x), nn.LogSoftmax(dim=0)(x), nn.Softmin(dim=0)(x))
print(F.relu(x, inplace=False), F.leaky_relu(x, 0.2), F.gelu(x), F.silu(x))
print(F.glu(torch.arange(8.0).reshape(2, 4), dim=1))
xg = x.clone().requires_grad_()
(F.gelu(xg) + F.elu(xg) + torch.sigmoid(xg) + F.softplus(xg)).sum().backward()
print(xg.grad)
y = x.clone()
F.relu_(y)
print(y, nn.ReLU(inplace=True)(x.clone()))
