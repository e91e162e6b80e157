# corpus: exact
"""IterableDataset with get_worker_info, BatchSampler, default_collate on dicts and namedtuples,
and a DataLoader whose collate_fn pads variable-length sequences."""

import collections

import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    IterableDataset,
    SequentialSampler,
    default_collate,
    get_worker_info,
)


class Squares(IterableDataset):
    def __init__(self, start, end):
        super().__init__()
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        print("worker info", info)
        for i in range(self.start, self.end):
            yield torch.tensor([float(i), float(i * i)])


ds = Squares(1, 8)
for batch in DataLoader(ds, batch_size=3, num_workers=0):
    print(batch)
print(list(DataLoader(ds, batch_size=None))[:2])
print(len(list(DataLoader(ds, batch_size=2, drop_last=True))))

print(list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=False)))
print(list(BatchSampler(range(10), batch_size=4, drop_last=True)))
print(len(BatchSampler(range(10), batch_size=4, drop_last=False)))

Point = collections.namedtuple("Point", ["x", "y"])
samples = [{"id": i, "feat": torch.full((2,), float(i)), "name": f"s{i}"} for i in range(3)]
collated = default_collate(samples)
print(collated)
points = default_collate([Point(1.0, torch.tensor([1, 2])), Point(2.0, torch.tensor([3, 4]))])
print(points, type(points).__name__)
print(default_collate([(1, 2.5), (3, 4.5)]))


class Sentences(Dataset):
    def __init__(self):
        self.data = [[3, 1, 4], [1, 5], [9, 2, 6, 5], [3]]

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        seq = torch.tensor(self.data[i])
        return seq, len(self.data[i]) % 2


def pad_collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    padded = pad_sequence(seqs, batch_first=True, padding_value=0)
    return padded, lengths, torch.tensor(labels)


loader = DataLoader(Sentences(), batch_size=2, shuffle=False, collate_fn=pad_collate)
for padded, lengths, labels in loader:
    print(padded, lengths, labels)
batch_loader = DataLoader(
    Sentences(),
    batch_sampler=BatchSampler(SequentialSampler(range(4)), 3, False),
    collate_fn=pad_collate,
)
print([p.shape for p, _, _ in batch_loader])
