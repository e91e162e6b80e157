# corpus: exact
"""torch.Size arithmetic and printing; new_zeros/new_ones/new_full/new_empty; empty_like
followed by fill_; full and tensor dtype inference."""

import torch

x = torch.arange(6.0).view(2, 3)
s = x.shape
print(s, type(s).__name__, s[0], s[-1], s[1:], len(s))
print(s + (4,), s + torch.Size([5]), s * 2, tuple(s), list(s))
print(s.numel(), torch.Size([2, 3]) == (2, 3), s == torch.Size([2, 3]))
print(torch.Size([]), torch.Size([]).numel(), x.size(), x.size(1), x.size(-2))
print(torch.zeros(s + (1,)).shape, torch.ones(*s).shape)
print(str(torch.Size([1, 2])), repr(torch.Size([1])))
a, b = s
print(a, b, torch.Size((4,)))
n = x.new_zeros((2,))
print(n, n.dtype)
print(x.new_ones(3), x.new_full((2, 2), 7), x.new_full((2,), 7).dtype)
e = x.new_empty((2, 2))
print(e.shape, e.dtype)
i = torch.tensor([1, 2])
print(i.new_zeros(2).dtype, i.new_full((1,), 2.5), i.new_ones(2, dtype=torch.float32))
f = torch.empty_like(x).fill_(3.5)
print(f)
print(torch.empty_like(i).fill_(9), torch.full_like(x, 2).dtype, torch.zeros_like(i).dtype)
print(torch.full((2,), True), torch.full((2,), 2).dtype, torch.full((2,), 2.0).dtype)
print(torch.tensor(3).dtype, torch.tensor(3.0).dtype, torch.tensor(True).dtype)
print(torch.tensor(3).shape, torch.tensor([3]).shape, torch.tensor(3).item())
