"""Samplers: the order in which a map-style dataset's keys are visited (one key or one batch).

Random samplers draw from an ``ember.Generator`` (or the default one, so ``ember.manual_seed``
makes them reproducible).

>>> from ember.data import BatchSampler, SequentialSampler
>>> list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=False))
[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Generic, TypeVar

import numpy as np

from .. import random as _random

T_co = TypeVar("T_co", covariant=True)

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]


def _is_positive_int(n) -> bool:
    return isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n > 0


def _fresh_rng(generator) -> np.random.Generator:
    """The generator to draw one epoch from.

    Without an explicit generator, draw a seed from the default one when the epoch starts (as
    PyTorch does), so random ops run during the epoch do not change its order.
    """
    if generator is not None:
        return _random.rng(generator)
    seed = int(_random.rng().integers(0, 2**63 - 1))
    return _random.Generator().manual_seed(seed).rng


class Sampler(Generic[T_co]):
    """Base class: subclasses define ``__iter__`` (and usually ``__len__``).

    >>> from ember.data import Sampler
    >>> class Backwards(Sampler):
    ...     def __init__(self, n): self.n = n
    ...     def __iter__(self): return iter(range(self.n - 1, -1, -1))
    ...     def __len__(self): return self.n
    >>> list(Backwards(3))
    [2, 1, 0]
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``.

    >>> from ember.data import SequentialSampler
    >>> list(SequentialSampler("abc"))
    [0, 1, 2]
    """

    data_source: Sized

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """A random permutation each epoch, or ``num_samples`` draws with replacement.

    Without replacement and with ``num_samples > len(data_source)``, whole permutations are
    chained (each index appears about equally often).

    >>> import ember
    >>> from ember.data import RandomSampler
    >>> sorted(RandomSampler(range(5), generator=ember.Generator().manual_seed(0)))
    [0, 1, 2, 3, 4]
    >>> len(list(RandomSampler(range(5), replacement=True, num_samples=12)))
    12
    """

    data_source: Sized
    replacement: bool

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator=None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={self.replacement}"
            )
        if not _is_positive_int(self.num_samples):
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        rng = _fresh_rng(self.generator)
        total = self.num_samples
        if self.replacement:
            for start in range(0, total, 32):  # lazily, 32 at a time, like PyTorch
                yield from rng.integers(0, n, size=min(32, total - start)).tolist()
        else:
            for _ in range(total // n):
                yield from rng.permutation(n).tolist()
            if total % n:
                yield from rng.permutation(n)[: total % n].tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order, without replacement.

    >>> import ember
    >>> from ember.data import SubsetRandomSampler
    >>> sorted(SubsetRandomSampler([10, 20, 30], generator=ember.Generator().manual_seed(1)))
    [10, 20, 30]
    """

    indices: Sequence[int]

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _random.rng(self.generator).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``.

    >>> import ember
    >>> from ember.data import WeightedRandomSampler
    >>> list(WeightedRandomSampler([0.0, 1.0, 0.0], 4, generator=ember.Generator()))
    [1, 1, 1, 1]
    >>> sorted(WeightedRandomSampler([1, 2, 3], 3, replacement=False))
    [0, 1, 2]
    """

    def __init__(
        self,
        weights: Sequence[float],
        num_samples: int,
        replacement: bool = True,
        generator=None,
    ) -> None:
        if not _is_positive_int(num_samples):
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        from .. import backend
        from ..functions.creation import as_tensor

        w = getattr(weights, "_data", weights)
        w = np.asarray(backend.to_device(w, backend.CPU), dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}"
            )
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError("WeightedRandomSampler: weights must be finite and non-negative")
        if w.sum() <= 0:
            raise ValueError("WeightedRandomSampler: the weights sum to zero")
        if not replacement and num_samples > np.count_nonzero(w):
            raise ValueError(
                f"WeightedRandomSampler: cannot draw {num_samples} samples without replacement "
                f"from {np.count_nonzero(w)} indices with non-zero weight"
            )
        self.weights = as_tensor(w)
        self.num_samples = int(num_samples)
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        w = self.weights._data
        drawn = _random.rng(self.generator).choice(
            len(w), size=self.num_samples, replace=self.replacement, p=w / w.sum()
        )
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Groups another sampler's indices into lists of ``batch_size``.

    >>> from ember.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=True))
    [[0, 1, 2], [3, 4, 5]]
    """

    def __init__(
        self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool
    ) -> None:
        if not _is_positive_int(batch_size):
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = int(batch_size)
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        it = iter(self.sampler)
        if self.drop_last:
            yield from (list(b) for b in zip(*[it] * self.batch_size))
        else:
            batch = list(itertools.islice(it, self.batch_size))
            while batch:
                yield batch
                batch = list(itertools.islice(it, self.batch_size))

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
