"""ember.data: datasets, samplers, collation and the DataLoader (PyTorch's ``torch.utils.data``).

Also importable as ``ember.utils.data``.

>>> import ember
>>> from ember.data import DataLoader, TensorDataset
>>> loader = DataLoader(TensorDataset(ember.arange(6)), batch_size=4)
>>> [b[0].tolist() for b in loader]
[[0, 1, 2, 3], [4, 5]]
"""

from . import datasets, transforms
from ._worker import WorkerInfo, get_worker_info
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "DistributedSampler",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "WorkerInfo",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
