# corpus: exact
"""torch.func: per-sample gradients with vmap(grad(...)), jacrev and functional_call."""

import torch
import torch.nn as nn
from torch.func import functional_call, grad, jacrev, vmap

model = nn.Linear(3, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.5, -1.0, 2.0]]))
    model.bias.fill_(0.1)
params = {k: v.detach() for k, v in model.named_parameters()}
x = torch.arange(12.0).reshape(4, 3) / 10
y = torch.tensor([1.0, 0.0, -1.0, 2.0])


def loss_fn(p, xi, yi):
    out = functional_call(model, p, (xi.unsqueeze(0),))
    return ((out.squeeze() - yi) ** 2).mean()


per_sample = vmap(grad(loss_fn), in_dims=(None, 0, 0))(params, x, y)
print(per_sample["weight"].shape, per_sample["bias"])
print(jacrev(torch.sin)(torch.tensor([0.0, 1.0])))
print(vmap(torch.dot)(x, x))
print(grad(lambda t: (t**3).sum())(torch.tensor([1.0, 2.0])))
