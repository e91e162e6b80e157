# corpus: exact
"""Broadcasting rules and batched arithmetic."""

import torch

a = torch.arange(3.0).reshape(3, 1)
b = torch.arange(4.0)
print(a + b)
print((a * b).shape)
x = torch.ones(5, 1, 4, 1)
y = torch.ones(3, 1, 1)
print((x + y).shape)
print(torch.broadcast_shapes((2, 1), (1, 3)))
m = torch.arange(6.0).reshape(2, 3)
print(m - m.mean(dim=0))
print(m / m.sum(dim=1, keepdim=True))
print(m.unsqueeze(0).expand(2, 2, 3))
batch = torch.arange(24.0).reshape(2, 3, 4)
w = torch.arange(8.0).reshape(4, 2) / 10
print(batch @ w)
print(torch.bmm(batch, batch.transpose(1, 2)))
print(torch.matmul(torch.arange(4.0), w))
print(torch.tensor([1, 2, 3]) * 2.5)
print(torch.tensor([1, 2, 3]) // 2, torch.tensor([1, 2, 3]) / 2)
print(torch.tensor([1, 2], dtype=torch.int32) + torch.tensor([0.5, 0.5], dtype=torch.float64))
print(torch.maximum(a, b), torch.minimum(a, b - 1))
try:
    torch.ones(2, 3) + torch.ones(4)
except RuntimeError:
    print("shapes (2, 3) and (4,) do not broadcast")
