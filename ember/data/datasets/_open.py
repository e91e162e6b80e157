"""``open_dataset``: a dataset and its ``DatasetInfo`` from ``"digits"`` or a folder, whatever
format the folder holds."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..dataset import Dataset
from ._common import DatasetError, DatasetInfo
from .cifar import CIFAR10, find_cifar_folder, pickled_cifar
from .digits import Digits
from .folder import IMG_EXTENSIONS, ImageFolder
from .mnist import MNIST, FashionMNIST, find_idx_folder

_NAMES = {"mnist", "fashion-mnist", "fashionmnist", "fashion_mnist", "cifar10", "cifar-10"}

LOOKED_FOR = (
    "MNIST/Fashion-MNIST IDX files (train-images-idx3-ubyte[.gz] ...; also in raw/), "
    "CIFAR-10 binary batches (data_batch_1.bin .. test_batch.bin; also in "
    "cifar-10-batches-bin/) and an image folder (one sub-folder of images per class, "
    "optionally under train/ and test/)"
)


def _has_images(folder: Path, depth: int = 2) -> bool:
    """Whether a class sub-folder of ``folder`` holds an image (looks ``depth`` levels down)."""
    try:
        subdirs = [e for e in os.scandir(folder) if e.is_dir() and not e.name.startswith(".")]
    except OSError:
        return False
    for d in subdirs:
        for dirpath, dirnames, filenames in os.walk(d.path):
            if any(f.lower().endswith(IMG_EXTENSIONS) for f in filenames):
                return True
            if dirpath.count(os.sep) - d.path.count(os.sep) >= depth:
                dirnames[:] = []
    return False


def detect_format(path: str | os.PathLike) -> str:
    """The format of the dataset folder ``path``: ``"mnist"``, ``"fashion-mnist"``,
    ``"cifar10"`` or ``"imagefolder"`` (DatasetError when none fits).

    IDX files are MNIST unless a folder name between ``path`` (included) and the files contains
    "fashion" (any case).

    >>> import pathlib, tempfile
    >>> from ember.data.datasets import detect_format
    >>> root = pathlib.Path(tempfile.mkdtemp()) / "FashionMNIST" / "raw"; root.mkdir(parents=True)
    >>> _ = (root / "t10k-labels-idx1-ubyte.gz").write_bytes(b"")
    >>> detect_format(root.parent.parent), detect_format(root.parent)
    ('fashion-mnist', 'fashion-mnist')
    """
    root = Path(os.fspath(path)).expanduser()
    if not root.exists():
        raise DatasetError(f"open_dataset: no such folder: {root}")
    if not root.is_dir():
        raise DatasetError(f"open_dataset: {root} is a file, expected a dataset folder")
    if find_cifar_folder(root) is not None:
        return "cifar10"
    idx = find_idx_folder(root)
    if idx is not None:
        parts = [root.resolve().name] + list(idx.resolve().relative_to(root.resolve()).parts)
        return "fashion-mnist" if any("fashion" in p.lower() for p in parts) else "mnist"
    pickled = pickled_cifar(root)
    if pickled is not None:
        raise DatasetError(
            f"open_dataset: {pickled} holds the pickled (python) version of CIFAR, which ember "
            "does not read (unpickling can run code); use the binary version "
            "(cifar-10-binary.tar.gz, folder cifar-10-batches-bin)"
        )
    if _has_images(root) or any(
        _has_images(root / s) for s in ("train", "test", "val") if (root / s).is_dir()
    ):
        return "imagefolder"
    raise DatasetError(
        f"open_dataset: {root} holds no dataset ember can read; looked for {LOOKED_FOR}"
    )


def open_dataset(
    spec: str | os.PathLike,
    train: bool = True,
    transform: Callable | None = None,
    target_transform: Callable | None = None,
) -> tuple[Dataset, DatasetInfo]:
    """The ``train`` (or test) split of ``spec`` and its ``DatasetInfo``.

    ``spec`` is ``"digits"`` (the bundled set; write ``./digits`` for a folder of that name)
    or a folder, whose format is detected (``detect_format``): MNIST or Fashion-MNIST IDX
    files, CIFAR-10 binary batches, or an image folder (``ImageFolder`` with ``train=``: its
    ``train/`` and ``test/`` or ``val/`` sub-folders, else ember's fixed 80/20 split). The
    info's mean and std are those of the training split in every case.

    >>> from ember.data.datasets import open_dataset
    >>> ds, info = open_dataset("digits", train=False)
    >>> len(ds), info.name, info.classes[:3]
    (359, 'digits', ('0', '1', '2'))
    """
    if isinstance(spec, str) and spec.strip().lower() == "digits":
        ds = Digits(train=train, transform=transform, target_transform=target_transform)
        return ds, ds.info
    try:
        root = Path(os.fspath(spec)).expanduser()
    except TypeError:
        raise DatasetError(
            f"open_dataset: expected 'digits' or a folder, got {type(spec).__name__}"
        ) from None
    if not root.exists() and isinstance(spec, str) and spec.strip().lower() in _NAMES:
        raise DatasetError(
            f"open_dataset: no folder {spec!r}, and ember has no network downloads: download "
            f"{spec} yourself and pass its folder (or use 'digits', bundled with ember)"
        )
    kind = detect_format(root)
    kw = dict(transform=transform, target_transform=target_transform)
    if kind == "cifar10":
        ds = CIFAR10(root, train=train, **kw)
    elif kind in ("mnist", "fashion-mnist"):
        cls = FashionMNIST if kind == "fashion-mnist" else MNIST
        ds = cls(find_idx_folder(root), train=train, **kw)
    else:
        ds = ImageFolder(root, train=bool(train), **kw)
    return ds, ds.info
