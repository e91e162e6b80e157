"""CIFAR-10 from its binary version (``cifar-10-binary.tar.gz``, folder ``cifar-10-batches-bin``).

Each file is a run of 3,073-byte records: one label byte, then 1,024 red, 1,024 green and 1,024
blue bytes of a 32x32 image, row by row. ember never reads the pickled "python version": loading
a pickle can run arbitrary code.

>>> import pathlib, tempfile
>>> import numpy as np
>>> from ember.data.datasets import CIFAR10
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> rec = np.zeros(3073, dtype=np.uint8); rec[0] = 4; rec[1:1025] = 255   # a red deer
>>> _ = (root / "test_batch.bin").write_bytes(rec.tobytes())
>>> img, label = CIFAR10(root, train=False)[0]
>>> img.shape, img[0, 0].tolist(), label
((32, 32, 3), [255, 0, 0], 4)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ... import _caches
from ._common import (
    DatasetError,
    DatasetInfo,
    VisionDataset,
    check_folder,
    file_signature,
    no_download,
    uint8_stats,
)

__all__ = ["CIFAR10", "find_cifar_folder"]

RECORD = 1 + 3 * 32 * 32
_STANDARD_BATCH_BYTES = 10000 * RECORD
_STATS_CACHE: dict = {}
_caches.register("CIFAR-10 statistics", _STATS_CACHE.clear, _STATS_CACHE.__len__)
_BATCH = re.compile(r"data_batch_(\d+)\.bin")


def find_cifar_folder(root: Path) -> Path | None:
    """``root`` or ``root/cifar-10-batches-bin`` if it holds CIFAR-10 binary batches, else None.

    >>> import pathlib, tempfile
    >>> from ember.data.datasets.cifar import find_cifar_folder
    >>> root = pathlib.Path(tempfile.mkdtemp()); (root / "cifar-10-batches-bin").mkdir()
    >>> _ = (root / "cifar-10-batches-bin" / "test_batch.bin").write_bytes(b"")
    >>> find_cifar_folder(root).name
    'cifar-10-batches-bin'
    """
    for d in (root, root / "cifar-10-batches-bin"):
        if d.is_dir() and (
            (d / "test_batch.bin").is_file() or any(_BATCH.fullmatch(p.name) for p in d.iterdir())
        ):
            return d
    return None


def pickled_cifar(root: Path) -> Path | None:
    """Where the pickled (python) version of CIFAR sits under ``root``, if it does (to say so
    in the error: ember reads only the binary version).

    >>> import pathlib, tempfile
    >>> from ember.data.datasets.cifar import pickled_cifar
    >>> root = pathlib.Path(tempfile.mkdtemp()); pickled_cifar(root) is None
    True
    """
    for d in (root, root / "cifar-10-batches-py", root / "cifar-100-python"):
        if d.is_dir() and any((d / n).is_file() for n in ("data_batch_1", "batches.meta", "meta")):
            return d
    return None


def _train_batches(folder: Path) -> list[Path]:
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := _BATCH.fullmatch(p.name))]
    return [p for _, p in sorted(found)]


class CIFAR10(VisionDataset):
    """CIFAR-10 from the binary batches: ``(32x32x3 uint8 array, label)`` samples.

    ``root`` holds ``data_batch_1.bin`` .. ``data_batch_5.bin``, ``test_batch.bin`` and
    ``batches.meta.txt`` (the class names), or has them in ``cifar-10-batches-bin/``. The
    training split is every ``data_batch_<k>.bin`` present (normally 5 files of 10,000
    images), so a smaller set made of fewer batches also works. ``data`` is ``(N, 32, 32, 3)``
    uint8, as in torchvision. ``download=True`` raises: ember fetches nothing from the network.

    ``info.mean``/``info.std`` are the customary constants ((0.4914, 0.4822, 0.4465) and
    (0.2470, 0.2435, 0.2616)) for the standard five full training batches, otherwise computed
    exactly from the training batches present (cached per file for the process).

    >>> from ember.data.datasets import CIFAR10
    >>> CIFAR10.classes[:3]
    ['airplane', 'automobile', 'bird']
    """

    classes = [
        "airplane",
        "automobile",
        "bird",
        "cat",
        "deer",
        "dog",
        "frog",
        "horse",
        "ship",
        "truck",
    ]
    _standard_stats = ((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))

    def __init__(
        self,
        root: str | Path,
        train: bool = True,
        transform: Callable | None = None,
        target_transform: Callable | None = None,
        download: bool = False,
    ) -> None:
        super().__init__(root, bool(train), transform, target_transform)
        if download:
            raise no_download("CIFAR10", root, "the binary batches (cifar-10-binary.tar.gz)")
        root_path = check_folder("CIFAR10", root)
        folder = find_cifar_folder(root_path)
        if folder is None:
            pickled = pickled_cifar(root_path)
            if pickled is not None:
                raise DatasetError(
                    f"CIFAR10: {pickled} holds the pickled (python) version of CIFAR, which "
                    "ember does not read (unpickling can run code); use the binary version "
                    "(cifar-10-binary.tar.gz, folder cifar-10-batches-bin)"
                )
            raise DatasetError(
                f"CIFAR10: no CIFAR-10 binary batches in {root_path}: looked for "
                "data_batch_1.bin .. data_batch_5.bin and test_batch.bin there and in "
                "cifar-10-batches-bin/"
            )
        self.folder = folder
        meta = folder / "batches.meta.txt"
        if meta.is_file():
            try:
                names = [ln.strip() for ln in meta.read_text().splitlines() if ln.strip()]
            except (OSError, UnicodeDecodeError) as e:
                raise DatasetError(f"CIFAR10: cannot read {meta} ({e})") from None
            if not names:
                raise DatasetError(f"CIFAR10: {meta} lists no class names")
            self.classes = names
        if self.train:
            self.files = _train_batches(folder)
            if not self.files:
                raise DatasetError(
                    f"CIFAR10: {folder} has no training batches (data_batch_1.bin ..)"
                )
        else:
            test = folder / "test_batch.bin"
            if not test.is_file():
                raise DatasetError(f"CIFAR10: {folder} has no test batch (test_batch.bin)")
            self.files = [test]
        self.data, self.targets = self._load(self.files)
        self._labels = self.targets.tolist()

    def _load(self, files: list[Path]) -> tuple[np.ndarray, np.ndarray]:
        records = []
        for p in files:
            size = p.stat().st_size
            if size == 0 or size % RECORD:
                raise DatasetError(
                    f"CIFAR10: {p} has {size} bytes, not a whole number of {RECORD}-byte "
                    "records (1 label byte + 3x32x32 pixels): truncated, or not CIFAR-10 binary"
                )
            try:
                records.append(np.fromfile(p, dtype=np.uint8).reshape(-1, RECORD))
            except (OSError, ValueError) as e:
                raise DatasetError(f"CIFAR10: cannot read {p} ({e})") from None
        rec = records[0] if len(records) == 1 else np.concatenate(records)
        labels = rec[:, 0].astype(np.int64)
        if labels.max() >= len(self.classes):
            i = int(np.argmax(labels >= len(self.classes)))
            offsets = np.cumsum([0] + [len(r) for r in records])
            f = int(np.searchsorted(offsets, i, side="right")) - 1
            raise DatasetError(
                f"CIFAR10: {files[f]}: record {i - offsets[f]} has label {labels[i]}, out of "
                f"range 0..{len(self.classes) - 1} (not a CIFAR-10 binary file?)"
            )
        images = np.ascontiguousarray(rec[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
        return images, labels

    def _make_info(self) -> DatasetInfo:
        batches = _train_batches(self.folder) or self.files
        key = file_signature(batches)
        stats = _STATS_CACHE.get(key)
        if stats is None:
            names = [p.name for p in batches]
            if names == [f"data_batch_{k}.bin" for k in range(1, 6)] and all(
                p.stat().st_size == _STANDARD_BATCH_BYTES for p in batches
            ):
                stats = self._standard_stats
            elif batches == self.files:
                stats = uint8_stats(self.data)
            else:
                stats = uint8_stats(self._load(batches)[0])
            _STATS_CACHE[key] = stats
        return DatasetInfo(
            name="cifar10",
            num_classes=len(self.classes),
            in_channels=3,
            image_size=(32, 32),
            mean=stats[0],
            std=stats[1],
            classes=tuple(self.classes),
        )
