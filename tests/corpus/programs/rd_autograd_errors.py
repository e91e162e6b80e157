# corpus: exact
"""autograd.grad options (allow_unused, materialize_grads), backward(inputs=...),
torch.autograd.backward with grad_tensors, gradient accumulation and zeroing, and the
errors tutorials run into (first line of each)."""

import torch

x = torch.linspace(-1, 1, 3, requires_grad=True)
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
unused = torch.ones(3, requires_grad=True)
y = (x * w).sum()
gx, gu = torch.autograd.grad(y, [x, unused], retain_graph=True, allow_unused=True)
print(gx, gu)
gx, gu = torch.autograd.grad(y, [x, unused], retain_graph=True, materialize_grads=True)
print(gu)
y.backward(inputs=[w], retain_graph=True)
print(x.grad, w.grad)
y.backward(retain_graph=True)
print(x.grad, w.grad)
x.grad.zero_()
w.grad = None
z = x * w
torch.autograd.backward([z], grad_tensors=[torch.tensor([1.0, 0.0, 2.0])])
print(x.grad, w.grad)


def first_line(fn):
    try:
        fn()
    except RuntimeError as e:
        print("RuntimeError:", str(e).splitlines()[0])


first_line(lambda: (x * 2).backward())
first_line(lambda: torch.ones(2).sum().backward())
first_line(lambda: torch.autograd.grad((x * w).sum(), [x, unused]))


def twice():
    out = (x.exp() * w).sum()
    out.backward()
    out.backward()


first_line(twice)


def leaf_inplace():
    x.add_(1)


first_line(leaf_inplace)


def modified():
    a = x * 1
    b = a**2
    a.mul_(2)
    b.sum().backward()


first_line(modified)
first_line(lambda: torch.autograd.grad(x.sum(), torch.ones(2)))
with torch.no_grad():
    x.add_(1)
print(x, x.requires_grad, x.grad_fn)
d = x.detach()
d[0] = 10.0
print(x[0].item())
