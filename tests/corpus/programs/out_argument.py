# corpus: exact
"""Results written into preallocated tensors with ``out=``."""

import torch

a = torch.arange(6.0).reshape(2, 3)
b = torch.ones(2, 3)
out = torch.empty(2, 3)
torch.add(a, b, out=out)
print(out)
torch.mul(a, 2, out=out)
print(out)
r = torch.empty(2, 2)
torch.matmul(a, a.T, out=r)
print(r)
s = torch.empty(3)
torch.sum(a, dim=0, out=s)
print(s)
torch.exp(torch.zeros(3), out=s)
print(s)
torch.arange(3, out=s)
print(s)
c = torch.empty(4, 3)
torch.cat([a, b], dim=0, out=c)
print(c)
result = torch.empty(0)
torch.add(a, b, out=result)
print(result.shape)
