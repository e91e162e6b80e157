# corpus: exact
"""Containers printed, submodules and parameters by path, buffers, children, hooks with kwargs."""

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)
        self.norm = nn.BatchNorm1d(3)
        self.register_buffer("step", torch.tensor(0))
        self.register_buffer("scratch", torch.zeros(2), persistent=False)

    def forward(self, x, scale=1.0):
        return self.norm(self.proj(x)) * scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleDict({"first": Block(), "second": Block()})
        self.gains = nn.ParameterList([nn.Parameter(torch.ones(3)), nn.Parameter(torch.zeros(1))])
        self.extra = nn.ParameterDict(
            {"alpha": nn.Parameter(torch.tensor([0.5])), "beta": nn.Parameter(torch.ones(2, 2))}
        )

    def forward(self, x, scale=1.0):
        for block in self.blocks.values():
            x = block(x, scale=scale)
        return x * self.gains[0] + self.extra["alpha"]


net = Net()
for name, p in net.named_parameters():
    nn.init.constant_(p, 0.2) if p.dim() > 1 else None
print(net)
print(net.gains)
print(net.extra)
print([n for n, _ in net.named_buffers()])
print([n for n, _ in net.named_children()])
print([n for n, _ in net.named_modules()])
print(net.get_submodule("blocks.first.proj"))
print(net.get_parameter("blocks.second.proj.bias").shape)
print(net.get_parameter("extra.beta"))
print(net.get_buffer("blocks.first.step"))
print(list(net.state_dict().keys()))
print(len(net.extra), list(net.extra.keys()), "alpha" in net.extra)

calls = []


def pre_hook(module, args, kwargs):
    calls.append(("pre", type(module).__name__, sorted(kwargs)))
    return args, {**kwargs, "scale": 2.0}


def post_hook(module, args, kwargs, output):
    calls.append(("post", kwargs["scale"], tuple(output.shape)))
    return output + 1


def plain_hook(module, inp, out):
    calls.append(("plain", len(inp), tuple(out.shape)))


h1 = net.blocks["first"].register_forward_pre_hook(pre_hook, with_kwargs=True)
h2 = net.blocks["first"].register_forward_hook(post_hook, with_kwargs=True)
h3 = net.blocks["second"].proj.register_forward_hook(plain_hook)
x = torch.linspace(-1, 1, 12).reshape(4, 3)
print(net(x, scale=0.5))
print(calls)
for h in (h1, h2, h3):
    h.remove()
calls.clear()
print(net(x, scale=0.5))
print(calls, net.blocks.first.step, net.blocks.first.norm.num_batches_tracked)
