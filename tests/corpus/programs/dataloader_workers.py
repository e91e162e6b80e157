# corpus: exact
"""DataLoader with worker processes: num_workers, worker_init_fn, get_worker_info,
an IterableDataset split across workers, pin_memory and persistent workers."""

import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info


class Squares(Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, i):
        return torch.tensor([i, i * i])


class Range(IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        per_worker = (self.end - self.start + info.num_workers - 1) // info.num_workers
        lo = self.start + info.id * per_worker
        return iter(range(lo, min(lo + per_worker, self.end)))


def init_fn(worker_id):
    torch.manual_seed(1234 + worker_id)


if __name__ == "__main__":
    loader = DataLoader(Squares(), batch_size=4, num_workers=2, worker_init_fn=init_fn)
    for batch in loader:
        print(batch.tolist())
    print(get_worker_info())
    ds = Range(3, 10)
    print(sorted(int(x) for x in DataLoader(ds, num_workers=2)))
    print(list(DataLoader(ds, num_workers=0, batch_size=3)))
    loader = DataLoader(
        Squares(),
        batch_size=6,
        shuffle=False,
        num_workers=2,
        pin_memory=torch.cuda.is_available(),
        persistent_workers=True,
    )
    for epoch in range(2):
        print(epoch, [b.sum().item() for b in loader])
