# corpus: exact
"""Hand-written optimization as the 'learning PyTorch with examples' and 'nn really'
tutorials do it: parameters updated in place with add_/sub_/mul_ under torch.no_grad(),
grad.zero_(), weight decay and momentum buffers kept in a dict, p.data updates,
a learning-rate schedule by hand, and the same steps by torch.optim.SGD for comparison."""

import math

import torch

x = torch.linspace(-math.pi, math.pi, 200)
y = torch.sin(x)
a = torch.tensor(0.1, requires_grad=True)
b = torch.tensor(-0.2, requires_grad=True)
c = torch.tensor(0.05, requires_grad=True)
d = torch.tensor(0.0, requires_grad=True)
learning_rate = 1e-6
for t in range(300):
    y_pred = a + b * x + c * x**2 + d * x**3
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())
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


def make_model():
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.cos(torch.arange(p.numel()) * 0.6 + i).view_as(p) * 0.5)
    return model


xx = torch.stack([x, x**2, x**3], dim=1)[::10] / 10
yy = y[::10].unsqueeze(1)
loss_fn = torch.nn.MSELoss(reduction="sum")
lr, momentum, wd = 1e-3, 0.9, 1e-2
model = make_model()
buffers = {}
for step in range(20):
    loss = loss_fn(model(xx), yy)
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for name, p in model.named_parameters():
            g = p.grad.add(p, alpha=wd)
            if name not in buffers:
                buffers[name] = torch.clone(g).detach()
            else:
                buffers[name].mul_(momentum).add_(g)
            p.add_(buffers[name], alpha=-lr)
    if step % 5 == 4:
        print(step, f"{loss.item():.6f}")

ref = make_model()
opt = torch.optim.SGD(ref.parameters(), lr=lr, momentum=momentum, weight_decay=wd)
for step in range(20):
    opt.zero_grad()
    loss_fn(ref(xx), yy).backward()
    opt.step()
print(all(torch.allclose(p, q, atol=1e-6) for p, q in zip(model.parameters(), ref.parameters())))

w = torch.zeros(3, 1, requires_grad=True)
bias = torch.zeros(1, requires_grad=True)
for epoch in range(3):
    for i in range(0, len(xx), 5):
        pred = xx[i : i + 5] @ w + bias
        loss = ((pred - yy[i : i + 5]) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w.sub_(w.grad * 0.5 / (epoch + 1))
            bias.data.sub_(bias.grad.data * 0.5 / (epoch + 1))
            w.grad.zero_()
            bias.grad.zero_()
    print(epoch, w.view(-1), bias, w.requires_grad, w.is_leaf)
