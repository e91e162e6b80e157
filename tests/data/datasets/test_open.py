import numpy as np
import pytest

import ember
from ember.data import DataLoader
from ember.data.datasets import (
    CIFAR10,
    MNIST,
    DatasetError,
    DatasetInfo,
    Digits,
    FashionMNIST,
    ImageFolder,
    detect_format,
    open_dataset,
)
from ember.data.transforms import Compose, Normalize, ToTensor

from ._files import write_cifar, write_images, write_mnist


def test_digits():
    ds, info = open_dataset("digits")
    assert isinstance(ds, Digits) and ds.train and isinstance(info, DatasetInfo)
    ds, info2 = open_dataset(" Digits ", train=False, transform=ToTensor())
    assert len(ds) == 359 and info2 == info and ds[0][0].shape == (1, 8, 8)


@pytest.mark.parametrize(
    "where, cls, name",
    [
        ("mnist", MNIST, "mnist"),
        ("data/raw", MNIST, "mnist"),
        ("data/MNIST/raw", MNIST, "mnist"),
        ("fashion", FashionMNIST, "fashion-mnist"),
        ("data/FashionMNIST/raw", FashionMNIST, "fashion-mnist"),
        ("my-Fashion-set/raw", FashionMNIST, "fashion-mnist"),
    ],
)
def test_idx_detection(tmp_path, where, cls, name):
    write_mnist(tmp_path / where, gz=True, n_train=2, n_test=1)
    root = tmp_path / where.split("/")[0]
    assert detect_format(root) == name
    ds, info = open_dataset(root, train=False)
    assert type(ds) is cls and len(ds) == 1 and info.name == name
    assert info.classes == tuple(cls.classes) and info.image_size == (28, 28)


@pytest.mark.parametrize("sub", ["", "cifar-10-batches-bin"])
def test_cifar_detection(tmp_path, sub):
    write_cifar(tmp_path / sub if sub else tmp_path, train_counts=(3,), n_test=2)
    assert detect_format(tmp_path) == "cifar10"
    ds, info = open_dataset(str(tmp_path))
    assert type(ds) is CIFAR10 and len(ds) == 3 and info.in_channels == 3


def test_imagefolder_detection(tmp_path):
    write_images(tmp_path / "flat", {"a": 5, "b": 5})
    write_images(tmp_path / "split" / "train", {"a": 2})
    write_images(tmp_path / "split" / "val", {"a": 1})
    assert detect_format(tmp_path / "flat") == detect_format(tmp_path / "split") == "imagefolder"
    ds, info = open_dataset(tmp_path / "flat")
    assert type(ds) is ImageFolder and len(ds) == 8 and info.classes == ("a", "b")
    assert len(open_dataset(tmp_path / "flat", train=False)[0]) == 2
    assert len(open_dataset(tmp_path / "split", train=False)[0]) == 1


def test_errors(tmp_path):
    with pytest.raises(DatasetError, match=r"^open_dataset: no such folder: .*nothing$"):
        open_dataset(tmp_path / "nothing")
    with pytest.raises(
        DatasetError, match=r"no folder 'mnist', and ember has no network downloads"
    ):
        open_dataset("mnist")
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(DatasetError, match=r"f.txt is a file, expected a dataset folder"):
        open_dataset(tmp_path / "f.txt")
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    with pytest.raises(
        DatasetError,
        match=r"holds no dataset ember can read; looked for MNIST.*CIFAR-10.*image folder",
    ) as e:
        open_dataset(tmp_path / "empty")
    assert "\n" not in str(e.value)
    py = tmp_path / "cifar-10-batches-py"
    py.mkdir()
    (py / "data_batch_1").write_bytes(b"")
    with pytest.raises(DatasetError, match=r"pickled \(python\) version of CIFAR"):
        open_dataset(tmp_path)
    with pytest.raises(DatasetError, match=r"expected 'digits' or a folder, got int"):
        open_dataset(3)


def test_through_dataloader():
    info = open_dataset("digits")[1]
    ds, _ = open_dataset("digits", transform=Compose([ToTensor(), Normalize(info.mean, info.std)]))
    x, y = next(iter(DataLoader(ds, batch_size=16)))
    assert x.shape == (16, 1, 8, 8) and x.dtype == ember.float32 and y.dtype == ember.int64
    assert y.tolist() == ds.targets[:16].tolist()


def test_normalized_training_set_is_standardized():
    _, info = open_dataset("digits")
    ds = Digits(transform=Compose([ToTensor(), Normalize(info.mean, info.std)]))
    x = np.stack([ds[i][0].numpy() for i in range(len(ds))]).astype(np.float64)
    assert abs(x.mean()) < 1e-5 and abs(x.std() - 1) < 1e-5


def test_pickle_round_trip(tmp_path):
    """Process workers pickle the dataset with its transforms."""
    import pickle

    write_images(tmp_path, {"a": 2})
    t = Compose([ToTensor(), Normalize((0.5,), (0.5,))])
    for ds in (Digits(transform=t), ImageFolder(tmp_path, transform=t)):
        ds.info  # noqa: B018  (caches inside)
        back = pickle.loads(pickle.dumps(ds))
        np.testing.assert_array_equal(back[0][0].numpy(), ds[0][0].numpy())
        assert back.info == ds.info
