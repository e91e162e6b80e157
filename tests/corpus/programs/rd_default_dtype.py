# corpus: exact
"""set_default_dtype / get_default_dtype and what tensor literals and factories then give."""

import torch

print(torch.get_default_dtype())
print(torch.tensor([1.0]).dtype, torch.tensor(3).dtype, torch.tensor(3.0).dtype)
print(torch.tensor(True).dtype, torch.tensor([1, 2.5]).dtype)
torch.set_default_dtype(torch.float64)
print(torch.get_default_dtype())
print(torch.tensor([1.0]).dtype, torch.zeros(2).dtype, torch.arange(3.0).dtype)
print(torch.linspace(0, 1, 3), torch.tensor([1 / 3]))
print(torch.tensor(3).dtype, (torch.tensor([1, 2]) * 0.5).dtype)
print(torch.ones(2, dtype=torch.float32).dtype)
torch.set_default_dtype(torch.float32)
print(torch.get_default_dtype(), torch.tensor([1 / 3]))
print(torch.full((2,), True).dtype, torch.full((2,), 1).dtype, torch.full((2,), 1.5).dtype)
print(torch.tensor([]).dtype, torch.tensor([[1], [2]]).dtype)
