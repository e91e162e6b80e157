"""``DistributedSampler``: each rank's share of a dataset's keys (PyTorch's
``torch.utils.data.distributed.DistributedSampler``, the same indices).

Without ``drop_last``, the key list is padded by repeating its start until it divides evenly;
with it, the tail is cut. Rank r takes every ``num_replicas``-th key from r. With ``shuffle``,
the keys are a permutation drawn from ``seed + epoch`` (call ``set_epoch`` every epoch), the
same on every rank.

>>> from ember.data.distributed import DistributedSampler
>>> [list(DistributedSampler(range(5), num_replicas=2, rank=r, shuffle=False)) for r in (0, 1)]
[[0, 2, 4], [1, 3, 0]]
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized

from .._errors import EmberError
from .sampler import Sampler


class DistributedSampler(Sampler[int]):
    """Keys ``rank, rank + num_replicas, ...`` of the (padded or cut, maybe shuffled) key list.

    ``num_replicas`` and ``rank`` default to the default process group's size and rank.

    >>> from ember.data.distributed import DistributedSampler
    >>> s = DistributedSampler(range(7), num_replicas=3, rank=0, shuffle=False, drop_last=True)
    >>> list(s), len(s)
    ([0, 3], 2)
    """

    def __init__(
        self,
        dataset: Sized,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None or rank is None:
            from .. import distributed as dist

            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if not 0 <= rank < num_replicas:
            raise EmberError(
                f"DistributedSampler: invalid rank {rank}, rank should be in the interval "
                f"[0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            from .. import random as _random
            from ..functions.creation import randperm

            g = _random.Generator().manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[: self.total_size]
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Draw the next epoch's order from ``seed + epoch`` (same on every rank)."""
        self.epoch = epoch


__all__ = ["DistributedSampler"]
