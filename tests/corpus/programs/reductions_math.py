# corpus: exact
"""Reductions and math functions a tutorial reaches for."""

import torch

x = torch.tensor([[1.0, 5.0, 2.0], [4.0, 3.0, 6.0]])
print(x.sum(), x.sum(dim=0), x.mean(dim=1), x.prod())
print(x.std(), x.var(dim=1), x.std(dim=0, unbiased=False))
print(x.max(), x.max(dim=1), x.min(dim=0).indices)
print(x.argmax(), x.argmin(dim=1), x.amax(dim=0))
print(x.cumsum(dim=1), x.cumprod(dim=0))
print(torch.softmax(x, dim=1), torch.log_softmax(x, dim=0))
print(torch.logsumexp(x, dim=1))
print(x.norm(), x.norm(p=1, dim=1), torch.linalg.norm(x, dim=0))
print(torch.sort(x, dim=1, descending=True))
print(torch.topk(x.flatten(), 3))
print(torch.sqrt(x), torch.exp(-x).sum(), torch.log1p(x).mean())
print(torch.sin(x) ** 2 + torch.cos(x) ** 2)
print(torch.sigmoid(torch.tensor([-2.0, 0.0, 2.0])), torch.tanh(torch.tensor([0.5])))
print(x.clamp(2, 5), x.abs().neg(), torch.sign(x - 3))
print(torch.all(x > 0), torch.any(x > 5), (x > 2).sum(), (x > 2).float().mean())
print(torch.unique(torch.tensor([3, 1, 3, 2, 1])))
print(torch.median(torch.tensor([4.0, 1.0, 3.0])), torch.quantile(x, 0.5))
print(torch.allclose(x, x + 1e-9), torch.equal(x, x.clone()))
print(torch.einsum("ij,kj->ik", x, x))
print(torch.outer(torch.arange(3.0), torch.arange(2.0)))
print(torch.diag(torch.tensor([1.0, 2.0])), torch.trace(torch.eye(3)))
print(x.mean().item(), round(x.std().item(), 4))
