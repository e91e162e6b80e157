# corpus: exact
"""Tensor basics: the ways a tutorial makes tensors, and what they print."""

import torch

data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
print(x_data)
print(x_data.dtype, x_data.shape, x_data.device)

x_ones = torch.ones_like(x_data)
print(f"Ones Tensor: \n {x_ones} \n")
x_float = torch.zeros_like(x_data, dtype=torch.float)
print(f"Zeros Tensor: \n {x_float} \n")

shape = (2, 3)
print(torch.ones(shape))
print(torch.zeros(shape, dtype=torch.int32))
print(torch.full((2, 2), 7.5))
print(torch.eye(3))
print(torch.arange(10))
print(torch.arange(0, 1, 0.25))
print(torch.linspace(-1, 1, steps=5))
print(torch.logspace(0, 2, steps=3))
print(torch.empty(2, 3).shape)
print(torch.tensor(3.5), torch.tensor(3.5).item(), torch.tensor(True))
print(torch.tensor([1.0, 2.0], dtype=torch.float64))
print(torch.tensor([[1, 2, 3]]).size(), torch.tensor([[1, 2, 3]]).size(1))
print(torch.tensor([1, 2, 3]).ndim, torch.tensor([1, 2, 3]).numel())
print(torch.stack([torch.arange(3), torch.arange(3) * 2]))
print(torch.cat([torch.ones(2, 2), torch.zeros(1, 2)], dim=0))
print(torch.arange(12).reshape(3, 4).T)
print(torch.arange(6).view(2, 3).flatten())
print(torch.tril(torch.ones(3, 3)))
print(torch.tensor([[1.5, -2.25], [1e-3, 100.0]]))
print(torch.tensor([1e10, 1.0]))
print(torch.tensor([]).shape, torch.zeros(0, 3).shape)
