"""What every dataset here shares: ``DatasetError``, ``DatasetInfo``, the ``VisionDataset`` base,
the deterministic stratified split and pixel statistics."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..._errors import EmberError, EmberIndexError
from ..dataset import Dataset

#: The seed of the fixed train/test split of Digits and of image folders without split folders.
SPLIT_SEED = 0
#: Share of each class that goes to the test split when ember splits a set itself.
TEST_FRACTION = 0.2


class DatasetError(EmberError):
    """Data that cannot be read: a missing folder or file, an unknown layout, a damaged file.

    The message is one line naming the path and what is wrong with it.

    >>> from ember.data.datasets import DatasetError, open_dataset
    >>> try:
    ...     open_dataset("/no/such/folder")
    ... except DatasetError as e:
    ...     print(e)
    open_dataset: no such folder: /no/such/folder
    """


@dataclass(frozen=True)
class DatasetInfo:
    """What a model and its input pipeline need to know about a dataset.

    ``mean`` and ``std`` are per channel, of the *training* images on ToTensor's 0..1 scale (also
    in the info of a test split, so both splits are normalized alike).

    >>> from ember.data.datasets import open_dataset
    >>> _, info = open_dataset("digits")
    >>> info.name, info.num_classes, info.in_channels, info.image_size
    ('digits', 10, 1, (8, 8))
    >>> [round(v, 4) for v in info.mean + info.std]
    [0.305, 0.3759]
    """

    name: str
    num_classes: int
    in_channels: int
    image_size: tuple[int, int]
    mean: tuple[float, ...]
    std: tuple[float, ...]
    classes: tuple[str, ...]


class VisionDataset(Dataset):
    """Base of ember's image datasets: ``(image, label)`` pairs, ``transform`` applied to the
    image and ``target_transform`` to the label (a Python int).

    Subclasses set ``data`` (where the set is in memory), ``targets``, ``classes`` and ``_labels``
    (the targets as a list of ints) and define ``_image(index)`` or keep ``data`` indexable.

    >>> from ember.data.datasets import Digits
    >>> isinstance(Digits(), VisionDataset)
    True
    """

    _split_names = ("Train", "Test")

    def __init__(
        self,
        root,
        train: bool | None = True,
        transform: Callable | None = None,
        target_transform: Callable | None = None,
    ) -> None:
        self.root = root
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        self._info: DatasetInfo | None = None

    def __len__(self) -> int:
        return len(self._labels)

    def _image(self, index: int):
        return self.data[index]

    def __getitem__(self, index: int):
        try:
            target = self._labels[index]
        except (IndexError, TypeError):
            raise EmberIndexError(
                f"{type(self).__name__}: index {index!r} is out of range for a dataset of "
                f"{len(self)} samples"
            ) from None
        img = self._image(index)
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    @property
    def class_to_idx(self) -> dict[str, int]:
        """``{class name: label}``."""
        return {c: i for i, c in enumerate(self.classes)}

    @property
    def info(self) -> DatasetInfo:
        """This dataset's ``DatasetInfo`` (statistics of its training split, computed once)."""
        if self._info is None:
            self._info = self._make_info()
        return self._info

    def _make_info(self) -> DatasetInfo:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def extra_repr(self) -> str:
        if self.train is None:
            return ""
        return f"Split: {self._split_names[0] if self.train else self._split_names[1]}"

    def __repr__(self) -> str:
        lines = [f"Number of datapoints: {len(self)}", f"Root location: {self.root}"]
        extra = self.extra_repr()
        if extra:
            lines += extra.splitlines()
        for name in ("transform", "target_transform"):
            t = getattr(self, name)
            if t is not None:
                text = repr(t).replace("\n", "\n    ")
                lines.append(f"{name.replace('_', ' ').capitalize()}: {text}")
        return "\n".join([f"Dataset {type(self).__name__}"] + ["    " + ln for ln in lines])


