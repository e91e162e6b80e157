"""MNIST and Fashion-MNIST from their IDX files (gzipped or not), as distributed.

The files (``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte``,
``t10k-labels-idx1-ubyte``, each possibly ending in ``.gz``) may sit in ``root`` itself, in
``root/raw`` or in torchvision's ``root/MNIST/raw`` (``root/FashionMNIST/raw``). Images are
``HxW`` uint8 NumPy arrays; the whole split is in memory as ``data`` (N, H, W).

>>> import gzip, pathlib, tempfile, struct
>>> import numpy as np
>>> from ember.data.datasets import MNIST
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> imgs = np.arange(2 * 28 * 28, dtype=np.uint8).reshape(2, 28, 28)
>>> _ = (root / "train-images-idx3-ubyte").write_bytes(struct.pack(">IIII", 2051, 2, 28, 28)
...                                                  + imgs.tobytes())
>>> with gzip.open(root / "train-labels-idx1-ubyte.gz", "wb") as f:
...     _ = f.write(struct.pack(">II", 2049, 2) + bytes([7, 3]))
>>> ds = MNIST(root)
>>> len(ds), ds[1][1], ds[0][0].shape, ds[0][0].dtype
(2, 3, (28, 28), dtype('uint8'))
"""

from __future__ import annotations

import gzip
import struct
import zlib
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

__all__ = ["MNIST", "FashionMNIST", "read_idx"]

