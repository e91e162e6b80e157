# corpus: exact
"""nn.init: deterministic initialisers exactly, random ones by their bounds and shapes."""

import math

import torch
import torch.nn as nn

w = torch.empty(3, 5)
print(nn.init.constant_(w, 0.3))
print(nn.init.ones_(w).sum(), nn.init.zeros_(w).sum())
print(nn.init.eye_(torch.empty(3, 4)))
print(nn.init.dirac_(torch.empty(2, 2, 3))[:, :, 1])
print(nn.init.calculate_gain("relu"), nn.init.calculate_gain("tanh"))
print(nn.init.calculate_gain("leaky_relu", 0.2), nn.init.calculate_gain("linear"))

torch.manual_seed(0)
big = torch.empty(200, 100)
nn.init.xavier_uniform_(big)
bound = math.sqrt(6 / (200 + 100))
print(bool(big.abs().max() <= bound), bool(big.abs().max() > 0.9 * bound))
nn.init.kaiming_uniform_(big, a=math.sqrt(5))
print(bool(big.abs().max() <= 1 / math.sqrt(100)))
nn.init.uniform_(big, -0.1, 0.2)
print(bool(big.min() >= -0.1), bool(big.max() <= 0.2))
nn.init.normal_(big, mean=1.0, std=0.01)
print(round(big.mean().item(), 2), round(big.std().item(), 3))
nn.init.kaiming_normal_(big, mode="fan_out", nonlinearity="relu")
print(round(big.std().item() / math.sqrt(2 / 200), 1))
nn.init.trunc_normal_(big, std=0.02, a=-0.04, b=0.04)
print(bool(big.abs().max() <= 0.04))
nn.init.orthogonal_(w)
print(torch.allclose(w @ w.T, torch.eye(3), atol=1e-5))


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.constant_(m.weight, 0.01)
        nn.init.zeros_(m.bias)


net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
net.apply(init_weights)
print(net(torch.ones(1, 3)))
layer = nn.Linear(100, 10)
print(bool(layer.weight.abs().max() <= 1 / math.sqrt(100)), layer.weight.shape)
