# corpus: exact
"""Pruning a layer by L1 magnitude: masks, the original weight, and making it permanent."""

import torch
import torch.nn as nn
import torch.nn.utils.prune as prune

conv = nn.Conv2d(1, 2, 2)
fc = nn.Linear(6, 3)
with torch.no_grad():
    conv.weight.copy_(torch.sin(torch.arange(8.0)).reshape(2, 1, 2, 2))
    conv.bias.copy_(torch.tensor([0.1, -0.1]))
    fc.weight.copy_(torch.cos(torch.arange(18.0) * 0.7).reshape(3, 6))
    fc.bias.fill_(0.0)

prune.l1_unstructured(conv, name="weight", amount=0.5)
print([n for n, _ in conv.named_parameters()])
print([n for n, _ in conv.named_buffers()])
print(conv.weight_mask)
print(conv.weight)
print(conv.weight_orig)
print(prune.is_pruned(conv), prune.is_pruned(fc))
print(len(conv._forward_pre_hooks))

prune.l1_unstructured(fc, name="weight", amount=4)
print(fc.weight_mask.sum(), int((fc.weight == 0).sum()))
prune.l1_unstructured(fc, name="bias", amount=0.0)
print(fc.bias_mask)

x = torch.linspace(-1, 1, 9).reshape(1, 1, 3, 3)
y = conv(x)
print(y)
y.sum().backward()
print(conv.weight_orig.grad)

prune.remove(conv, "weight")
print([n for n, _ in conv.named_parameters()])
print([n for n, _ in conv.named_buffers()])
print(conv.weight)
print(list(conv.state_dict().keys()))
print(list(fc.state_dict().keys()))
