# corpus: exact
"""Tensor.register_hook (printing and rewriting gradients, removing the handle),
retain_grad/retains_grad on non-leaf tensors, and is_leaf."""

import torch

x = torch.linspace(-1, 1, 4, requires_grad=True)
y = x * 3
z = y.pow(2)
print(x.is_leaf, y.is_leaf, y.retains_grad, x.retains_grad)
y.retain_grad()
print(y.retains_grad)
seen = []
h = y.register_hook(lambda g: seen.append(g.clone()))
h2 = x.register_hook(lambda g: g * 10)
z.sum().backward()
print(x.grad)
print(y.grad)
print(len(seen), seen[0])
h.remove()
h2.remove()
x.grad = None
(x * 3).pow(2).sum().backward()
print(x.grad, len(seen))

w = torch.tensor([1.0, 2.0], requires_grad=True)
mid = w.exp()
mid.register_hook(lambda g: print("mid grad", g))
mid.sum().backward()
print(w.grad)
print(mid.grad)
try:
    torch.ones(2).register_hook(lambda g: g)
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