def no_download(cls_name: str, root, needs: str) -> DatasetError:
    """The error for ``download=True``: ember fetches nothing from the network."""
    return DatasetError(
        f"{cls_name}: ember has no network downloads (download=True); put {needs} in "
        f"{root} yourself and pass download=False"
    )


def check_folder(cls_name: str, root) -> Path:
    """``root`` as an existing folder, or a DatasetError naming it."""
    try:
        path = Path(os.fspath(root)).expanduser()
    except TypeError:
        raise DatasetError(f"{cls_name}: root must be a path, got {type(root).__name__}") from None
    if not path.exists():
        raise DatasetError(f"{cls_name}: no such folder: {path}")
    if not path.is_dir():
        raise DatasetError(f"{cls_name}: {path} is a file, expected a folder")
    return path


def split_rank(seed: int, class_name: str, key: str) -> bytes:
    """The sort key of one item in the fixed split: a hash of (seed, class, item)."""
    return hashlib.blake2b(f"{seed}/{class_name}/{key}".encode(), digest_size=8).digest()


def stratified_split(
    labels: Sequence[int],
    classes: Sequence[str],
    keys: Sequence[str] | None = None,
    seed: int = SPLIT_SEED,
) -> tuple[np.ndarray, np.ndarray]:
    """``(train_indices, test_indices)``, both sorted: a fixed, stratified 80/20 split.

    Each class gives ``round(n / 5)`` of its ``n`` items (halves rounded up: 1 of 3, 0 of 2) to
    the test split: those first in the order of a hash of ``(seed, class name, key)``, where
    ``key`` is the item's name (file path for image folders) or, without ``keys``, its index.
    The hash (BLAKE2b) makes the split the same on every machine and NumPy version, and an
    item's place in it independent of the other classes.

    >>> from ember.data.datasets._common import stratified_split
    >>> train, test = stratified_split([0, 0, 0, 0, 0, 1, 1, 1], ["a", "b"])
    >>> len(train), len(test), sorted(set(train) | set(test)) == list(range(8))
    (6, 2, True)
    """
    labels = np.asarray(labels, dtype=np.int64)
    train, test = [], []
    for c, name in enumerate(classes):
        idx = np.flatnonzero(labels == c)
        n_test = (len(idx) + 2) // 5  # round(n * TEST_FRACTION), halves up
        order = sorted(
            idx.tolist(), key=lambda i: split_rank(seed, name, str(i) if keys is None else keys[i])
        )
        test.extend(order[:n_test])
        train.extend(order[n_test:])
    return np.array(sorted(train), dtype=np.int64), np.array(sorted(test), dtype=np.int64)


def uint8_stats(images: np.ndarray) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Per-channel mean and (population) std of uint8 images on the 0..1 scale, exactly.

    ``images`` is ``(N, H, W)`` (one channel) or ``(N, H, W, C)``. Counts the 256 levels with
    ``bincount`` (fast, exact, no float copy of the data).

    >>> import numpy as np
    >>> from ember.data.datasets._common import uint8_stats
    >>> uint8_stats(np.array([[[0, 255]]], dtype=np.uint8))
    ((0.5,), (0.5,))
    """
    chans = [images] if images.ndim == 3 else [images[..., c] for c in range(images.shape[-1])]
    levels = np.arange(256, dtype=np.float64) / 255.0
    means, stds = [], []
    for ch in chans:
        counts = np.bincount(ch.reshape(-1), minlength=256).astype(np.float64)
        n = counts.sum()
        mean = float(counts @ levels / n)
        var = float(counts @ (levels - mean) ** 2 / n)
        means.append(mean)
        stds.append(var**0.5)
    return tuple(means), tuple(stds)


def file_signature(paths: Sequence[Path]) -> tuple:
    """A key that changes when any of ``paths`` changes (for the statistics caches)."""
    out = []
    for p in paths:
        st = p.stat()
        out.append((str(p.resolve()), st.st_size, st.st_mtime_ns))
    return tuple(out)
