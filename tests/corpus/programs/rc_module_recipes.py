# corpus: exact
"""Module recipes: apply() for initialisation, a custom extra_repr, Sequential slicing,
insert and extend, full backward hooks, and fusing a Conv2d with its BatchNorm for inference."""

import torch
import torch.nn as nn
from torch.nn.utils import fuse_conv_bn_eval


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.constant_(m.weight, 0.1)
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.Conv2d):
        with torch.no_grad():
            m.weight.copy_(torch.sin(torch.arange(m.weight.numel()) * 0.3).reshape(m.weight.shape))
            m.bias.fill_(0.05)


class Scaled(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * self.factor

    def extra_repr(self):
        return f"factor={self.factor}"


model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), Scaled(2.0), nn.Linear(4, 2))
print(model.apply(init_weights) is model)
print(model)
print(model[1:3], type(model[1:3]).__name__, len(model[:-1]))
model.insert(2, nn.Identity())
model.extend([nn.Tanh()])
model.append(Scaled(0.5))
print(model)

grads = []
h = model[0].register_full_backward_hook(
    lambda mod, gin, gout: grads.append(
        (
            type(mod).__name__,
            [None if g is None else tuple(g.shape) for g in gin],
            tuple(gout[0].shape),
        )
    )
)
x = torch.linspace(-1, 1, 6).reshape(2, 3).requires_grad_()
out = model(x)
out.sum().backward()
print(out)
print(grads, x.grad)
h.remove()

conv = nn.Conv2d(2, 3, 3, padding=1)
bn = nn.BatchNorm2d(3)
init_weights(conv)
with torch.no_grad():
    bn.running_mean.copy_(torch.tensor([0.1, -0.2, 0.3]))
    bn.running_var.copy_(torch.tensor([0.5, 1.5, 2.0]))
    bn.weight.copy_(torch.tensor([1.0, 0.5, 2.0]))
    bn.bias.copy_(torch.tensor([0.0, 0.1, -0.1]))
conv.eval()
bn.eval()
fused = fuse_conv_bn_eval(conv, bn)
print(fused)
img = torch.cos(torch.arange(32.0) * 0.4).reshape(1, 2, 4, 4)
ref = bn(conv(img))
print(torch.allclose(fused(img), ref, atol=1e-6))
print(fused.bias)
print(fused.weight[0, 0])
