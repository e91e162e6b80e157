# corpus: exact
"""Custom autograd.Function details: ctx.mark_non_differentiable, ctx.needs_input_grad,
ctx.set_materialize_grads, @once_differentiable, and gradcheck on a double function."""

import torch
from torch.autograd.function import once_differentiable


class SortWithIndex(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        return values, idx

    @staticmethod
    def backward(ctx, g_values, g_idx):
        (idx,) = ctx.saved_tensors
        grad = torch.zeros_like(g_values)
        grad[idx] = g_values
        return grad


x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
vals, idx = SortWithIndex.apply(x)
print(vals, idx, idx.requires_grad, vals.requires_grad)
(vals * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
print(x.grad)


class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        print("needs_input_grad", ctx.needs_input_grad)
        ga = g * b if ctx.needs_input_grad[0] else None
        gb = g * a if ctx.needs_input_grad[1] else None
        return ga, gb


a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0])
Mul.apply(a, b).sum().backward()
print(a.grad, b.grad)


class TwoOut(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        print("g1 None:", g1 is None, "g2 None:", g2 is None)
        grad = torch.zeros(2)
        if g1 is not None:
            grad = grad + 2 * g1
        if g2 is not None:
            grad = grad + 3 * g2
        return grad


t = torch.ones(2, requires_grad=True)
o1, o2 = TwoOut.apply(t)
o1.sum().backward()
print(t.grad)


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * g


c = torch.tensor([2.0], requires_grad=True)
out = Cube.apply(c)
(gc,) = torch.autograd.grad(out, c, create_graph=True)
print(gc, gc.requires_grad)
xd = torch.linspace(-1, 1, 4, dtype=torch.double, requires_grad=True)
print(torch.autograd.gradcheck(Cube.apply, (xd,), eps=1e-6, atol=1e-4))
print(torch.autograd.gradcheck(lambda u: (u.sin() * u).sum(), (xd,)))
