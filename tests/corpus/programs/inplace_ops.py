# corpus: exact
"""In-place operations, the trailing underscore, and views that see them."""

import torch

t = torch.ones(2, 3)
print(t.add_(5))
t.mul_(2).sub_(1)
print(t)
t.clamp_(max=10.0)
print(t)
row = t[0]
row.fill_(3.0)
print(t)
v = t.view(6)
v[1] = -1.0
print(t)
t.zero_()
print(t, v)
x = torch.arange(6.0)
x.index_add_(0, torch.tensor([0, 0, 5]), torch.tensor([1.0, 2.0, 3.0]))
print(x)
x.masked_fill_(x > 4, 0.5)
print(x)
x.copy_(torch.linspace(0, 1, 6))
print(x)
x.pow_(2).sqrt_().neg_()
print(x)
x += 1
print(x)
y = torch.arange(4.0).reshape(2, 2)
y.t_()
print(y)
z = torch.zeros(2, 2)
z[:, 0] += torch.tensor([1.0, 2.0])
print(z)
w = torch.tensor([1.0, 2.0], requires_grad=True)
try:
    w.add_(1)
except RuntimeError:
    print("a leaf that requires grad cannot be changed in place")
with torch.no_grad():
    w.add_(1)
print(w)
