"""Digits: the 1,797 8x8 handwritten digits bundled with ember (UCI optical digits, CC BY 4.0).

>>> from ember.data.datasets import Digits
>>> img, label = Digits()[0]
>>> img.shape, img.dtype, float(img.max()) <= 1.0, type(label)
((8, 8), dtype('float32'), True, <class 'int'>)
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ... import _caches
from ._common import DatasetError, DatasetInfo, VisionDataset, no_download, stratified_split

__all__ = ["Digits"]

BUNDLED = Path(__file__).resolve().parent / "_bundled" / "digits.npz"
_CACHE: dict = {}  # file signature -> (images, labels, train indices, test indices, stats)
_caches.register("decoded digits", _CACHE.clear, _CACHE.__len__)


def _load(path: Path):
    try:
        st = path.stat()
    except OSError:
        raise DatasetError(f"Digits: no such file: {path}") from None
    key = (str(path), st.st_size, st.st_mtime_ns)
    got = _CACHE.get(key)
    if got is not None:
        return got
    try:
        f = np.load(path, allow_pickle=False)
        if not hasattr(f, "files"):
            raise DatasetError(f"Digits: {path} is a .npy array, expected an .npz archive")
        with f:
            missing = [k for k in ("images", "labels") if k not in f.files]
            if missing:
                raise DatasetError(
                    f"Digits: {path} lacks the array {missing[0]!r} (needs 'images' and 'labels')"
                )
            images, labels = f["images"], f["labels"]
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise DatasetError(f"Digits: {path} is not a readable .npz file ({e})") from None
    if images.ndim != 3 or images.dtype != np.uint8 or labels.shape != images.shape[:1]:
        raise DatasetError(
            f"Digits: {path} holds images {images.dtype}{list(images.shape)} and labels "
            f"{labels.dtype}{list(labels.shape)}; expected uint8 (N, H, W) and (N,)"
        )
    if len(images) and (images.max() > 16 or labels.min() < 0 or labels.max() > 9):
        raise DatasetError(f"Digits: {path}: grey levels must be 0..16 and labels 0..9")
    labels = labels.astype(np.int64)
    train, test = stratified_split(labels, Digits.classes)
    data = images[train].astype(np.float64) / 16.0
    stats = ((float(data.mean()),), (float(data.std()),))
    got = _CACHE[key] = (images, labels, train, test, stats)
    return got


class Digits(VisionDataset):
    """The bundled 8x8 digits: ``(HxW float32 array in [0, 1], label)`` samples.

    1,797 images of grey levels 0..16 (stored as uint8; returned divided by 16) and labels
    0..9 (the UCI "Optical Recognition of Handwritten Digits" set as distributed with
    scikit-learn, CC BY 4.0; see ``_bundled/DIGITS_LICENSE.txt``). The set has no official
    split: ember's is fixed and stratified, 1,438 training and 359 test images, each class
    giving ``round(n/5)`` images to the test split, chosen by a BLAKE2b hash of
    ``(0, digit, index)`` (``_common.stratified_split``), so it is the same everywhere.

    ``root`` is ``None`` (the bundled file), a folder holding ``digits.npz`` or the ``.npz``
    itself. ``data`` is the split's float32 ``(N, 8, 8)`` array, ``targets`` its int64 labels.

    >>> from ember.data.datasets import Digits
    >>> len(Digits()), len(Digits(train=False))
    (1438, 359)
    """

    classes = [str(d) for d in range(10)]

    def __init__(
        self,
        root: str | Path | None = None,
        train: bool = True,
        transform: Callable | None = None,
        target_transform: Callable | None = None,
        download: bool = False,
    ) -> None:
        super().__init__(root, bool(train), transform, target_transform)
        if download:
            raise no_download("Digits", root, "digits.npz (Digits needs no download: root=None)")
        path = BUNDLED if root is None else Path(root).expanduser()
        if path.is_dir():
            path = path / "digits.npz"
        images, labels, train_idx, test_idx, self._stats = _load(path)
        self.file = path
        idx = train_idx if self.train else test_idx
        self.indices = idx
        self.data = images[idx].astype(np.float32) * np.float32(1 / 16)  # exact: 1/16 = 2**-4
        self.targets = labels[idx]
        self._labels = self.targets.tolist()

    def _make_info(self) -> DatasetInfo:
        return DatasetInfo(
            name="digits",
            num_classes=10,
            in_channels=1,
            image_size=(int(self.data.shape[1]), int(self.data.shape[2])),
            mean=self._stats[0],
            std=self._stats[1],
            classes=tuple(self.classes),
        )

    def __repr__(self) -> str:
        text = super().__repr__()
        return text.replace("Root location: None", "Root location: <bundled>", 1)
