# corpus: exact
"""Gradients of gradients: autograd.grad with create_graph, Hessians, Jacobians."""

import torch
from torch.autograd.functional import hessian, jacobian

x = torch.tensor(2.0, requires_grad=True)
y = x**4
(dy,) = torch.autograd.grad(y, x, create_graph=True)
(d2y,) = torch.autograd.grad(dy, x, create_graph=True)
(d3y,) = torch.autograd.grad(d2y, x)
print(dy, d2y, d3y)

w = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
f = (w.sin() * w).sum()
(g,) = torch.autograd.grad(f, w, create_graph=True)
v = torch.tensor([1.0, 0.0, 1.0])
(hvp,) = torch.autograd.grad(g, w, grad_outputs=v)
print(g.detach(), hvp)


def quad(t):
    return (t**3).sum() + t[0] * t[1]


print(hessian(quad, torch.tensor([1.0, 2.0])))
print(jacobian(lambda t: torch.stack([t[0] * t[1], t[1].exp()]), torch.tensor([1.0, 0.0])))

p = torch.tensor([0.3, -0.7], requires_grad=True)
loss = (p**2).sum()
(grad,) = torch.autograd.grad(loss, p, create_graph=True)
penalty = grad.pow(2).sum()
total = loss + penalty
total.backward()
print(total.item(), p.grad)

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
ga, gb = torch.autograd.grad((a * b).sum(), [a, b])
print(ga, gb)
(gn,) = torch.autograd.grad((a * 2).sum(), [a], allow_unused=True)
print(gn)
