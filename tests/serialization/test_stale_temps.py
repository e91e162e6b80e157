"""Temp files of killed saves are removed by a later save to the same path, never a live one's."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import ember
from ember.serialization import atomic

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals and flock")

_CHILD = textwrap.dedent(
    """
    import sys, time
    import ember
    from ember.serialization import safetensors as st

    real = st._write_array

    def slow(f, arr):
        real(f, arr)
        f.flush()
        print("writing", flush=True)
        time.sleep(float(sys.argv[2]))

    st._write_array = slow
    ember.save({"w": ember.zeros(1000), "b": ember.zeros(10)}, sys.argv[1])
    print("done", flush=True)
    """
)


def _start_writer(path, sleep):
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path), str(sleep)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert proc.stdout.readline().strip() == "writing"
    return proc


def _temps(folder):
    return sorted(n for n in os.listdir(folder) if n.endswith(".tmp"))


@posix_only
def test_save_killed_mid_write_then_a_later_save_cleans_its_temp(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    ember.save({"w": ember.ones(3)}, path)
    before = path.read_bytes()
    for _ in range(3):
        proc = _start_writer(path, 60)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        # what a killed save leaves (each new writer removed the one killed before it)
        assert len(_temps(tmp_path)) == 1
    assert path.read_bytes() == before  # the old checkpoint is untouched
    ember.save({"w": ember.full((3,), 2.0)}, path)
    assert _temps(tmp_path) == []
    assert ember.load(path)["w"].tolist() == [2.0, 2.0, 2.0]


@posix_only
def test_a_live_writers_temp_is_never_removed(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    proc = _start_writer(path, 3)
    try:
        (live,) = _temps(tmp_path)
        os.utime(tmp_path / live, (0, 0))  # even when it looks old
        ember.save({"w": ember.ones(1)}, path)  # another writer to the same path
        assert _temps(tmp_path) == [live]
        assert proc.stdout.readline().strip() == "writing"
        assert proc.stdout.readline().strip() == "done"
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == 0 and _temps(tmp_path) == []
    assert ember.load(path)["w"].shape == (1000,)  # the slow writer renamed last


def test_an_open_atomic_write_in_this_process_keeps_its_temp(tmp_path):
    path = tmp_path / "f.bin"
    with atomic.atomic_write(path) as f:
        f.write(b"x")
        (live,) = _temps(tmp_path)
        os.utime(tmp_path / live, (0, 0))
        assert atomic.remove_stale_temps(path) == []
        with atomic.atomic_write(path) as g:  # a nested write to the same path
            g.write(b"inner")
        assert _temps(tmp_path) == [live]
    assert path.read_bytes() == b"x" and _temps(tmp_path) == []


def _touch(folder, name, age=0.0):
    p = folder / name
    p.write_bytes(b"partial")
    if age:
        t = time.time() - age
        os.utime(p, (t, t))
    return name


def test_which_temps_are_stale(tmp_path):
    host, me = atomic._HOST, os.getpid()
    dead = 2**22 + 12345  # above the default pid_max: no such process
    day = atomic.UNLOCKED_MAX_AGE_S
    removed = {
        _touch(tmp_path, f".c.pt.{host}-{dead}.abcdefgh.tmp"),  # its writer is gone
        _touch(tmp_path, f".c.pt.0badc0de-{me}.abcdefgh.tmp", 2 * atomic.GRACE_S),  # old
        _touch(tmp_path, ".c.pt.k2j_0x9q.tmp", 2 * day),  # an older ember's, a day old
    }
    kept = {
        _touch(tmp_path, f".c.pt.{host}-{me}.abcdefgh.tmp"),  # a live pid, just created
        _touch(tmp_path, f".c.pt.0badc0de-{dead}.abcdefgh.tmp"),  # another host's, new
        _touch(tmp_path, ".c.pt.k2j_0x9q.tmp".replace("k2j", "k2k")),  # older ember's, new
        _touch(tmp_path, f".other.pt.{host}-{dead}.abcdefgh.tmp", 2 * day),  # another target
        _touch(tmp_path, f".c.pt.x.{host}-{dead}.abcdefgh.tmp", 2 * day),  # target "c.pt.x"
        _touch(tmp_path, f".c.pt.{host}-{dead}.ABCDEFGH.tmp", 2 * day),  # not mkstemp's
        _touch(tmp_path, f"c.pt.{host}-{dead}.abcdefgh.tmp", 2 * day),  # not hidden
        _touch(tmp_path, f".c.pt.{host}-{dead}.abcdefgh.tmp.bak", 2 * day),
        _touch(tmp_path, "c.pt", 2 * day),
    }
    if os.name == "posix":
        os.symlink(tmp_path / "c.pt", tmp_path / f".c.pt.{host}-{dead}.linkxxxx.tmp")
        kept.add(f".c.pt.{host}-{dead}.linkxxxx.tmp")
        os.mkdir(tmp_path / f".c.pt.{host}-{dead}.folderxx.tmp")
        kept.add(f".c.pt.{host}-{dead}.folderxx.tmp")
    got = {os.path.basename(p) for p in atomic.remove_stale_temps(tmp_path / "c.pt")}
    assert got == removed
    assert set(os.listdir(tmp_path)) == kept


def test_plot_writer_cleans_its_stale_temps(tmp_path):
    pytest.importorskip("matplotlib")
    from ember.utils.plot import plot_history

    stale = _touch(tmp_path, f".curves.png.{atomic._HOST}-{2**22 + 7}.abcdefgh.tmp")
    old = _touch(tmp_path, ".curves.png.zzzzzzzz.tmp", 2 * atomic.UNLOCKED_MAX_AGE_S)
    plot_history({"train_loss": [1.0, 0.5]}, tmp_path / "curves.png")
    assert stale not in os.listdir(tmp_path) and old not in os.listdir(tmp_path)
    assert os.listdir(tmp_path) == ["curves.png"]
