"""Write a small, learnable data set in the CIFAR-10 binary format, for GPU checks without
the real CIFAR-10 (no downloads on the device machines).

Each class is noise around its own colour and stripe pattern, so a ResNet-18 learns it within an
epoch; the files are what ``ember.data.datasets.CIFAR10`` reads (``data_batch_1.bin``,
``test_batch.bin``: one label byte, then 3,072 bytes of planar RGB per record).

    python tools/make_cifar_like.py OUT_FOLDER [TRAIN_COUNT [TEST_COUNT]]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


def records(n: int, seed: int) -> bytes:
    """``n`` labelled 3x32x32 images as CIFAR-10 binary records."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    colour = np.linspace(40, 215, 10)[labels][:, None, None, None]
    rows = np.arange(32)[None, None, :, None]
    stripes = 40.0 * np.sin(rows * (1 + labels[:, None, None, None]) / 4)
    planes = np.arange(3)[None, :, None, None] * 30
    images = colour + stripes + planes + rng.normal(0, 25, (n, 3, 32, 32))
    images = np.clip(images, 0, 255).astype(np.uint8).reshape(n, -1)
    return np.concatenate([labels[:, None].astype(np.uint8), images], axis=1).tobytes()


def main(folder: str, n_train: int = 5000, n_test: int = 1000) -> None:
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    (out / "data_batch_1.bin").write_bytes(records(n_train, 1))
    (out / "test_batch.bin").write_bytes(records(n_test, 2))


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:]))
