# corpus: exact
"""Integer casts and arithmetic: int8 overflow/truncation, // and div rounding modes on
negatives, remainder vs fmod signs, round half to even."""

import torch

x = torch.tensor([-2.7, -0.5, 0.5, 2.7, 127.9])
print(x.to(torch.int8), x.to(torch.int32), x.long())
print(torch.tensor([100, 200, 300]).to(torch.int8), torch.tensor([255, 256]).to(torch.uint8))
print(torch.tensor([127], dtype=torch.int8) + torch.tensor([1], dtype=torch.int8))
a = torch.tensor([-7, -3, 3, 7])
b = torch.tensor([2, 2, -2, -2])
print(a // b, a // 2, -7 // 2)
print(torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc"))
print(torch.div(a, b), torch.div(a, b).dtype, (a / b).dtype)
f = torch.tensor([-7.5, -3.0, 3.0, 7.5])
print(f // 2, torch.div(f, -2, rounding_mode="trunc"), torch.floor_divide(f, 2))
print(torch.remainder(a, 3), torch.fmod(a, 3), a % 3, a % -3)
print(torch.remainder(f, 2), torch.fmod(f, -2))
print(torch.round(torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 2.4])))
print(torch.round(torch.tensor([1.2345, -2.5678]), decimals=2))
print(torch.tensor([5]) // torch.tensor([0.0]), torch.tensor([-1.0]) % 0.0)
print(a.abs().dtype, (a**2).dtype, a.float().pow(0.5))
