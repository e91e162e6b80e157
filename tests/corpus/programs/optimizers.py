# corpus: exact
"""Optimizers side by side on the same quadratic bowl; param_groups and state."""

import torch


def bowl(p):
    a = torch.tensor([1.0, 10.0])
    return (a * (p - torch.tensor([3.0, -1.0])) ** 2).sum()


configs = [
    (torch.optim.SGD, {"lr": 0.04}),
    (torch.optim.SGD, {"lr": 0.02, "momentum": 0.9, "nesterov": True}),
    (torch.optim.Adam, {"lr": 0.1}),
    (torch.optim.AdamW, {"lr": 0.1, "weight_decay": 0.1}),
    (torch.optim.RMSprop, {"lr": 0.05}),
    (torch.optim.Adagrad, {"lr": 0.5}),
    (torch.optim.Adam, {"lr": 0.1, "amsgrad": True}),
]
for cls, kwargs in configs:
    p = torch.zeros(2, requires_grad=True)
    opt = cls([p], **kwargs)
    for _ in range(25):
        opt.zero_grad()
        loss = bowl(p)
        loss.backward()
        opt.step()
    print(f"{cls.__name__:8s} {kwargs} -> p={p.detach()} loss={bowl(p).item():.5f}")

w = torch.nn.Parameter(torch.ones(3))
b = torch.nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.5)
print(len(opt.param_groups), [g["lr"] for g in opt.param_groups])
print(sorted(opt.param_groups[0].keys()))
(w.sum() * 2 + b.sum()).backward()
opt.step()
print(w, b)
print(list(opt.state[w].keys()), opt.state[w]["momentum_buffer"])
for g in opt.param_groups:
    g["lr"] *= 0.1
print([g["lr"] for g in opt.param_groups])
adam = torch.optim.Adam([w], lr=0.01)
w.grad = torch.ones(3)
adam.step()
print(sorted(adam.state[w].keys()), adam.state[w]["step"])
print(adam)
