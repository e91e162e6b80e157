# corpus: exact
"""Hooks: on tensors' gradients and on modules' forward and backward passes."""

import torch
import torch.nn as nn

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
handle = x.register_hook(lambda g: g * 10)
y = (x**2).sum()
y.backward()
print(x.grad)
handle.remove()
x.grad = None
(x**2).sum().backward()
print(x.grad)

seen = []
z = torch.tensor([0.5, -0.5], requires_grad=True)
mid = z * 2
mid.register_hook(lambda g: seen.append(g.clone()))
(mid**3).sum().backward()
print(seen, z.grad)

model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1))

activations = {}


def save_output(name):
    def hook(module, inputs, output):
        activations[name] = output.detach()

    return hook


def pre_hook(module, inputs):
    print("pre-forward", type(module).__name__, inputs[0].shape)


for name, layer in model.named_children():
    layer.register_forward_hook(save_output(name))
model[0].register_forward_pre_hook(pre_hook)
grads = []
model[2].register_full_backward_hook(lambda m, gin, gout: grads.append(gout[0]))

out = model(torch.tensor([[1.0, -1.0, 2.0]]))
print(out)
for name, act in activations.items():
    print(name, act)
out.sum().backward()
print(grads)
print(model[0].weight.grad)
