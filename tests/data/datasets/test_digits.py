import hashlib

import numpy as np
import pytest

from ember.data.datasets import DatasetError, Digits
from ember.data.datasets.digits import BUNDLED


def test_samples():
    ds = Digits()
    img, label = ds[0]
    assert img.dtype == np.float32 and img.shape == (8, 8) and type(label) is int
    raw = np.load(BUNDLED)
    np.testing.assert_array_equal(ds.data * 16, raw["images"][ds.indices])  # exact: level / 16
    assert ds.data.min() == 0.0 and ds.data.max() == 1.0
    assert ds.classes == [str(d) for d in range(10)]


def test_split_stratified_disjoint_complete():
    tr, te = Digits(train=True), Digits(train=False)
    assert (len(tr), len(te)) == (1438, 359)
    assert set(tr.indices.tolist()).isdisjoint(te.indices.tolist())
    assert sorted(tr.indices.tolist() + te.indices.tolist()) == list(range(1797))
    per_class = np.bincount(np.load(BUNDLED)["labels"], minlength=10)
    test_counts = np.bincount(te.targets, minlength=10)
    np.testing.assert_array_equal(test_counts, (per_class + 2) // 5)  # round(n/5) per class
    assert list(tr.indices) == sorted(tr.indices)


def test_split_stable():
    """The split must never change (checkpoints and reported accuracies depend on it)."""
    te = Digits(train=False).indices
    assert te[:8].tolist() == PINNED_FIRST
    assert hashlib.sha256(te.astype("<i8").tobytes()).hexdigest()[:16] == PINNED_HASH
    np.testing.assert_array_equal(Digits(train=False).indices, te)


PINNED_FIRST = [0, 4, 15, 18, 23, 26, 27, 28]
PINNED_HASH = "1cadfec30f8f8124"


def test_info():
    info = Digits(train=False).info
    x = np.load(BUNDLED)["images"][Digits().indices] / 16.0
    assert info == Digits().info
    assert info.mean == pytest.approx((x.mean(),), abs=1e-12)
    assert info.std == pytest.approx((x.std(),), abs=1e-12)
    assert info.image_size == (8, 8) and info.in_channels == 1 and info.num_classes == 10


def test_root_folder_or_file(tmp_path):
    raw = np.load(BUNDLED)
    np.savez(tmp_path / "digits.npz", images=raw["images"][:50], labels=raw["labels"][:50])
    assert len(Digits(tmp_path)) + len(Digits(tmp_path / "digits.npz", train=False)) == 50
    assert "Root location: <bundled>" in repr(Digits())


def test_errors(tmp_path):
    with pytest.raises(DatasetError, match=r"^Digits: no such file: .*digits.npz$"):
        Digits(tmp_path)
    (tmp_path / "bad.npz").write_bytes(b"junk")
    with pytest.raises(DatasetError, match=r"bad.npz is not a readable .npz file"):
        Digits(tmp_path / "bad.npz")
    np.savez(tmp_path / "x.npz", images=np.zeros((2, 8, 8), np.uint8))
    with pytest.raises(DatasetError, match=r"x.npz lacks the array 'labels'"):
        Digits(tmp_path / "x.npz")
    np.savez(tmp_path / "y.npz", images=np.zeros((2, 8, 8)), labels=np.zeros(2))
    with pytest.raises(DatasetError, match=r"holds images float64\[2, 8, 8\].*expected uint8"):
        Digits(tmp_path / "y.npz")
    np.savez(tmp_path / "z.npz", images=np.full((2, 8, 8), 17, np.uint8), labels=np.zeros(2))
    with pytest.raises(DatasetError, match=r"grey levels must be 0..16"):
        Digits(tmp_path / "z.npz")
    np.save(tmp_path / "a.npy", np.zeros(3))
    with pytest.raises(DatasetError, match=r"a.npy is a .npy array, expected an .npz archive"):
        Digits(tmp_path / "a.npy")
    with pytest.raises(DatasetError, match=r"Digits: ember has no network downloads"):
        Digits(download=True)
