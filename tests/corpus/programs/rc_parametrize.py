# corpus: exact
"""Parametrizations: a custom symmetric constraint, orthogonal, weight_norm, spectral_norm."""

import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils import parametrizations


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


layer = nn.Linear(3, 3)
with torch.no_grad():
    layer.weight.copy_(torch.linspace(-1, 1, 9).reshape(3, 3))
    layer.bias.fill_(0.1)
parametrize.register_parametrization(layer, "weight", Symmetric())
print(layer)
print(layer.weight)
print(torch.equal(layer.weight, layer.weight.T))
print(parametrize.is_parametrized(layer), parametrize.is_parametrized(layer, "bias"))
print([n for n, _ in layer.named_parameters()])
print(list(layer.state_dict().keys()))
print(layer.parametrizations.weight.original)

x = torch.linspace(0, 1, 6).reshape(2, 3)
out = layer(x).sum()
out.backward()
print(layer.parametrizations.weight.original.grad)

with parametrize.cached():
    print(layer.weight is layer.weight)
parametrize.remove_parametrizations(layer, "weight", leave_parametrized=True)
print([n for n, _ in layer.named_parameters()])
print(layer.weight)
print(type(layer.weight).__name__, parametrize.is_parametrized(layer))

wn = nn.Linear(4, 2)
with torch.no_grad():
    wn.weight.copy_(torch.cos(torch.arange(8.0)).reshape(2, 4))
    wn.bias.zero_()
wn = parametrizations.weight_norm(wn)
print([n for n, _ in wn.named_parameters()])
print(wn.parametrizations.weight.original0)
print(wn.parametrizations.weight.original1)
print(wn.weight)
inp = torch.linspace(-1, 1, 8).reshape(2, 4)
wn(inp).pow(2).sum().backward()
print(wn.parametrizations.weight.original0.grad)
print(wn.parametrizations.weight.original1.grad)

orth = nn.Linear(3, 3)
with torch.no_grad():
    orth.weight.copy_(torch.eye(3) + 0.1 * torch.sin(torch.arange(9.0)).reshape(3, 3))
orth = parametrizations.orthogonal(orth)
q = orth.weight
print([n for n, _ in orth.named_parameters()])
print(q.shape, torch.allclose(q @ q.T, torch.eye(3), atol=1e-5))

sn = parametrizations.spectral_norm(nn.Linear(5, 4))
print([n for n, _ in sn.named_parameters()])
print(sorted(n for n, _ in sn.named_buffers()))
print(sn.weight.shape)
