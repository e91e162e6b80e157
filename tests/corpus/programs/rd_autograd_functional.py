# corpus: exact
"""torch.autograd.functional: jacobian, hessian, vjp, jvp and hvp on small closed forms."""

import torch
from torch.autograd.functional import hessian, jacobian, jvp, vjp


def f(x):
    return torch.stack([x[0] ** 2 * x[1], 5 * x[0] + torch.sin(x[1])])


x = torch.tensor([1.0, 2.0])
print(jacobian(f, x))


def g(a, b):
    return a * b + a.exp()


a = torch.linspace(0, 1, 3)
b = torch.arange(3.0)
ja, jb = jacobian(g, (a, b))
print(ja)
print(jb)


def energy(x):
    return (x**3).sum() + x[0] * x[1]


print(hessian(energy, torch.tensor([1.0, -1.0, 0.5])))
out, v = vjp(lambda t: t**2, torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 0.5, 0.0]))
print(out, v)
out, tangent = jvp(lambda t: t.sin(), torch.tensor([0.0, 1.0]), torch.tensor([1.0, 1.0]))
print(out, tangent)
print(torch.autograd.functional.hvp(energy, torch.ones(3), torch.ones(3))[1])
j = jacobian(lambda t: t @ t.T, torch.eye(2))
print(j.shape)
