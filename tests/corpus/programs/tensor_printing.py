# corpus: exact
"""How tensors print: small and large, integer and float, scientific notation,
summarisation, print options, and shapes and sizes."""

import torch

print(torch.tensor([1.0, 2.5, -3.25]))
print(torch.tensor([100000.0, 0.0001]))
print(torch.tensor([[1, -2], [300, 4]]))
print(torch.arange(2000.0))
print(torch.arange(2000.0).reshape(40, 50))
print(torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0]))
print(torch.tensor([True, False]))
print(torch.tensor(7), torch.tensor(7.0), torch.tensor(-0.5, dtype=torch.float64))
print(torch.tensor([1.5], dtype=torch.float16), torch.tensor([2], dtype=torch.int8))
print(torch.zeros(2, 0), torch.zeros(2, 3, 0).shape)
print(torch.linspace(0, 1, 7).reshape(1, 7, 1))
print(torch.tensor([[1e-8, 1.0], [2.0, 3.0]]))
print(torch.tensor([123456789.0, 1.0]))
torch.set_printoptions(precision=2)
print(torch.tensor([3.14159, 2.71828]))
torch.set_printoptions(profile="default")
torch.set_printoptions(sci_mode=False)
print(torch.tensor([1e-5, 1.0]))
torch.set_printoptions(sci_mode=None)
x = torch.ones(2, 3, requires_grad=True)
print(x)
print(x.shape, x.size(), tuple(x.shape), list(x.size()), x.size() == (2, 3))
print(repr(x.shape), str(torch.Size([4])), torch.Size([2, 3]).numel())
print(f"{torch.tensor(3.14159).item():.3f}", torch.tensor([1, 2]).tolist())
print(str(torch.tensor([0.1, 0.2])))
print(torch.float32, torch.int64, torch.float, torch.long, torch.double)
print(torch.tensor([1, 2], dtype=torch.float64).dtype == torch.double)
