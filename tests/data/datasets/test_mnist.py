import gzip
import re
import struct

import numpy as np
import pytest

from ember.data.datasets import MNIST, DatasetError, FashionMNIST
from ember.data.datasets.mnist import read_idx

from ._files import idx_bytes, write, write_mnist


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("sub", ["", "raw", "MNIST/raw"])
def test_read_back_exactly(tmp_path, gz, sub):
    ref = write_mnist(tmp_path / sub if sub else tmp_path, gz=gz)
    for train, key in ((True, "train"), (False, "t10k")):
        ds = MNIST(tmp_path, train=train)
        images, labels = ref[key]
        assert len(ds) == len(labels)
        assert ds.data.dtype == np.uint8 and ds.data.shape == images.shape
        np.testing.assert_array_equal(ds.data, images)
        assert list(ds.targets) == labels.tolist()
        for i in range(len(ds)):
            img, label = ds[i]
            assert type(label) is int and label == labels[i]
            assert img.dtype == np.uint8 and img.shape == (28, 28)
            np.testing.assert_array_equal(img, images[i])
        assert ds.data.flags.writeable


def test_fashion_layout_and_classes(tmp_path):
    ref = write_mnist(tmp_path / "FashionMNIST" / "raw", gz=True)
    ds = FashionMNIST(tmp_path)
    np.testing.assert_array_equal(ds.data, ref["train"][0])
    assert ds.classes[0] == "T-shirt/top" and ds.class_to_idx["Ankle boot"] == 9
    assert ds.info.name == "fashion-mnist"
    with pytest.raises(DatasetError, match=r"MNIST: no IDX files in .*looked for"):
        MNIST(tmp_path)  # MNIST looks in MNIST/raw, not FashionMNIST/raw


def test_kaggle_names_and_plain_preferred(tmp_path):
    images = np.arange(2 * 4 * 4, dtype=np.uint8).reshape(2, 4, 4)
    write(tmp_path / "train-images.idx3-ubyte", idx_bytes(images))
    write(tmp_path / "train-labels.idx1-ubyte", idx_bytes(np.array([3, 4], np.uint8)))
    ds = MNIST(tmp_path)
    assert ds._labels == [3, 4] and ds[1][0].shape == (4, 4)
    # a plain file wins over a damaged .gz copy next to it
    write(tmp_path / "train-images-idx3-ubyte.gz", b"junk")
    write(tmp_path / "train-images-idx3-ubyte", idx_bytes(images))
    assert len(MNIST(tmp_path)) == 2


def test_transforms_applied(tmp_path):
    write_mnist(tmp_path, n_train=2)
    ds = MNIST(tmp_path, transform=lambda x: x.sum(), target_transform=lambda y: -y - 1)
    img, label = ds[0]
    assert img == ds.data[0].sum() and label == -int(ds.targets[0]) - 1


def test_info_computed_and_standard(tmp_path):
    ref = write_mnist(tmp_path, n_train=4, n_test=2, h=3, w=5)
    images = ref["train"][0] / 255.0
    for train in (True, False):  # the test split's info has the *training* statistics
        info = MNIST(tmp_path, train=train).info
        assert info.name == "mnist" and info.num_classes == 10 and info.in_channels == 1
        assert info.image_size == (3, 5) and info.classes[1] == "1 - one"
        assert info.mean == pytest.approx((images.mean(),), abs=1e-12)
        assert info.std == pytest.approx((images.std(),), abs=1e-12)
    # the standard 60,000 x 28 x 28 training set gets the customary constants (header only read)
    std_dir = tmp_path / "std"
    write(std_dir / "train-images-idx3-ubyte", struct.pack(">IIII", 2051, 60000, 28, 28))
    write_mnist(std_dir, n_train=None, n_test=2)
    info = MNIST(std_dir, train=False).info
    assert info.mean == (0.1307,) and info.std == (0.3081,)


def test_info_test_split_only(tmp_path):
    ref = write_mnist(tmp_path, n_train=None, n_test=3, h=2, w=2)
    assert MNIST(tmp_path, train=False).info.mean == pytest.approx((ref["t10k"][0].mean() / 255,))
    with pytest.raises(DatasetError, match=r"has no training images: missing train-images"):
        MNIST(tmp_path, train=True)


