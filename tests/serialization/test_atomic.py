"""Saving to a path is atomic: a failure midway leaves the old file intact and no temp file."""

import os
import stat

import numpy as np
import pytest

import ember
from ember.serialization import atomic
from ember.serialization import safetensors as st


def _fail_after(monkeypatch, k, exc=None):
    """Make the writer raise after ``k`` tensors' bytes were written."""
    exc = OSError("disk full") if exc is None else exc
    real, calls = st._write_array, []

    def flaky(f, arr):
        if len(calls) >= k:
            raise exc
        calls.append(1)
        real(f, arr)

    monkeypatch.setattr(st, "_write_array", flaky)


@pytest.mark.parametrize("exc", [OSError("disk full"), KeyboardInterrupt()], ids=repr)
def test_crash_mid_save_keeps_old_file_and_leaves_no_temp(exc, tmp_path, monkeypatch):
    path = tmp_path / "ckpt.safetensors"
    ember.save({"w": ember.ones(3), "epoch": 1}, path)
    before = path.read_bytes()
    _fail_after(monkeypatch, 1, exc)
    with pytest.raises(type(exc)):
        ember.save({"w": ember.zeros(3), "b": ember.zeros(1000), "epoch": 2}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]
    assert ember.load(path)["epoch"] == 1


def test_crash_on_first_save_leaves_nothing(tmp_path, monkeypatch):
    _fail_after(monkeypatch, 0)
    with pytest.raises(OSError, match="disk full"):
        ember.save({"w": ember.ones(3)}, tmp_path / "new.safetensors")
    assert os.listdir(tmp_path) == []


def test_save_fsyncs_file_and_folder_then_replaces(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(
        os,
        "replace",
        lambda a, b: (events.append(("replace", os.path.dirname(a))), real_replace(a, b))[1],
    )
    ember.save({"w": ember.ones(3)}, tmp_path / "c.safetensors")
    assert events == ["fsync", ("replace", str(tmp_path)), "fsync"]


def test_unserializable_object_never_touches_the_old_file(tmp_path):
    path = tmp_path / "c.safetensors"
    ember.save({"w": ember.ones(1)}, path)
    before = path.read_bytes()
    with pytest.raises(ember.CheckpointError):
        ember.save({"w": ember.ones(1), "bad": lambda: 0}, path)  # pickle refuses a lambda
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["c.safetensors"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_permissions_follow_umask_and_are_kept_on_overwrite(tmp_path):
    path = tmp_path / "c.safetensors"
    old = os.umask(0o027)
    try:
        ember.save({"w": ember.ones(1)}, path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    os.chmod(path, 0o604)
    ember.save({"w": ember.ones(1)}, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o604


def test_atomic_write_cleans_up_on_error(tmp_path):
    with pytest.raises(ValueError), atomic.atomic_write(tmp_path / "x") as f:
        f.write(b"partial")
        raise ValueError("boom")
    assert os.listdir(tmp_path) == []


def test_missing_folder_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        ember.save({"w": ember.ones(1)}, tmp_path / "nope" / "c.safetensors")


def test_megabyte_tensor_round_trip(tmp_path):
    a = np.arange(1 << 20, dtype=np.float32)
    ember.save({"a": ember.from_numpy(a)}, tmp_path / "big.safetensors")
    np.testing.assert_array_equal(ember.load(tmp_path / "big.safetensors")["a"].numpy(), a)
