"""ImageFolder: a folder with one sub-folder of images per class, read with Pillow.

::

    root/cat/001.png      root/train/cat/001.png   root/test/cat/101.png
    root/dog/002.jpg  or  root/train/dog/002.jpg   root/test/dog/102.jpg  (or val/ for test/)

>>> import pathlib, tempfile
>>> import numpy as np
>>> from PIL import Image
>>> from ember.data.datasets import ImageFolder
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> for cls in ("cat", "dog"):
...     (root / cls).mkdir()
...     Image.new("L", (4, 3), 200).save(root / cls / "a.png")
>>> ds = ImageFolder(root)
>>> ds.classes, len(ds), ds[1][0].shape, ds[1][1]
(['cat', 'dog'], 2, (3, 4, 3), 1)
"""

from __future__ import annotations

import os
from collections import Counter
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
    stratified_split,
)

__all__ = ["IMG_EXTENSIONS", "ImageFolder", "find_classes", "pil_loader"]

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")
#: At most this many training images (evenly spaced over the sorted list) give ``info``'s
#: mean, std and image size.
STATS_SAMPLE = 500
_STATS_CACHE: dict = {}
_caches.register("image-folder statistics", _STATS_CACHE.clear, _STATS_CACHE.__len__)


def pil_loader(path: str | Path) -> np.ndarray:
    """The default loader: the image at ``path`` as an ``HxWx3`` uint8 RGB array.

    >>> import pathlib, tempfile
    >>> from PIL import Image
    >>> from ember.data.datasets.folder import pil_loader
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.png"; Image.new("RGB", (2, 1), (9, 8, 7)).save(p)
    >>> pil_loader(p).tolist()
    [[[9, 8, 7], [9, 8, 7]]]
    """
    from PIL import Image

    try:
        with Image.open(path) as img:
            return np.asarray(img.convert("RGB"))
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise DatasetError(f"ImageFolder: cannot read image {path} ({reason})") from None


def _is_image(name: str) -> bool:
    return name.lower().endswith(IMG_EXTENSIONS)


def find_classes(directory: str | Path) -> tuple[list[str], dict[str, int]]:
    """The class names (sorted sub-folder names, hidden ones skipped) and ``{name: index}``.

    >>> import pathlib, tempfile
    >>> from ember.data.datasets.folder import find_classes
    >>> root = pathlib.Path(tempfile.mkdtemp()); (root / "b").mkdir(); (root / "a").mkdir()
    >>> find_classes(root)
    (['a', 'b'], {'a': 0, 'b': 1})
    """
    try:
        classes = sorted(
            e.name for e in os.scandir(directory) if e.is_dir() and not e.name.startswith(".")
        )
    except OSError as e:
        raise DatasetError(f"ImageFolder: cannot list {directory} ({e.strerror or e})") from None
    if not classes:
        raise DatasetError(
            f"ImageFolder: {directory} has no class sub-folders (expected one sub-folder of "
            "images per class)"
        )
    return classes, {c: i for i, c in enumerate(classes)}


def _scan(folder: Path, classes: list[str], is_valid_file, allow_empty: bool, missing_ok: bool):
    """``[(path, class index)]`` sorted by class then path (sub-folders of a class included)."""
    samples: list[tuple[str, int]] = []
    empty = []
    for idx, name in enumerate(classes):
        d = folder / name
        if not d.is_dir():
            if missing_ok:
                continue
            empty.append(d)
            continue
        found = []
        for dirpath, dirnames, filenames in os.walk(d, followlinks=True):
            dirnames[:] = sorted(n for n in dirnames if not n.startswith("."))
            for fn in filenames:
                p = os.path.join(dirpath, fn)
                if is_valid_file(p) if is_valid_file is not None else _is_image(fn):
                    found.append(p)
        if not found:
            empty.append(d)
        samples.extend((p, idx) for p in sorted(found))
    if empty and not allow_empty:
        more = f" (and {len(empty) - 1} more)" if len(empty) > 1 else ""
        exts = ", ".join(IMG_EXTENSIONS) if is_valid_file is None else "is_valid_file"
        raise DatasetError(f"ImageFolder: class folder {empty[0]}{more} holds no images ({exts})")
    return samples


