# corpus: exact
"""Autograd: backward, gradient accumulation, no_grad, detach, requires_grad flags."""

import torch

x = torch.ones(5)
y = torch.zeros(3)
w = torch.linspace(-1, 1, 15).reshape(5, 3).requires_grad_()
b = torch.tensor([0.1, -0.2, 0.3], requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print(f"loss = {loss.item():.6f}")
loss.backward()
print(w.grad)
print(b.grad)
print(w.is_leaf, z.is_leaf, z.requires_grad, w.grad.requires_grad)

z = torch.matmul(x, w) + b
print(z.requires_grad)
with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad)
z_det = (torch.matmul(x, w) + b).detach()
print(z_det.requires_grad)

a = torch.tensor([2.0, 3.0], requires_grad=True)
for _ in range(3):
    (a**2).sum().backward()
    print(a.grad)
a.grad.zero_()
(a * 4).sum().backward()
print(a.grad)
a.grad = None
out = (a**3).sum()
out.backward(retain_graph=True)
print(a.grad)
out.backward()
print(a.grad)

inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nCall after zeroing gradients\n{inp.grad}")

h = torch.tensor([1.0, 2.0], requires_grad=True)
m = h * 3
m.retain_grad()
(m**2).sum().backward()
print(m.grad, h.grad)


@torch.no_grad()
def scaled(t):
    return t * 2


print(scaled(h).requires_grad, torch.is_grad_enabled())
with torch.enable_grad():
    print((h * 2).requires_grad)
torch.set_grad_enabled(False)
print((h * 2).requires_grad)
torch.set_grad_enabled(True)
with torch.inference_mode():
    print((h * 2).requires_grad)