_IDX_TYPES = {0x08: "u1", 0x09: "i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_STATS_CACHE: dict = {}
_caches.register("MNIST statistics", _STATS_CACHE.clear, _STATS_CACHE.__len__)


def _read(path: Path, nbytes: int | None = None) -> bytes:
    gz = path.name.endswith(".gz")
    try:
        if gz:
            with gzip.open(path, "rb") as f:
                return f.read() if nbytes is None else f.read(nbytes)
        with open(path, "rb") as f:
            return f.read() if nbytes is None else f.read(nbytes)
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise DatasetError(f"{path}: damaged gzip file ({e})") from None
    except OSError as e:
        raise DatasetError(f"{path}: cannot read it ({e.strerror or e})") from None


def _parse_header(
    buf: bytes, path: Path, ndim: int | None
) -> tuple[np.dtype, tuple[int, ...], int]:
    if len(buf) < 4:
        raise DatasetError(f"{path}: truncated IDX file ({len(buf)} bytes, no header)")
    magic = int.from_bytes(buf[:4], "big")
    ndim = buf[3] if ndim is None else ndim
    want = f"0x000008{ndim:02x}"
    if buf[0] or buf[1] or buf[2] not in _IDX_TYPES:
        raise DatasetError(f"{path}: not an IDX file (magic number 0x{magic:08x}, expected {want})")
    if buf[3] != ndim:
        raise DatasetError(
            f"{path}: expected a {ndim}-d IDX array (magic number {want}), "
            f"the header says {buf[3]}-d (0x{magic:08x})"
        )
    head = 4 + 4 * ndim
    if len(buf) < head:
        raise DatasetError(f"{path}: truncated IDX file ({len(buf)} bytes, header incomplete)")
    dims = struct.unpack(f">{ndim}I", buf[4:head])
    return np.dtype(_IDX_TYPES[buf[2]]), dims, head


def read_idx(path: str | Path, ndim: int | None = None) -> np.ndarray:
    """Read an IDX file (``.gz`` or not) into a NumPy array, checking its header and size.

    ``ndim`` is the number of dimensions the file must have (3 for images, 1 for labels).

    >>> import pathlib, struct, tempfile
    >>> from ember.data.datasets.mnist import read_idx
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "labels-idx1-ubyte"
    >>> _ = p.write_bytes(struct.pack(">II", 2049, 3) + bytes([1, 2, 3]))
    >>> read_idx(p, 1)
    array([1, 2, 3], dtype=uint8)
    """
    path = Path(path)
    buf = _read(path)
    dtype, dims, head = _parse_header(buf, path, ndim)
    expected = head + int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
    if len(buf) != expected:
        what = "truncated" if len(buf) < expected else "too long"
        raise DatasetError(
            f"{path}: {what} IDX file: its header says {'x'.join(map(str, dims))} "
            f"({expected} bytes), the file has {len(buf)} bytes"
        )
    arr = np.frombuffer(buf, dtype=dtype, offset=head).reshape(dims)
    return arr.astype(dtype.newbyteorder("="))  # a writable, native-order copy


def _idx_header(path: Path, ndim: int) -> tuple[int, ...]:
    """The dims in a file's header (reads only the header, even from a .gz)."""
    buf = _read(path, 4 + 4 * ndim)
    return _parse_header(buf, path, ndim)[1]


def _names(prefix: str, kind: str) -> list[str]:
    n = 3 if kind == "images" else 1
    bases = [f"{prefix}-{kind}-idx{n}-ubyte", f"{prefix}-{kind}.idx{n}-ubyte"]
    return [b + ext for b in bases for ext in ("", ".gz")]  # plain first: no gunzip


def find_idx_file(folder: Path, prefix: str, kind: str) -> Path | None:
    """``folder``'s IDX file for ``prefix`` ('train' or 't10k') and ``kind`` ('images' or
    'labels'), plain or gzipped (plain preferred), or None.

    >>> import pathlib, tempfile
    >>> from ember.data.datasets.mnist import find_idx_file
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "t10k-labels-idx1-ubyte.gz").write_bytes(b"")
    >>> find_idx_file(d, "t10k", "labels").name, find_idx_file(d, "train", "labels")
    ('t10k-labels-idx1-ubyte.gz', None)
    """
    for name in _names(prefix, kind):
        p = folder / name
        if p.is_file():
            return p
    return None


def find_idx_folder(root: Path, subfolders: tuple[str, ...] = ("MNIST", "FashionMNIST")):
    """The folder under ``root`` (itself, ``raw``, ``<name>/raw``, ``<name>``) holding IDX
    files, or None.

    >>> import pathlib, tempfile
    >>> from ember.data.datasets.mnist import find_idx_folder
    >>> root = pathlib.Path(tempfile.mkdtemp()); (root / "raw").mkdir()
    >>> _ = (root / "raw" / "train-images-idx3-ubyte").write_bytes(b"")
    >>> find_idx_folder(root).name
    'raw'
    """
    cands = [root, root / "raw"]
    for s in subfolders:
        cands += [root / s / "raw", root / s]
    for d in cands:
        if d.is_dir() and any(
            find_idx_file(d, p, k) for p in ("train", "t10k") for k in ("images", "labels")
        ):
            return d
    return None


class MNIST(VisionDataset):
    """The MNIST handwritten digits from IDX files: ``(HxW uint8 array, label)`` samples.

    ``root`` is the folder with the four IDX files (or their ``.gz``), possibly in ``raw/`` or
    ``MNIST/raw/`` below it. ``train`` picks ``train-*`` (60,000) or ``t10k-*`` (10,000).
    ``download=True`` raises: ember fetches nothing from the network.

    ``info.mean``/``info.std`` are the customary constants (MNIST 0.1307/0.3081, Fashion-MNIST
    0.2860/0.3530) when the training images are the standard 60,000 28x28 ones; otherwise they
    are computed exactly from the training images (or, with no training files, from the test
    images) and cached per file for the process.

    >>> import pathlib, struct, tempfile
    >>> from ember.data.datasets import MNIST
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "t10k-images-idx3-ubyte").write_bytes(struct.pack(">IIII", 2051, 1, 2, 2)
    ...                                                  + bytes([0, 255, 255, 0]))
    >>> _ = (root / "t10k-labels-idx1-ubyte").write_bytes(struct.pack(">II", 2049, 1) + b"\\x05")
    >>> ds = MNIST(root, train=False)
    >>> ds[0]
    (array([[  0, 255],
           [255,   0]], dtype=uint8), 5)
    >>> ds.info.mean, ds.info.image_size
    ((0.5,), (2, 2))
    """

    classes = [
        "0 - zero",
        "1 - one",
        "2 - two",
        "3 - three",
        "4 - four",
        "5 - five",
        "6 - six",
        "7 - seven",
        "8 - eight",
        "9 - nine",
    ]
    _info_name = "mnist"
    _standard_stats = ((0.1307,), (0.3081,))

    def __init__(
        self,
        root: str | Path,
        train: bool = True,
        transform: Callable | None = None,
        target_transform: Callable | None = None,
        download: bool = False,
    ) -> None:
        super().__init__(root, bool(train), transform, target_transform)
        name = type(self).__name__
        if download:
            raise no_download(name, root, "the IDX files (train-images-idx3-ubyte.gz etc.)")
        root_path = check_folder(name, root)
        folder = find_idx_folder(root_path, (name,))
        if folder is None:
            raise DatasetError(
                f"{name}: no IDX files in {root_path}: looked for train-images-idx3-ubyte, "
                "train-labels-idx1-ubyte, t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte "
                f"(or .gz) there, in raw/ and in {name}/raw/"
            )
        self.folder = folder
        prefix = "train" if self.train else "t10k"
        self.files = self._split_files(folder, prefix)
        self.data, targets = self._load(*self.files)
        self.targets = targets
        self._labels = targets.tolist()

    def _split_files(self, folder: Path, prefix: str) -> tuple[Path, Path]:
        images = find_idx_file(folder, prefix, "images")
        labels = find_idx_file(folder, prefix, "labels")
        for got, kind in ((images, "images"), (labels, "labels")):
            if got is None:
                split = "training" if prefix == "train" else "test"
                raise DatasetError(
                    f"{type(self).__name__}: {folder} has no {split} {kind}: missing "
                    f"{_names(prefix, kind)[0]} (or .gz)"
                )
        return images, labels

    def _load(self, images_path: Path, labels_path: Path) -> tuple[np.ndarray, np.ndarray]:
        name = type(self).__name__
        images = read_idx(images_path, 3)
        labels = read_idx(labels_path, 1)
        if images.dtype != np.uint8 or labels.dtype != np.uint8:
            bad, arr = (images_path, images) if images.dtype != np.uint8 else (labels_path, labels)
            raise DatasetError(f"{name}: {bad} holds {arr.dtype} data, expected unsigned bytes")
        if len(images) != len(labels):
            raise DatasetError(
                f"{name}: {labels_path} has {len(labels)} labels but {images_path} has "
                f"{len(images)} images"
            )
        labels = labels.astype(np.int64)
        if len(labels) and labels.max() >= len(self.classes):
            i = int(np.argmax(labels >= len(self.classes)))
            raise DatasetError(
                f"{name}: {labels_path}: label {labels[i]} at index {i} is out of range "
                f"0..{len(self.classes) - 1}"
            )
        return images, labels

    def _make_info(self) -> DatasetInfo:
        train_images = find_idx_file(self.folder, "train", "images")
        if train_images is None:  # only a test split: its own statistics
            stats_files, images = self.files[:1], self.data
        else:
            stats_files, images = [train_images], None
        key = (type(self).__name__, file_signature(stats_files))
        stats = _STATS_CACHE.get(key)
        if stats is None:
            if images is None and _idx_header(train_images, 3) == (60000, 28, 28):
                stats = self._standard_stats
            else:
                if images is None:
                    images = self.data if self.train else read_idx(train_images, 3)
                stats = uint8_stats(images)
            _STATS_CACHE[key] = stats
        return DatasetInfo(
            name=self._info_name,
            num_classes=len(self.classes),
            in_channels=1,
            image_size=(int(self.data.shape[1]), int(self.data.shape[2])),
            mean=stats[0],
            std=stats[1],
            classes=tuple(self.classes),
        )


class FashionMNIST(MNIST):
    """Fashion-MNIST (Zalando's clothing images) from IDX files; the same layout as ``MNIST``
    (``root``, ``root/raw`` or ``root/FashionMNIST/raw``).

    >>> from ember.data.datasets import FashionMNIST
    >>> FashionMNIST.classes[:3]
    ['T-shirt/top', 'Trouser', 'Pullover']
    """

    classes = [
        "T-shirt/top",
        "Trouser",
        "Pullover",
        "Dress",
        "Coat",
        "Sandal",
        "Shirt",
        "Sneaker",
        "Bag",
        "Ankle boot",
    ]
    _info_name = "fashion-mnist"
    _standard_stats = ((0.2860,), (0.3530,))
