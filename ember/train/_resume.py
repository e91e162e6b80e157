"""Starting an epoch part-way: the same batch order, without loading the batches already done.

An ember ``DataLoader`` over a map-style dataset is re-created for that one epoch with its index
sampler wrapped by ``SkipBatches``: the wrapper draws the epoch's order exactly as the original
run did (from the generator states of the epoch's start, which the caller has put back), steps
over the first ``skip`` entries (indices only: nothing is fetched), then calls ``on_skipped``
(which puts back the generator states of the interrupted step) and yields the rest. Any other
iterable is iterated and its first ``skip`` batches are loaded and dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from ..data.dataloader import DataLoader

_END = object()


class SkipBatches:
    """An index (or batch) sampler that skips the first ``skip`` entries of ``inner``.

    >>> from ember.data import BatchSampler, SequentialSampler
    >>> inner = BatchSampler(SequentialSampler(range(7)), batch_size=2, drop_last=False)
    >>> list(SkipBatches(inner, 2))
    [[4, 5], [6]]
    """

    def __init__(self, inner: Iterable, skip: int, on_skipped: Callable[[], None] | None = None):
        self.inner = inner
        self.skip = int(skip)
        self.on_skipped = on_skipped

    def __iter__(self) -> Iterator:
        it = iter(self.inner)
        for _ in range(self.skip):
            if next(it, _END) is _END:
                break
        if self.on_skipped is not None:
            self.on_skipped()
        yield from it

    def __len__(self) -> int:
        return max(0, len(self.inner) - self.skip)  # type: ignore[arg-type]


def can_skip_without_loading(loader) -> bool:
    """Whether ``loader`` is an ember DataLoader over a map-style dataset."""
    return isinstance(loader, DataLoader) and not loader._iterable


def iterate_from(loader, skip: int, on_skipped: Callable[[], None]) -> Iterator:
    """An iterator over ``loader``'s batches from batch ``skip`` on (see the module docstring)."""
    if not can_skip_without_loading(loader):
        it = iter(loader)
        for _ in range(skip):
            if next(it, _END) is _END:
                break
        on_skipped()
        return it
    common = dict(
        num_workers=loader.num_workers,
        collate_fn=loader.collate_fn,
        pin_memory=loader.pin_memory,
        timeout=loader.timeout,
        worker_init_fn=loader.worker_init_fn,
        multiprocessing_context=loader.multiprocessing_context,
        generator=loader.generator,
        prefetch_factor=loader.prefetch_factor,
        in_order=loader.in_order,
        worker_type=loader.worker_type,
    )
    if loader.batch_sampler is not None:
        once = DataLoader(
            loader.dataset,
            batch_sampler=SkipBatches(loader.batch_sampler, skip, on_skipped),
            **common,
        )
    else:
        once = DataLoader(
            loader.dataset,
            batch_size=None,
            sampler=SkipBatches(loader.sampler, skip, on_skipped),
            **common,
        )
    return iter(once)
