# corpus: exact
"""Composing datasets as tutorials do: a map-style Dataset subclass, TensorDataset,
Subset, ConcatDataset (and `+` of datasets), random_split with a seeded Generator (sizes
and coverage only), an IterableDataset, a custom collate_fn padding with pad_sequence,
drop_last, len() of loaders and datasets."""

import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import (
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)


class Squares(Dataset):
    def __init__(self, n, offset=0):
        self.n, self.offset = n, offset

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        x = idx + self.offset
        return torch.tensor([float(x)]), x * x


class Ragged(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return torch.arange(1, i + 2), i % 2


class Counter(IterableDataset):
    def __init__(self, start, end):
        super().__init__()
        self.start, self.end = start, end

    def __iter__(self):
        return iter(range(self.start, self.end))


a, b = Squares(6), Squares(4, offset=100)
cat = ConcatDataset([a, b])
print(len(cat), cat[5], cat[6], cat[-1], cat.cumulative_sizes)
both = a + b
print(type(both).__name__, len(both))
sub = Subset(cat, [0, 7, 9])
print(len(sub), [sub[i][1] for i in range(len(sub))], sub.indices)
td = TensorDataset(torch.arange(10.0).view(5, 2), torch.arange(5))
print(len(td), td[1], len(td.tensors))
print(Subset(td, range(1, 3))[1])

train, val = random_split(range(10), [7, 3], generator=torch.Generator().manual_seed(42))
print(len(train), len(val), sorted(list(train) + list(val)) == list(range(10)))
parts = random_split(range(10), [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(0))
print([len(p) for p in parts], type(parts[0]).__name__)

loader = DataLoader(cat, batch_size=4, shuffle=False, drop_last=True)
print(len(loader), len(DataLoader(cat, batch_size=4)))
for xb, yb in loader:
    print(xb.shape, xb.dtype, yb)


def collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    return (
        pad_sequence(list(seqs), batch_first=True, padding_value=0),
        lengths,
        torch.tensor(labels),
    )


for padded, lengths, labels in DataLoader(Ragged(), batch_size=3, collate_fn=collate):
    print(padded, lengths, labels)

print(list(DataLoader(Counter(3, 10), batch_size=3)))
print([batch.tolist() for batch in DataLoader(Counter(0, 5), batch_size=2, drop_last=True)])
print(list(DataLoader(Squares(3), batch_size=None)))
