# corpus: exact
"""Samplers and random_split: what is fixed by construction (sizes, coverage, order of
sequential samplers), not the random draws themselves."""

import torch
from torch.utils.data import (
    BatchSampler,
    DataLoader,
    RandomSampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    random_split,
)

data = TensorDataset(torch.arange(20.0), torch.arange(20) % 2)
generator = torch.Generator().manual_seed(42)
train_set, val_set = random_split(data, [16, 4], generator=generator)
print(len(train_set), len(val_set), type(train_set).__name__)
print(sorted(train_set.indices + val_set.indices) == list(range(20)))
a, b, c = random_split(range(10), [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(0))
print(len(a), len(b), len(c))

print(list(SequentialSampler(range(5))))
print(sorted(RandomSampler(range(6))))
print(len(list(RandomSampler(range(6), replacement=True, num_samples=10))))
print(sorted(SubsetRandomSampler([3, 7, 9])))
print(list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False)))
print(list(BatchSampler(range(7), batch_size=3, drop_last=True)))
w = WeightedRandomSampler([0.0, 0.0, 1.0, 0.0], num_samples=5, replacement=True)
print(list(w))

torch.manual_seed(1)
loader = DataLoader(data, batch_size=5, shuffle=True)
seen = torch.cat([x for x, _ in loader])
print(len(loader), sorted(seen.tolist()) == list(range(20)))
sub = Subset(data, [0, 5, 10])
print(len(sub), sub[1])
for xb, yb in DataLoader(sub, batch_size=2):
    print(xb, yb)
bs_loader = DataLoader(data, batch_sampler=BatchSampler(SequentialSampler(data), 8, False))
print([len(x) for x, _ in bs_loader])
