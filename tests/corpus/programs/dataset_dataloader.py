# corpus: exact
"""Datasets and DataLoaders: a custom Dataset, TensorDataset, batching, drop_last,
a collate_fn for variable-length items, and iterating epochs."""

import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset


class SquaresDataset(Dataset):
    def __init__(self, n):
        self.x = torch.arange(n, dtype=torch.float32)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        return {"x": self.x[idx], "y": self.x[idx] ** 2, "id": idx}


ds = SquaresDataset(10)
print(len(ds), ds[3])
loader = DataLoader(ds, batch_size=4)
print(len(loader))
for batch in loader:
    print(batch["x"], batch["y"], batch["id"])

X = torch.arange(20.0).reshape(10, 2)
Y = torch.arange(10) % 3
tds = TensorDataset(X, Y)
print(tds[0], len(tds))
dl = DataLoader(tds, batch_size=3, shuffle=False, drop_last=True)
for i, (xb, yb) in enumerate(dl):
    print(i, xb.shape, yb.tolist())
print(len(dl))
train_features, train_labels = next(iter(dl))
print(f"Feature batch shape: {train_features.size()}")
print(f"Labels batch shape: {train_labels.size()}")


class Sentences(Dataset):
    def __init__(self):
        self.items = [[1, 2, 3], [4, 5], [6], [7, 8, 9, 10]]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return torch.tensor(self.items[i]), len(self.items[i])


def pad_collate(batch):
    seqs, lengths = zip(*batch)
    padded = torch.nn.utils.rnn.pad_sequence(seqs, batch_first=True)
    return padded, torch.tensor(lengths)


for padded, lengths in DataLoader(Sentences(), batch_size=2, collate_fn=pad_collate):
    print(padded, lengths)

plain = DataLoader([(torch.tensor([i, i + 1]), i % 2) for i in range(5)], batch_size=2)
print([b[0].tolist() for b in plain], [b[1] for b in plain])
print(DataLoader(tds, batch_size=None).__iter__().__next__())
