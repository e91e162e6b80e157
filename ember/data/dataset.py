"""Datasets: map-style (``__getitem__`` + ``__len__``) and iterable-style (``__iter__``).

>>> import ember
>>> from ember.data import TensorDataset, random_split
>>> ds = TensorDataset(ember.arange(10), ember.arange(10) * 2)
>>> len(ds), ds[3]
(10, (tensor(3), tensor(6)))
>>> a, b = random_split(ds, [0.8, 0.2], generator=ember.Generator().manual_seed(0))
>>> len(a), len(b)
(8, 2)
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Generic, TypeVar

from .._tensor import Tensor
from ..random import Generator
from ..random import rng as _rng

T_co = TypeVar("T_co", covariant=True)

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "StackDataset",
    "ConcatDataset",
    "ChainDataset",
    "Subset",
    "random_split",
]


class Dataset(Generic[T_co]):
    """A map from keys (usually ``0 .. len-1``) to samples; subclasses define ``__getitem__``.

    Subclasses usually define ``__len__`` too (samplers and ``len(loader)`` need it) and may
    define ``__getitems__(indices)`` to fetch a whole batch at once.

    >>> from ember.data import Dataset
    >>> class Squares(Dataset):
    ...     def __len__(self): return 4
    ...     def __getitem__(self, i): return i * i
    >>> [Squares()[i] for i in range(4)], len(Squares() + Squares())
    ([0, 1, 4, 9], 8)
    """

    def __getitem__(self, index) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A stream of samples; subclasses define ``__iter__``.

    With ``num_workers > 0`` every worker iterates its own replica: use
    ``ember.data.get_worker_info()`` inside ``__iter__`` to give each worker its own shard.

    >>> from ember.data import IterableDataset
    >>> class Count(IterableDataset):
    ...     def __iter__(self): return iter(range(3))
    >>> list(Count() + Count())
    [0, 1, 2, 0, 1, 2]
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset[T_co]) -> ChainDataset:
        return ChainDataset([self, other])


def _row(t: Tensor, index) -> Tensor:
    """``t[index]`` along the first dimension, as a view (like PyTorch's indexing)."""
    if t._requires_grad and hasattr(Tensor, "__getitem__"):
        return t[index]  # keep the autograd history when the data itself requires grad
    # `..., ` keeps an integer index from collapsing to a NumPy scalar.
    return Tensor._make(t._data[index, ...])


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Samples are rows of the given tensors (all with the same first dimension).

    >>> import ember
    >>> from ember.data import TensorDataset
    >>> ds = TensorDataset(ember.zeros(5, 2), ember.arange(5))
    >>> x, y = ds[4]; x.shape, y
    (ember.Size([2]), tensor(4))
    """

    tensors: tuple[Tensor, ...]

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset: expected at least one tensor")
        if any(not isinstance(t, Tensor) or t.ndim == 0 for t in tensors):
            kinds = [type(t).__name__ if not isinstance(t, Tensor) else "0-d" for t in tensors]
            raise TypeError(f"TensorDataset: expected tensors with a first dimension, got {kinds}")
        sizes = [t.shape[0] for t in tensors]
        if any(s != sizes[0] for s in sizes):
            raise ValueError(f"TensorDataset: size mismatch between tensors (first dims {sizes})")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(_row(t, index) for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class StackDataset(Dataset):
    """Zips datasets of equal length: samples are tuples (positional) or dicts (keywords).

    >>> from ember.data import StackDataset
    >>> StackDataset([1, 2], ["a", "b"])[1], StackDataset(x=[1, 2], y=[3, 4])[0]
    ((2, 'b'), {'x': 1, 'y': 3})
    """

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                "input/output, but both types are given."
            )
        parts = args or tuple(kwargs.values())
        if not parts:
            raise ValueError("At least one dataset should be passed")
        self._length = len(parts[0])
        if any(self._length != len(d) for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args or kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """Map-style datasets one after the other.

    >>> from ember.data import ConcatDataset
    >>> ds = ConcatDataset([[0, 1], [2, 3, 4]])
    >>> len(ds), ds[2], ds[-1], ds.cumulative_sizes
    (5, 2, 4, [2, 5])
    """

    datasets: list
    cumulative_sizes: list[int]

    @staticmethod
    def cumsum(sequence) -> list[int]:
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset (use ChainDataset)")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        i = bisect.bisect_right(self.cumulative_sizes, idx)
        return self.datasets[i][idx - (self.cumulative_sizes[i - 1] if i else 0)]


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other (streams are chained lazily).

    >>> from ember.data import ChainDataset
    >>> list(ChainDataset([range(2), range(3)])), len(ChainDataset([range(2), range(3)]))
    ([0, 1, 0, 1, 2], 5)
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order.

    >>> from ember.data import Subset
    >>> s = Subset(["a", "b", "c", "d"], [3, 1])
    >>> len(s), s[0], s.__getitems__([0, 1])
    (2, 'd', ['d', 'b'])
    """

    dataset: Dataset[T_co]
    indices: Sequence[int]

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        # Lets the loader fetch a whole batch at once when the wrapped dataset can.
        # A subclass that overrides only __getitem__ must be honoured, so use it then.
        if type(self).__getitem__ is not Subset.__getitem__:
            return [self[i] for i in indices]
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def _fraction_lengths(n: int, fractions: Sequence[float]) -> list[int]:
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(n * frac))
    for i in range(n - sum(lengths)):  # hand out the remainder round-robin
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(
                f"Length of split at index {i} is 0. This might result in an empty dataset.",
                stacklevel=3,
            )
    return lengths


def random_split(
    dataset: Dataset, lengths: Sequence[int | float], generator: Generator | None = None
) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random subsets of the given lengths.

    ``lengths`` may be fractions summing to 1: each split gets ``floor(frac * len)`` and the
    remainder is handed out one by one, round-robin, as PyTorch does.

    >>> import ember
    >>> from ember.data import random_split
    >>> parts = random_split(range(10), [3, 7], generator=ember.Generator().manual_seed(42))
    >>> [len(p) for p in parts], sorted(list(parts[0]) + list(parts[1]))
    ([3, 7], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    """
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        lengths = _fraction_lengths(len(dataset), lengths)
    if sum(lengths) != len(dataset):
        raise ValueError(
            "Sum of input lengths does not equal the length of the input dataset! "
            f"(lengths {list(lengths)} sum to {sum(lengths)}, dataset has {len(dataset)})"
        )
    indices = _rng(generator).permutation(sum(lengths)).tolist()
    return [
        Subset(dataset, indices[end - n : end])
        for end, n in zip(itertools.accumulate(lengths), lengths)
    ]
