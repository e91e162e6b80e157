# corpus: exact
"""Casting a module (to(float64), double, half, float) and loading state dicts with strict=False."""

import torch
import torch.nn as nn


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.bn = nn.BatchNorm1d(2)
        self.register_buffer("index", torch.tensor([1, 2]))

    def forward(self, x):
        return self.bn(self.fc(x))


m = Small()
with torch.no_grad():
    m.fc.weight.copy_(torch.tensor([[0.5, -0.25], [1.0, 0.125]]))
    m.fc.bias.copy_(torch.tensor([0.1, 0.2]))


def dtypes(module):
    return sorted({f"{n}:{t.dtype}" for n, t in module.state_dict().items()})


print(dtypes(m))
m64 = m.to(torch.float64)
print(m64 is m, dtypes(m))
x = torch.tensor([[0.0, 1.0], [0.3, 0.2], [1.0, 0.7]], dtype=torch.float64)
print(m(x))
print(m.fc.weight.dtype, m.bn.running_mean.dtype, m.index.dtype)
m.half()
print(m.fc.weight.dtype, m.fc.weight, m.index.dtype)
m.float()
print(m.fc.weight.dtype, m.fc.bias)
m.double()
print(m.fc.bias.dtype)
m.to(dtype=torch.float32)
print(dtypes(m))

target = nn.Sequential()
target.add_module("fc", nn.Linear(2, 2))
target.add_module("head", nn.Linear(2, 1))
result = target.load_state_dict(m.state_dict(), strict=False)
print(result)
print(result.missing_keys)
print(result.unexpected_keys)
print(target.fc.weight)
try:
    target.load_state_dict(m.state_dict())
except RuntimeError as e:
    print(str(e).splitlines()[0])
partial = {k: v for k, v in m.state_dict().items() if k.startswith("fc.")}
print(m.load_state_dict(partial, strict=False))
full = m.load_state_dict(m.state_dict())
print(full, bool(full))
sd = m.state_dict()
print(type(sd).__name__, sd["fc.weight"].requires_grad, sd["bn.num_batches_tracked"])
