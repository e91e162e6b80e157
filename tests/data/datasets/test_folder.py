import os

import numpy as np
import pytest

from ember.data.datasets import DatasetError, ImageFolder
from ember.data.datasets._common import stratified_split

from ._files import write_images


def test_read_back_all(tmp_path):
    ref = write_images(tmp_path, {"cat": 2, "dog": 3})
    ds = ImageFolder(tmp_path)
    assert ds.classes == ["cat", "dog"] and ds.class_to_idx == {"cat": 0, "dog": 1}
    assert ds.targets == [0, 0, 1, 1, 1] and len(ds) == 5 and not hasattr(ds, "data")
    assert [os.path.basename(p) for p, _ in ds.samples] == ["000.png", "001.png"] + [
        "000.png",
        "001.png",
        "002.png",
    ]
    for i, (path, label) in enumerate(ds.samples):
        img, y = ds[i]
        assert type(y) is int and y == label
        assert img.dtype == np.uint8 and img.shape == (6, 5, 3)
        np.testing.assert_array_equal(img, ref[path])


def test_grey_images_become_rgb(tmp_path):
    ref = write_images(tmp_path, {"a": 1}, mode="L", size=(2, 3))
    img, _ = ImageFolder(tmp_path)[0]
    assert img.shape == (2, 3, 3)
    np.testing.assert_array_equal(img, next(iter(ref.values())))


def test_extensions_nested_and_hidden(tmp_path):
    write_images(tmp_path, {"a": 1, "b": 1}, ext="PNG")
    (tmp_path / "a" / "notes.txt").write_text("x")
    (tmp_path / ".cache").mkdir()
    nested = tmp_path / "b" / "more"
    nested.mkdir()
    write_images(nested, {"deep": 1})
    ds = ImageFolder(tmp_path)
    assert ds.classes == ["a", "b"] and ds.targets == [0, 1, 1]
    with pytest.raises(DatasetError, match=r"class folder .*a holds no images \(is_valid_file\)"):
        ImageFolder(tmp_path, is_valid_file=lambda p: "deep" in p)
    assert len(ImageFolder(tmp_path, is_valid_file=lambda p: "deep" in p, allow_empty=True)) == 1


def test_train_test_folders(tmp_path):
    write_images(tmp_path / "train", {"a": 3, "b": 2})
    write_images(tmp_path / "test", {"a": 1})
    tr = ImageFolder(tmp_path, train=True)
    te = ImageFolder(tmp_path, train=False)
    assert tr.classes == te.classes == ["a", "b"]
    assert len(tr) == 5 and te.targets == [0] and te.split_folders
    assert "Split: Test" in repr(te)
    # test/ may lack classes, but not have extra ones
    write_images(tmp_path / "test", {"zebra": 1})
    with pytest.raises(DatasetError, match=r"test has class folder 'zebra' that .*train lacks"):
        ImageFolder(tmp_path, train=False)


def test_val_folder(tmp_path):
    write_images(tmp_path / "train", {"a": 2})
    write_images(tmp_path / "val", {"a": 1})
    assert len(ImageFolder(tmp_path, train=False)) == 1
    # without train=, torchvision's behaviour: train and val are the classes
    assert ImageFolder(tmp_path).classes == ["train", "val"]


@pytest.mark.parametrize("layout", ["flat", "train-only"])
def test_fixed_split(tmp_path, layout):
    base = tmp_path / "train" if layout == "train-only" else tmp_path
    write_images(base, {"a": 10, "b": 3, "c": 1})
    tr = ImageFolder(tmp_path, train=True)
    te = ImageFolder(tmp_path, train=False)
    assert not tr.split_folders
    assert len(te) == 2 + 1 + 0 and len(tr) == 8 + 2 + 1
    assert set(tr.samples).isdisjoint(te.samples)
    assert sorted(tr.samples + te.samples) == sorted(ImageFolder(base).samples)
    assert tr.samples == sorted(tr.samples)  # ordered by class, then path
    # stable: the same on every call and independent of where the folder is
    again = ImageFolder(tmp_path, train=False)
    assert again.samples == te.samples
    keys = [os.path.basename(p) for p, _ in ImageFolder(base).samples]
    _, ti = stratified_split(ImageFolder(base).targets, ["a", "b", "c"], keys)
    assert [os.path.basename(p) for p, _ in te.samples] == [keys[i] for i in ti]


def test_info(tmp_path):
    write_images(tmp_path, {"a": 3, "b": 2}, size=(4, 7))
    info = ImageFolder(tmp_path, train=True).info
    ds = ImageFolder(tmp_path, train=True)
    x = np.stack([ds[i][0] for i in range(len(ds))]) / 255.0
    assert info.name == "imagefolder" and info.num_classes == 2 and info.in_channels == 3
    assert info.image_size == (4, 7) and info.classes == ("a", "b")
    assert info.mean == pytest.approx(tuple(x.mean(axis=(0, 1, 2))), abs=1e-12)
    assert info.std == pytest.approx(tuple(x.std(axis=(0, 1, 2))), abs=1e-12)
    assert ImageFolder(tmp_path, train=False).info == info  # training statistics for both


def test_info_with_split_folders(tmp_path):
    write_images(tmp_path / "train", {"a": 2}, size=(3, 3))
    write_images(tmp_path / "test", {"a": 1}, size=(5, 5))
    info = ImageFolder(tmp_path, train=False).info
    assert info.image_size == (3, 3) and info == ImageFolder(tmp_path, train=True).info


def test_info_follows_a_custom_loader(tmp_path):
    write_images(tmp_path, {"a": 2}, size=(4, 4))
    plain = ImageFolder(tmp_path, train=True).info
    half = ImageFolder(tmp_path, train=True, loader=lambda p: np.zeros((2, 2, 3), np.uint8)).info
    assert plain.image_size == (4, 4) and half.image_size == (2, 2)
    assert half.mean == (0.0, 0.0, 0.0) != plain.mean


def test_custom_loader_and_transforms(tmp_path):
    write_images(tmp_path, {"a": 1})
    ds = ImageFolder(tmp_path, transform=len, loader=lambda p: p, target_transform=str)
    assert ds[0] == (len(ds.samples[0][0]), "0")


# -- errors -----------------------------------------------------------------------------------


def test_errors(tmp_path):
    with pytest.raises(DatasetError, match=r"^ImageFolder: no such folder"):
        ImageFolder(tmp_path / "none")
    with pytest.raises(DatasetError, match=r"has no class sub-folders \(expected one sub-folder"):
        ImageFolder(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with pytest.raises(
        DatasetError, match=r"class folder .*a \(and 1 more\) holds no images \(.jpg"
    ):
        ImageFolder(tmp_path)
    with pytest.raises(DatasetError, match=r"ImageFolder: ember has no network downloads"):
        ImageFolder(tmp_path, download=True)


def test_unreadable_image(tmp_path):
    write_images(tmp_path, {"a": 1})
    bad = tmp_path / "a" / "broken.jpg"
    bad.write_bytes(b"not a jpeg")
    ds = ImageFolder(tmp_path)
    with pytest.raises(DatasetError, match=r"^ImageFolder: cannot read image .*broken.jpg \(") as e:
        ds[1]
    assert "\n" not in str(e.value)
    png = tmp_path / "a" / "000.png"
    png.write_bytes(png.read_bytes()[:60])  # truncated
    with pytest.raises(DatasetError, match=r"cannot read image .*000.png"):
        ds[0]
