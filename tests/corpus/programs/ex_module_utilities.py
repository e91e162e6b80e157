# corpus: exact
"""Module utilities tutorials lean on: print(model) for nested models, a summary-style
parameter table with numel(), model.apply(fn) to initialise, register_buffer (persistent
and not), named_children / named_modules / named_buffers, state_dict keys, train/eval
flags, zero_grad(set_to_none=...), extra_repr, and nn.Sequential with an OrderedDict."""

from collections import OrderedDict

import torch
import torch.nn as nn


class Normalize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean))
        self.register_buffer("std", torch.tensor(std))
        self.register_buffer("calls", torch.zeros((), dtype=torch.long), persistent=False)

    def forward(self, x):
        self.calls += 1
        return (x - self.mean) / self.std

    def extra_repr(self):
        return f"mean={self.mean.tolist()}, std={self.std.tolist()}"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = Normalize([0.5, 0.5], [0.25, 0.5])
        self.features = nn.Sequential(
            OrderedDict(
                [
                    ("fc1", nn.Linear(2, 8)),
                    ("act1", nn.ReLU()),
                    ("bn", nn.BatchNorm1d(8)),
                    ("fc2", nn.Linear(8, 4, bias=False)),
                    ("act2", nn.Tanh()),
                ]
            )
        )
        self.heads = nn.ModuleList([nn.Linear(4, 1), nn.Linear(4, 2)])
        self.drop = nn.Dropout(p=0.3)

    def forward(self, x):
        h = self.drop(self.features(self.norm(x)))
        return torch.cat([head(h) for head in self.heads], dim=1)


def init_weights(m):
    if isinstance(m, nn.Linear):
        with torch.no_grad():
            m.weight.copy_(torch.cos(torch.arange(m.weight.numel()) * 0.8).view_as(m.weight) * 0.5)
            if m.bias is not None:
                m.bias.fill_(0.01)
    print("init", type(m).__name__)


model = Net()
model.apply(init_weights)
print(model)
print(f"{'Layer':<24}{'Shape':<18}{'Params':>8}")
total = 0
for name, p in model.named_parameters():
    print(f"{name:<24}{str(list(p.shape)):<18}{p.numel():>8}")
    total += p.numel()
trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
print(f"Total params: {total:,}  Trainable: {trainable:,}")
print([n for n, _ in model.named_children()])
print([n for n, _ in model.named_modules()][:6])
print([(n, b.dtype) for n, b in model.named_buffers()])
print(list(model.state_dict().keys()))
print(model.features.fc1, model.features[0] is model.features.fc1, len(model.features))

x = torch.stack([torch.linspace(0, 1, 5), torch.linspace(1, -1, 5)], dim=1)
model.eval()
print(model.training, model.features.bn.training)
print(model(x))
model.train()
out = model(x)
print(model.training, out.shape, model.norm.calls, model.features.bn.num_batches_tracked)
model.drop.p = 0.0
out = model(x)
out.sum().backward()
print(model.heads[0].weight.grad)
model.zero_grad()
print(model.heads[0].weight.grad)
out = model(x)
out.sum().backward()
model.zero_grad(set_to_none=False)
print(model.heads[0].weight.grad)
print(model.get_submodule("features.fc2"), model.get_parameter("heads.1.bias").shape)
del model.heads[1]
print(len(model.heads), sum(1 for _ in model.parameters()))
