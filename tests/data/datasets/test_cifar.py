import numpy as np
import pytest

from ember.data.datasets import CIFAR10, DatasetError

from ._files import CIFAR_NAMES, cifar_records, write_cifar


@pytest.mark.parametrize("sub", ["", "cifar-10-batches-bin"])
def test_read_back_exactly(tmp_path, sub):
    ref = write_cifar(tmp_path / sub if sub else tmp_path, train_counts=(3,), n_test=3)
    for train, key in ((True, "train"), (False, "test")):
        ds = CIFAR10(tmp_path, train=train)
        images, labels = ref[key]
        assert len(ds) == 3 and ds.data.shape == (3, 32, 32, 3) and ds.data.dtype == np.uint8
        np.testing.assert_array_equal(ds.data, images)
        assert list(ds.targets) == labels.tolist()
        for i in range(3):
            img, label = ds[i]
            assert type(label) is int and label == labels[i]
            np.testing.assert_array_equal(img, images[i])


def test_record_layout_by_hand(tmp_path):
    # label, then the red plane, the green plane, the blue plane, each row-major
    rec = np.zeros(3073, np.uint8)
    rec[0] = 7
    rec[1 + 0 * 1024 + 1 * 32 + 2] = 11  # R at row 1, col 2
    rec[1 + 1 * 1024 + 1 * 32 + 2] = 22  # G
    rec[1 + 2 * 1024 + 31 * 32 + 0] = 33  # B at row 31, col 0
    (tmp_path / "test_batch.bin").write_bytes(rec.tobytes())
    img, label = CIFAR10(tmp_path, train=False)[0]
    assert label == 7 and img[1, 2].tolist() == [11, 22, 0] and img[31, 0].tolist() == [0, 0, 33]
    assert img.sum() == 66


def test_several_batches_in_numeric_order(tmp_path):
    ref = write_cifar(tmp_path, train_counts=(1, 2, 1, 1, 1, 1, 1, 1, 1, 2), n_test=0)
    ds = CIFAR10(tmp_path)
    assert [p.name for p in ds.files][:3] == [
        "data_batch_1.bin",
        "data_batch_2.bin",
        "data_batch_3.bin",
    ]
    assert ds.files[-1].name == "data_batch_10.bin"
    np.testing.assert_array_equal(ds.data, ref["train"][0])
    with pytest.raises(DatasetError, match=r"has no test batch \(test_batch.bin\)"):
        CIFAR10(tmp_path, train=False)


def test_classes_from_meta(tmp_path):
    write_cifar(tmp_path, meta=False)
    assert CIFAR10(tmp_path).classes == CIFAR_NAMES
    (tmp_path / "batches.meta.txt").write_text("\n".join(f"c{i}" for i in range(10)) + "\n")
    ds = CIFAR10(tmp_path)
    assert ds.classes[3] == "c3" and ds.class_to_idx["c9"] == 9 and CIFAR10.classes[3] == "cat"
    assert ds.info.classes[3] == "c3"


def test_info(tmp_path):
    ref = write_cifar(tmp_path, train_counts=(2, 1), n_test=1)
    x = ref["train"][0] / 255.0
    for train in (True, False):
        info = CIFAR10(tmp_path, train=train).info
        assert info.name == "cifar10" and info.num_classes == 10 and info.in_channels == 3
        assert info.image_size == (32, 32)
        assert info.mean == pytest.approx(tuple(x.mean(axis=(0, 1, 2))), abs=1e-12)
        assert info.std == pytest.approx(tuple(x.std(axis=(0, 1, 2))), abs=1e-12)


def test_info_standard_constants(tmp_path, monkeypatch):
    import ember.data.datasets.cifar as cifar

    write_cifar(tmp_path, train_counts=(1, 1, 1, 1, 1), n_test=1)
    monkeypatch.setattr(cifar, "_STANDARD_BATCH_BYTES", 3073)  # pretend 1 record is a full batch
    info = CIFAR10(tmp_path, train=False).info
    assert info.mean == (0.4914, 0.4822, 0.4465) and info.std == (0.2470, 0.2435, 0.2616)


# -- errors -----------------------------------------------------------------------------------


def test_missing_and_empty(tmp_path):
    with pytest.raises(DatasetError, match=r"^CIFAR10: no such folder"):
        CIFAR10(tmp_path / "x")
    with pytest.raises(DatasetError, match=r"no CIFAR-10 binary batches in .*data_batch_1.bin"):
        CIFAR10(tmp_path)
    with pytest.raises(DatasetError, match=r"CIFAR10: ember has no network downloads"):
        CIFAR10(tmp_path, download=True)


def test_pickled_version_refused(tmp_path):
    py = tmp_path / "cifar-10-batches-py"
    py.mkdir()
    (py / "data_batch_1").write_bytes(b"\x80\x04")
    (py / "batches.meta").write_bytes(b"\x80\x04")
    with pytest.raises(DatasetError, match=r"pickled \(python\) version of CIFAR.*binary version"):
        CIFAR10(tmp_path)


@pytest.mark.parametrize("size", [0, 3072, 3074, 2 * 3073 - 1])
def test_wrong_size(tmp_path, size):
    write_cifar(tmp_path)
    (tmp_path / "data_batch_1.bin").write_bytes(bytes(size))
    with pytest.raises(
        DatasetError, match=rf"data_batch_1.bin has {size} bytes, not a whole number of 3073-byte"
    ):
        CIFAR10(tmp_path)


def test_label_out_of_range(tmp_path):
    write_cifar(tmp_path, train_counts=(2, 2))
    raw = bytearray(cifar_records(2, 0)[2])
    raw[3073] = 10
    (tmp_path / "data_batch_2.bin").write_bytes(bytes(raw))
    with pytest.raises(
        DatasetError, match=r"data_batch_2.bin: record 1 has label 10, out of range 0..9"
    ):
        CIFAR10(tmp_path)


def test_empty_meta(tmp_path):
    write_cifar(tmp_path)
    (tmp_path / "batches.meta.txt").write_text("\n\n")
    with pytest.raises(DatasetError, match=r"batches.meta.txt lists no class names"):
        CIFAR10(tmp_path)


def test_index_error(tmp_path):
    write_cifar(tmp_path)
    ds = CIFAR10(tmp_path)
    assert ds[-1][1] == ds._labels[-1]
    with pytest.raises(IndexError, match=r"CIFAR10: index 3 is out of range for a dataset of 3"):
        ds[3]
