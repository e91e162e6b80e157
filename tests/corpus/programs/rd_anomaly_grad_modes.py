# corpus: exact
"""Anomaly detection (set_detect_anomaly, detect_anomaly), enable_grad inside no_grad,
set_grad_enabled as a call and a context, and requires_grad_ on tensors."""

import torch

print(torch.is_anomaly_enabled())
torch.autograd.set_detect_anomaly(True)
print(torch.is_anomaly_enabled())
x = torch.linspace(0, 1, 3, requires_grad=True)
(x * 2).sum().backward()
print(x.grad)
torch.autograd.set_detect_anomaly(False)
print(torch.is_anomaly_enabled())
with torch.autograd.detect_anomaly():
    print("inside:", torch.is_anomaly_enabled())
    y = (x.exp() * x).sum()
    y.backward()
print(x.grad, torch.is_anomaly_enabled())

with torch.no_grad():
    a = x * 2
    with torch.enable_grad():
        b = x * 2
    print(torch.is_grad_enabled())
print(a.requires_grad, b.requires_grad)

torch.set_grad_enabled(False)
c = x * 2
print(c.requires_grad, torch.is_grad_enabled())
torch.set_grad_enabled(True)
with torch.set_grad_enabled(False):
    d = x + 1
print(d.requires_grad, torch.is_grad_enabled())

t = torch.arange(3.0)
print(t.requires_grad, t.requires_grad_().requires_grad, t.is_leaf)
t.requires_grad_(False)
print(t.requires_grad)
u = torch.arange(3)
try:
    u.requires_grad_()
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
v = (x * 2).detach()
print(v.requires_grad, v.is_leaf)
