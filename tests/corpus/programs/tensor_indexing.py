# corpus: exact
"""Indexing and slicing: basic, advanced, boolean masks, gather/scatter."""

import torch

t = torch.arange(1, 17, dtype=torch.float32).reshape(4, 4)
print(f"First row: {t[0]}")
print(f"First column: {t[:, 0]}")
print(f"Last column: {t[..., -1]}")
t[:, 1] = 0
print(t)
print(t[1:3, ::2])
print(t[[0, 2], [1, 3]])
print(t[t > 8])
print(t[torch.tensor([3, 0])])
print(t[None, 0].shape, t[:, None].shape)
mask = t % 3 == 0
print(mask)
print(t.masked_fill(mask, -1.0))
print(torch.where(t > 10, t, torch.zeros_like(t)))
idx = torch.tensor([[0, 1], [2, 3], [1, 1], [0, 0]])
print(torch.gather(t, 1, idx))
print(torch.index_select(t, 0, torch.tensor([0, 3])))
s = torch.zeros(3, 5)
s.scatter_(1, torch.tensor([[0], [2], [4]]), 1.0)
print(s)
print(torch.nonzero(s))
print(s.argmax(dim=1))
x = torch.arange(10)
print(x[-3:], x[::3], x[x % 2 == 1])
x[x > 5] = 0
print(x)
print(torch.arange(24).reshape(2, 3, 4)[1, :, 2])
print(torch.arange(24).reshape(2, 3, 4)[..., 1:3].shape)
print(t.unbind(0)[1], t.chunk(2, dim=1)[1].shape, [c.shape for c in t.split([1, 3])])