class ImageFolder(VisionDataset):
    """Images in one sub-folder per class, read with Pillow: ``(HxWx3 uint8 array, label)``.

    Classes are the sorted sub-folder names (hidden ones skipped); images are the files with an
    image extension (``IMG_EXTENSIONS``, any case), in the class folder or below it, sorted.
    Images load lazily, converted to RGB; ``loader(path)`` replaces the Pillow loader.

    ``train`` chooses a split:

    - ``None`` (the default, torchvision's behaviour): every sub-folder of ``root`` is a class,
      all images are used;
    - ``True``/``False`` with ``root/train/`` and ``root/test/`` (or ``root/val/``): that folder,
      with the classes of ``train/`` (``test/`` may lack some; a class only in ``test/`` is an
      error);
    - ``True``/``False`` otherwise (classes in ``root``, or in ``root/train/`` alone): ember splits
      each class 80/20 itself, fixed and stratified: the ``round(n/5)`` images that come first in
      the order of a BLAKE2b hash of ``(SPLIT_SEED=0, class name, path relative to the class
      folder)`` are the test split (see ``_common.stratified_split``), the same on every machine.

    ``download=True`` raises (ember fetches nothing). There is no ``data`` attribute (the images
    stay on disk); ``samples`` (alias ``imgs``) lists ``(path, label)`` and ``targets`` the labels.

    >>> import pathlib, tempfile
    >>> from PIL import Image
    >>> from ember.data.datasets import ImageFolder
    >>> root = pathlib.Path(tempfile.mkdtemp()); (root / "x").mkdir()
    >>> for i in range(5):
    ...     Image.new("RGB", (2, 2)).save(root / "x" / f"{i}.png")
    >>> len(ImageFolder(root, train=True)), len(ImageFolder(root, train=False))
    (4, 1)
    """

    def __init__(
        self,
        root: str | Path,
        transform: Callable | None = None,
        target_transform: Callable | None = None,
        loader: Callable | None = None,
        is_valid_file: Callable[[str], bool] | None = None,
        allow_empty: bool = False,
        *,
        train: bool | None = None,
        download: bool = False,
    ) -> None:
        super().__init__(root, None if train is None else bool(train), transform, target_transform)
        if download:
            raise no_download("ImageFolder", root, "one sub-folder of images per class")
        root_path = check_folder("ImageFolder", root)
        self.loader = loader or pil_loader
        self.extensions = None if is_valid_file is not None else IMG_EXTENSIONS
        test_dir = next((root_path / n for n in ("test", "val") if (root_path / n).is_dir()), None)
        has_train = (root_path / "train").is_dir()
        self.split_folders = self.train is not None and has_train and test_dir is not None
        if self.train is None:
            base = root_path
        elif has_train:
            base = root_path / "train"
        else:
            base = root_path
        self.classes = find_classes(base)[0]
        self.folder = base
        if self.split_folders and not self.train:
            extra = sorted(set(find_classes(test_dir)[0]) - set(self.classes))
            if extra:
                raise DatasetError(
                    f"ImageFolder: {test_dir} has class folder {extra[0]!r} that {base} lacks"
                )
            self.folder = test_dir
            samples = _scan(test_dir, self.classes, is_valid_file, allow_empty, missing_ok=True)
            self._all_train = None
        else:
            samples = _scan(base, self.classes, is_valid_file, allow_empty, missing_ok=False)
            if self.train is not None and not self.split_folders:
                keys = [os.path.relpath(p, os.path.join(base, self.classes[c])) for p, c in samples]
                tr, te = stratified_split([c for _, c in samples], self.classes, keys)
                self._all_train = [samples[i] for i in tr]
                samples = self._all_train if self.train else [samples[i] for i in te]
            else:
                self._all_train = samples
        self.samples = samples
        self.imgs = samples
        self.targets = [c for _, c in samples]
        self._labels = self.targets
        self._paths = [p for p, _ in samples]
        self._train_dir = base

    def _image(self, index: int):
        return self.loader(self._paths[index])

    def _training_samples(self) -> list[tuple[str, int]]:
        if self._all_train is not None:
            return self._all_train
        return _scan(self._train_dir, self.classes, None, True, missing_ok=False)

    def _make_info(self) -> DatasetInfo:
        train = self._training_samples() or self.samples
        step = max(1, len(train) / STATS_SAMPLE) if train else 1
        picked = [Path(train[int(i * step)][0]) for i in range(min(len(train), STATS_SAMPLE))]
        # the statistics depend on how images are read, too: a custom loader gets its own entry
        key = (file_signature(picked), self.loader)
        got = _STATS_CACHE.get(key)
        if got is None:
            total = np.zeros(3)
            total_sq = np.zeros(3)
            count = 0
            sizes: Counter = Counter()
            for p in picked:
                img = self.loader(str(p))
                img = np.asarray(img)
                sizes[img.shape[:2]] += 1
                flat = img.reshape(-1, img.shape[-1] if img.ndim == 3 else 1).astype(np.float64)
                flat /= 255.0 if img.dtype == np.uint8 else 1.0
                total += flat.sum(0) if flat.shape[1] == 3 else flat.sum()
                total_sq += (flat**2).sum(0) if flat.shape[1] == 3 else (flat**2).sum()
                count += flat.shape[0]
            mean = total / max(count, 1)
            std = np.sqrt(np.maximum(total_sq / max(count, 1) - mean**2, 0.0))
            size = sizes.most_common(1)[0][0] if sizes else (0, 0)
            got = (tuple(map(float, mean)), tuple(map(float, std)), (int(size[0]), int(size[1])))
            _STATS_CACHE[key] = got
        return DatasetInfo(
            name="imagefolder",
            num_classes=len(self.classes),
            in_channels=3,
            image_size=got[2],
            mean=got[0],
            std=got[1],
            classes=tuple(self.classes),
        )

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train else 'Test'}" if self.train is not None else ""
