# corpus: exact
"""Gradient modes as programs use them: @torch.no_grad() on functions and methods,
torch.inference_mode as a context and a decorator, is_inference, torch.enable_grad inside
no_grad, torch.set_grad_enabled as a context and a call, is_grad_enabled, requires_grad_,
and the error an inference tensor raises when saved for backward."""

import torch
import torch.nn as nn

model = nn.Linear(3, 2)
nn.init.constant_(model.weight, 0.5)
nn.init.constant_(model.bias, -0.25)
x = torch.linspace(-1, 1, 6).view(2, 3)


@torch.no_grad()
def evaluate(m, data):
    print("inside:", torch.is_grad_enabled())
    return m(data)


out = evaluate(model, x)
print(out, out.requires_grad, torch.is_grad_enabled())


class Evaluator:
    @torch.no_grad()
    def __call__(self, data):
        return model(data).sum()

    @torch.inference_mode()
    def infer(self, data):
        return model(data)


s = Evaluator()(x)
print(s, s.requires_grad)
y = Evaluator().infer(x)
print(y.requires_grad, torch.is_inference_mode_enabled())

with torch.inference_mode():
    z = model(x) * 2
    print(torch.is_grad_enabled(), torch.is_inference_mode_enabled())
print(z.requires_grad, z.grad_fn)
with torch.inference_mode(mode=False):
    w = model(x)
print(w.requires_grad)

with torch.no_grad():
    a = model(x)
    with torch.enable_grad():
        b = model(x)
print(a.requires_grad, b.requires_grad, b.grad_fn is not None)


@torch.enable_grad()
def grad_inside(t):
    return t * 2


with torch.no_grad():
    t = torch.ones(2, requires_grad=True)
    print(grad_inside(t).requires_grad)

is_train = False
with torch.set_grad_enabled(is_train):
    c = model(x)
print(c.requires_grad)
torch.set_grad_enabled(False)
print(model(x).requires_grad, torch.is_grad_enabled())
torch.set_grad_enabled(True)
print(model(x).requires_grad)

model.requires_grad_(False)
print(model(x).requires_grad, [p.requires_grad for p in model.parameters()])
model.requires_grad_()
loss = model(x).pow(2).sum()
loss.backward()
print(model.weight.grad)
