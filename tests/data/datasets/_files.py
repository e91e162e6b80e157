"""Writers for tiny dataset files in each format, for the dataset tests."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np

CIFAR_NAMES = [
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


def idx_bytes(arr: np.ndarray, code: int = 0x08) -> bytes:
    head = struct.pack(">BBBB", 0, 0, code, arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape)
    return head + arr.tobytes()


def write(path: Path, data: bytes, gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if gz:
        path = path.with_name(path.name + ".gz")
        with gzip.open(path, "wb") as f:
            f.write(data)
    else:
        path.write_bytes(data)
    return path


def mnist_arrays(n: int, seed: int, h: int = 28, w: int = 28):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, h, w), dtype=np.uint8), rng.integers(0, 10, n).astype(np.uint8)


def write_mnist(folder: Path, gz: bool = False, n_train: int = 5, n_test: int = 3, h=28, w=28):
    """Both splits in ``folder``; returns {split: (images, labels)}."""
    out = {}
    for prefix, n, seed in (("train", n_train, 1), ("t10k", n_test, 2)):
        if n is None:
            continue
        images, labels = mnist_arrays(n, seed, h, w)
        write(folder / f"{prefix}-images-idx3-ubyte", idx_bytes(images), gz)
        write(folder / f"{prefix}-labels-idx1-ubyte", idx_bytes(labels), gz)
        out[prefix] = (images, labels)
    return out


def cifar_records(n: int, seed: int):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
    labels = rng.integers(0, 10, n).astype(np.uint8)
    rec = np.concatenate([labels[:, None], images.transpose(0, 3, 1, 2).reshape(n, -1)], axis=1)
    return images, labels, rec.astype(np.uint8).tobytes()


def write_cifar(folder: Path, train_counts=(3,), n_test: int = 3, meta: bool = True):
    """``data_batch_k.bin`` with ``train_counts[k-1]`` records each, ``test_batch.bin``."""
    folder.mkdir(parents=True, exist_ok=True)
    train_imgs, train_labels = [], []
    for k, n in enumerate(train_counts, 1):
        images, labels, raw = cifar_records(n, 10 + k)
        (folder / f"data_batch_{k}.bin").write_bytes(raw)
        train_imgs.append(images)
        train_labels.append(labels)
    out = (
        {"train": (np.concatenate(train_imgs), np.concatenate(train_labels))}
        if train_counts
        else {}
    )
    if n_test:
        images, labels, raw = cifar_records(n_test, 99)
        (folder / "test_batch.bin").write_bytes(raw)
        out["test"] = (images, labels)
    if meta:
        (folder / "batches.meta.txt").write_text("\n".join(CIFAR_NAMES) + "\n\n")
    return out


def write_images(folder: Path, counts: dict, size=(6, 5), mode="RGB", ext="png"):
    """``folder/<class>/<i>.<ext>``: image i of class c filled with value 10*c + i (per channel
    offsets in RGB). Returns {path: array as ImageFolder reads it (RGB)}."""
    from PIL import Image

    out = {}
    for c, (name, n) in enumerate(sorted(counts.items())):
        d = folder / name
        d.mkdir(parents=True, exist_ok=True)
        for i in range(n):
            v = 10 * c + i
            h, w = size
            if mode == "RGB":
                arr = np.zeros((h, w, 3), dtype=np.uint8) + np.array([v, v + 1, v + 2], np.uint8)
                arr[0, 0] = (200, 100, 50)
            else:
                arr = np.full((h, w), v, dtype=np.uint8)
            p = d / f"{i:03d}.{ext}"
            Image.fromarray(arr).save(p)
            out[str(p)] = arr if arr.ndim == 3 else np.repeat(arr[..., None], 3, axis=2)
    return out
