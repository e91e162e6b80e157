# corpus: exact
"""Selecting and comparing as training loops do: torch.where with scalars and tensors,
clamp with tensor bounds and clamp_min/max, topk and sort results (values, indices,
named fields), argmax(dim=1, keepdim=True), max with dim, pred.eq(target.view_as(pred)),
gather / scatter_, masked_select, nonzero, unique with counts, bincount, and a top-5
accuracy like the ImageNet example's accuracy()."""

import torch

logits = torch.sin(torch.arange(40.0) * 1.3).view(8, 5)
target = torch.tensor([0, 1, 2, 3, 4, 0, 1, 2])
print(torch.where(logits > 0, logits, 0.0))
print(torch.where(logits > 0.5, 1, -1), torch.where(target > 2, target, torch.zeros_like(target)))
lo, hi = torch.full((5,), -0.5), torch.linspace(0.1, 0.9, 5)
print(torch.clamp(logits[0], min=lo, max=hi), logits[1].clamp(lo, hi))
print(logits[2].clamp_min(0.0), logits[2].clamp_max(0.0), torch.clip(logits[3], -0.2, 0.2))

values, indices = logits.topk(2, dim=1)
print(values, indices)
res = torch.topk(logits[0], k=3, largest=False, sorted=True)
print(type(res).__name__, res.values, res.indices)
s = torch.sort(logits[1], descending=True)
print(s.values, s.indices, torch.argsort(logits[1]))
print(logits.max(dim=1), logits.min(1).indices)
pred = logits.argmax(dim=1, keepdim=True)
print(pred.shape, pred.eq(target.view_as(pred)).sum().item())
_, predicted = torch.max(logits.data, 1)
print((predicted == target).sum().item(), (predicted == target).float().mean())


def accuracy(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


print(accuracy(logits, target, topk=(1, 3)))
print(logits.gather(1, target.unsqueeze(1)).squeeze(1))
onehot = torch.zeros(8, 5).scatter_(1, target.unsqueeze(1), 1.0)
print(onehot.sum(0), torch.zeros(5).scatter_add_(0, target, torch.ones(8)))
print(torch.masked_select(logits[0], logits[0] > 0), logits[logits > 0.9])
print(torch.nonzero(logits[:2] > 0.5), (logits[0] > 0).nonzero(as_tuple=True))
u, counts = torch.unique(target, return_counts=True)
print(
    u,
    counts,
    torch.bincount(target),
    torch.unique(torch.tensor([3, 1, 3, 2]), sorted=True, return_inverse=True),
)
print(torch.any(logits > 0.99), torch.all(logits < 1.0), logits.ge(0).any(dim=1))
print(torch.kthvalue(logits[0], 2), torch.median(logits[0]), torch.mode(target))
