"""Fetchers: turn one entry of the index sampler into one collated batch.

Shared by the main-process iterator and the workers (threads or processes).
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from .collate import default_collate
from .dataset import Subset, TensorDataset


class MapFetcher:
    """``dataset[i]`` for each index of the batch (or ``__getitems__`` of all), then collate."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        getitems = getattr(dataset, "__getitems__", None)
        self.getitems = getitems if callable(getitems) else None
        self.arrays, self.maps = _fast_path(dataset) if auto_collation else (None, None)
        if collate_fn is not default_collate:
            self.arrays = None

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        if self.arrays is not None and index:
            try:
                rows = np.asarray(index, dtype=np.intp)
                for m in self.maps:  # through the Subsets, outermost first
                    rows = m[rows]
            except (TypeError, ValueError):
                rows = None
            if rows is not None and rows.ndim == 1:
                return [Tensor._make(a[rows]) for a in self.arrays]
        if self.getitems is not None:
            data = self.getitems(index)
        else:
            data = [self.dataset[i] for i in index]
        return self.collate_fn(data)


def _fast_path(dataset):
    """For a TensorDataset (possibly inside Subsets, as ``random_split`` makes) on the CPU: its
    arrays and the Subsets' index arrays, so a batch is one fancy-index per tensor instead of
    len(batch) row tensors stacked by default_collate (same values, dtypes and layout)."""
    maps = []
    while type(dataset) is Subset:
        try:
            m = np.asarray(dataset.indices, dtype=np.intp)
        except (TypeError, ValueError):
            return None, None
        if m.ndim != 1:
            return None, None
        maps.append(m)
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset:
        return None, None
    if not all(type(t._data) is np.ndarray and not t._requires_grad for t in dataset.tensors):
        return None, None
    return [t._data for t in dataset.tensors], maps


class IterableFetcher:
    """The next sample(s) of the dataset's iterator; ``StopIteration`` when it has run dry."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.iterator = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.iterator))
        data = []
        for _ in index:
            try:
                data.append(next(self.iterator))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def make_fetcher(iterable: bool, dataset, auto_collation: bool, collate_fn, drop_last: bool):
    cls = IterableFetcher if iterable else MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)
