# corpus: exact
"""Learn the Basics, Automatic Differentiation: a one-layer network with
binary_cross_entropy_with_logits, grad_fn, .grad, no_grad and detach, and Jacobian-vector
products that accumulate across backward(retain_graph=True) calls."""

import torch

x = torch.ones(5)
y = torch.zeros(3)
w = torch.linspace(-1, 1, 15).reshape(5, 3).requires_grad_()
b = torch.tensor([0.1, -0.2, 0.3], requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print(loss)

print(f"Gradient function for z = {z.grad_fn}")
print(f"Gradient function for loss = {loss.grad_fn}")
print(loss.grad_fn.next_functions[0][0].__class__.__name__)

loss.backward()
print(w.grad)
print(b.grad)

z = torch.matmul(x, w) + b
print(z.requires_grad)
with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad)

z = torch.matmul(x, w) + b
z_det = z.detach()
print(z_det.requires_grad)
print(z.is_leaf, z_det.is_leaf, w.is_leaf)

inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nCall after zeroing gradients\n{inp.grad}")

try:
    loss.backward()
except RuntimeError as e:
    print("second backward fails:", "Trying to backward through the graph a second time" in str(e))

v = torch.tensor([1.0, 0.5, 0.25])
s = torch.linspace(0.5, 1.5, 3, requires_grad=True)
t = s * s * 3
t.backward(v)
print(s.grad)
