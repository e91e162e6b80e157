"""The tree stays ruff-clean (lint and format), as the project's style asks."""

import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
ruff = shutil.which("ruff")


@pytest.mark.skipif(ruff is None, reason="ruff is not installed (it comes with the test extra)")
@pytest.mark.parametrize("args", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff_is_clean(args):
    done = subprocess.run(
        [ruff, *args, "ember", "tests", "benchmarks"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