def test_repr(tmp_path):
    write_mnist(tmp_path, n_train=2)
    text = repr(MNIST(tmp_path, transform=abs))
    assert text.splitlines()[:2] == ["Dataset MNIST", "    Number of datapoints: 2"]
    assert "Split: Train" in text and "Transform: <built-in function abs>" in text


def test_read_idx_dtypes(tmp_path):
    arr = np.arange(6, dtype=">i4").reshape(2, 3)
    p = write(tmp_path / "x-idx2", idx_bytes(arr, 0x0C))
    got = read_idx(p)
    assert got.dtype == np.int32 and got.dtype.isnative
    np.testing.assert_array_equal(got, arr)


# -- errors -----------------------------------------------------------------------------------


def _err(tmp_path, match):
    with pytest.raises(DatasetError, match=match) as info:
        MNIST(tmp_path)
    assert "\n" not in str(info.value)


def test_missing_folder(tmp_path):
    with pytest.raises(DatasetError, match=r"^MNIST: no such folder: .*nope$"):
        MNIST(tmp_path / "nope")
    f = write(tmp_path / "file", b"")
    with pytest.raises(DatasetError, match=r"is a file, expected a folder"):
        MNIST(f)


def test_no_files(tmp_path):
    _err(tmp_path, r"no IDX files in .*train-images-idx3-ubyte.*raw/")


def test_download_refused(tmp_path):
    with pytest.raises(DatasetError, match=r"MNIST: ember has no network downloads.*put the IDX"):
        MNIST(tmp_path, download=True)


def test_bad_magic(tmp_path):
    write_mnist(tmp_path, n_train=2)
    write(tmp_path / "train-images-idx3-ubyte", b"\x12\x34\x56\x78" + bytes(100))
    _err(tmp_path, re.escape("train-images-idx3-ubyte: not an IDX file (magic number 0x12345678"))


def test_wrong_ndim(tmp_path):
    write_mnist(tmp_path, n_train=2)
    write(tmp_path / "train-images-idx3-ubyte", idx_bytes(np.zeros((2, 4), np.uint8)))
    _err(tmp_path, r"expected a 3-d IDX array \(magic number 0x00000803\), the header says 2-d")


@pytest.mark.parametrize("gz", [False, True])
def test_truncated(tmp_path, gz):
    write_mnist(tmp_path, n_train=2, gz=gz)
    data = idx_bytes(np.zeros((2, 28, 28), np.uint8))[:-10]
    write(tmp_path / "train-images-idx3-ubyte", data, gz=gz)
    _err(tmp_path, r"truncated IDX file: its header says 2x28x28 \(1584 bytes\), the file has 1574")
    write(tmp_path / "train-images-idx3-ubyte", data[:10], gz=gz)
    _err(tmp_path, r"truncated IDX file \(10 bytes, header incomplete\)")
    write(tmp_path / "train-images-idx3-ubyte", idx_bytes(np.zeros((2, 28, 28), np.uint8)) + b"x")
    _err(tmp_path, r"too long IDX file")


def test_damaged_gzip(tmp_path):
    write_mnist(tmp_path, n_train=2, gz=True)
    (tmp_path / "train-labels-idx1-ubyte.gz").write_bytes(b"not gzip at all")
    _err(tmp_path, r"train-labels-idx1-ubyte.gz: damaged gzip file")
    raw = gzip.compress(idx_bytes(np.zeros(2, np.uint8)))
    (tmp_path / "train-labels-idx1-ubyte.gz").write_bytes(raw[: len(raw) // 2])
    _err(tmp_path, r"train-labels-idx1-ubyte.gz: damaged gzip file")


def test_count_mismatch_and_bad_labels(tmp_path):
    write_mnist(tmp_path, n_train=3)
    write(tmp_path / "train-labels-idx1-ubyte", idx_bytes(np.zeros(2, np.uint8)))
    _err(
        tmp_path, r"train-labels-idx1-ubyte has 2 labels but .*train-images-idx3-ubyte has 3 images"
    )
    write(tmp_path / "train-labels-idx1-ubyte", idx_bytes(np.array([1, 12, 0], np.uint8)))
    _err(tmp_path, r"label 12 at index 1 is out of range 0..9")
    write(tmp_path / "train-labels-idx1-ubyte", idx_bytes(np.zeros(3, ">i4"), 0x0C))
    _err(tmp_path, r"holds int32 data, expected unsigned bytes")
