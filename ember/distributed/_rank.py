"""One rank of ``ember run``: ``python -m ember.distributed._rank script.py args...`` (or
``-m module args...``, as ``ember train --nproc N`` starts ``-m ember train ...``).

Sets PyTorch's launcher variables from the MPI launcher's, runs the script as ``__main__``,
and when it fails (an exception, or ``sys.exit`` with a non-zero status) writes a report for
the launcher and ends every rank at once: a rank that simply exited would leave the others
waiting in their next collective, and itself in ``MPI_Finalize``.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import time
import traceback

# (variable, the launchers' names for it: Open MPI, MPICH / Hydra, PMIx, Slurm)
_VARS = {
    "RANK": ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"),
    "WORLD_SIZE": ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"),
    "LOCAL_RANK": ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"),
    "LOCAL_WORLD_SIZE": ("OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"),
}


def set_rank_variables(env=os.environ) -> None:
    """``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE`` from the launcher's."""
    for var, sources in _VARS.items():
        for src in sources:
            if src in env:
                env[var] = env[src]
                break
    env.setdefault("LOCAL_RANK", env.get("RANK", "0"))
    env.setdefault("LOCAL_WORLD_SIZE", env.get("WORLD_SIZE", "1"))


def report(error: str, where: str, keep: bool = False) -> None:
    """Leave ``error`` for ``ember run``'s summary (when running under it). ``keep``: leave
    the report this rank already wrote (a program's own one-line error, e.g. ember train's,
    says more than the ``sys.exit(1)`` that follows it)."""
    folder = os.environ.get("EMBER_RUN_ERROR_DIR")
    if not folder:
        return
    rank = os.environ.get("RANK", "?")
    report = {"rank": rank, "error": error, "where": where, "time": time.time()}
    path = os.path.join(folder, f"rank-{rank}.json")
    if keep and os.path.exists(path):
        return
    try:
        with open(path + ".tmp", "w") as f:
            json.dump(report, f)
        os.replace(path + ".tmp", path)
    except OSError:
        pass


def _end_job(code: int) -> None:
    """Stop every rank now (MPI_Abort) when MPI is up, else this process."""
    sys.stdout.flush()
    sys.stderr.flush()
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        mpi.COMM_WORLD.Abort(code)
    os._exit(code)


_EMBER = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _where(tb) -> str:
    """The innermost frame outside ember (the user's line), else the innermost one."""
    frames = traceback.extract_tb(tb)
    if not frames:
        return ""
    outside = [f for f in frames if not os.path.abspath(f.filename).startswith(_EMBER)]
    f = (outside or frames)[-1]
    return f'File "{f.filename}", line {f.lineno}, in {f.name}: {f.line}'


def _user_frames(tb):
    """The traceback from the script's first frame (without this module's and runpy's)."""
    while tb is not None and (
        tb.tb_frame.f_code.co_filename in (__file__, "<frozen runpy>")
        or "runpy" in tb.tb_frame.f_code.co_filename
    ):
        tb = tb.tb_next
    return tb


def main(argv: list[str]) -> None:
    if not argv or (argv[0] == "-m" and len(argv) < 2):
        print(
            "usage: python -m ember.distributed._rank (script.py | -m module) [args...]",
            file=sys.stderr,
        )
        os._exit(2)
    set_rank_variables()
    module = argv[1] if argv[0] == "-m" else None
    if module is None:
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
    else:
        sys.argv = [module, *argv[2:]]
        sys.path[0] = os.getcwd()
    rank = os.environ.get("RANK", "?")
    try:
        if module is None:
            runpy.run_path(argv[0], run_name="__main__")
        else:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as e:
        if e.code in (None, 0):
            return
        code = e.code if isinstance(e.code, int) else 1
        if not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
        report(f"exited with status {e.code}", _where(e.__traceback__), keep=True)
        _end_job(code)
    except BaseException as e:  # noqa: B036  (KeyboardInterrupt too: end every rank)
        print(f"[rank {rank}] {type(e).__name__} (ending all ranks):", file=sys.stderr)
        traceback.print_exception(type(e), e, _user_frames(e.__traceback__))
        report(f"{type(e).__name__}: {e}", _where(_user_frames(e.__traceback__)))
        _end_job(1)


if __name__ == "__main__":
    main(sys.argv[1:])
