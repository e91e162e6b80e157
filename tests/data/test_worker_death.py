"""Every way a DataLoader worker can die becomes an error naming the worker and how it died,
within seconds, with no worker left behind, and the next loader works (issue 16, item 1).

Thread workers can't be killed separately (a signal or ``os._exit`` ends the whole process), so
they die by an exception or ``SystemExit``; process workers also by ``os._exit``, SIGSEGV,
SIGKILL at once, SIGKILL halfway through sending a 16 MB batch, in ``worker_init_fn``, and
while idle between epochs.
"""

import gc
import multiprocessing
import os
import re
import signal
import threading
import time

import numpy as np
import pytest

from ember.data import DataLoader

from . import _datasets as D
from ._dying import Dies, exit_in_worker_1

FAST_S = 5.0  # a death must be reported within this (the machine may be busy)


def children_gone(deadline_s: float = 3.0) -> bool:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        threads = [t for t in threading.enumerate() if t.name.startswith("ember-data-worker")]
        if not threads and not multiprocessing.active_children():
            return True
        gc.collect()
        time.sleep(0.02)
    return False


@pytest.fixture(autouse=True)
def no_orphans():
    yield
    assert children_gone(), (multiprocessing.active_children(), threading.enumerate())


def later_loader_works(worker_type: str, context=None) -> None:
    dl = DataLoader(
        D.Squares(6),
        batch_size=2,
        num_workers=2,
        worker_type=worker_type,
        multiprocessing_context=context,
        timeout=30,
    )
    assert [b[0].tolist() for b in dl] == [[0, 1], [2, 3], [4, 5]]


def run_until_error(dl, sleep_after_first: float = 0.0):
    """Iterate ``dl``; returns (the error, seconds from the start, excluding the sleep).

    The error comes back without its traceback, whose frames would keep the iterator (and so
    its workers, which a worker's exception doesn't stop, as in PyTorch) alive.
    """
    start = time.monotonic()
    slept = 0.0
    with pytest.raises(Exception) as info:  # noqa: PT011 (each test checks the message)
        for n, _ in enumerate(dl):
            if n == 0 and sleep_after_first:
                time.sleep(sleep_after_first)
                slept = sleep_after_first
    took = time.monotonic() - start - slept
    err = info.value
    err.__traceback__ = None
    return err, took


@pytest.mark.parametrize("worker_type", ["thread", "process"])
def test_exception_in_worker_names_worker_and_keeps_traceback(worker_type):
    dl = DataLoader(
        Dies(6, 3, "raise"), batch_size=None, num_workers=2, worker_type=worker_type, timeout=3
    )
    err, took = run_until_error(dl)
    assert isinstance(err, ValueError)
    assert f"Caught ValueError in DataLoader worker {worker_type} 1" in str(err)
    assert "bad sample 3" in str(err)
    assert took < FAST_S
    assert children_gone()
    later_loader_works(worker_type)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_thread_worker_ended_by_systemexit():
    dl = DataLoader(
        Dies(6, 3, "systemexit"), batch_size=None, num_workers=2, worker_type="thread", timeout=3
    )
    err, took = run_until_error(dl)
    assert "DataLoader worker thread 1 exited unexpectedly" in str(err)
    assert took < FAST_S
    later_loader_works("thread")


PROCESS_DEATHS = [
    ("systemexit", r"exit code 3"),
    ("exit", r"exit code 3"),
    ("sigkill", r"killed by signal SIGKILL"),
    ("sigsegv", r"killed by signal SIGSEGV"),
    ("midsend", r"killed by signal SIGKILL"),
]


@pytest.mark.parametrize("how,match", PROCESS_DEATHS, ids=[h for h, _ in PROCESS_DEATHS])
def test_process_worker_death_is_a_clear_error_within_seconds(how, match):
    dl = DataLoader(
        Dies(8, 1, how), batch_size=None, num_workers=2, worker_type="process", timeout=3
    )
    # midsend: the loader doesn't read for a second, so the worker is blocked halfway through
    # sending its 16 MB sample when the timer kills it
    err, took = run_until_error(dl, sleep_after_first=1.0 if how == "midsend" else 0.0)
    assert "timed out" not in str(err)
    assert isinstance(err, RuntimeError)
    assert "DataLoader worker process 1 (pid" in str(err)
    assert re.search(match, str(err)), str(err)
    assert re.search(r"while loading batch(es)? 1\b", str(err)), str(err)  # what it took
    assert took < FAST_S, took
    assert children_gone()
    later_loader_works("process")


def test_worker_killed_mid_send_with_spawn():
    dl = DataLoader(
        Dies(8, 1, "midsend", delay=0.5),
        batch_size=None,
        num_workers=2,
        multiprocessing_context="spawn",
        timeout=30,
    )
    err, took = run_until_error(dl, sleep_after_first=1.5)
    assert "worker process 1" in str(err) and "SIGKILL" in str(err), str(err)
    assert took < FAST_S, took
    assert children_gone()
    later_loader_works("process", "spawn")


def test_midsend_without_timeout_does_not_hang():
    dl = DataLoader(Dies(8, 1, "midsend"), batch_size=None, num_workers=2, worker_type="process")
    err, took = run_until_error(dl, sleep_after_first=1.0)
    assert "worker process 1" in str(err) and "SIGKILL" in str(err), str(err)
    assert took < FAST_S, took


def test_death_in_worker_init_fn():
    dl = DataLoader(
        D.Squares(8),
        batch_size=2,
        num_workers=2,
        worker_type="process",
        worker_init_fn=exit_in_worker_1,
        timeout=10,
    )
    err, took = run_until_error(dl)
    assert "worker process 1" in str(err) and "exit code 4" in str(err), str(err)
    assert took < FAST_S, took
    later_loader_works("process")


def test_idle_persistent_worker_killed_between_epochs():
    dl = DataLoader(
        D.PidProbe(), batch_size=None, num_workers=2, worker_type="process", persistent_workers=True
    )
    pids = {pid for _, pid in dl}
    assert len(pids) == 2
    victim = max(pids)
    os.kill(victim, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=rf"\(pid {victim}\) exited unexpectedly: killed by"):
        list(dl)
    assert time.monotonic() - start < FAST_S
    del dl
    assert children_gone()
    later_loader_works("process")


def test_death_after_the_last_batch_is_not_an_error_when_nothing_is_lost():
    # every result already arrived: the epoch ends normally, as with PyTorch's loader
    dl = DataLoader(D.Squares(4), batch_size=None, num_workers=2, worker_type="process")
    it = iter(dl)
    got = [next(it)[0] for _ in range(4)]
    assert got == [0, 1, 2, 3]
    assert np.array_equal(np.arange(4), got)


def test_a_forked_copy_of_the_loader_leaves_its_workers_alone():
    # a later loader's worker process is forked with a copy of this iterator; if its garbage
    # collector finalizes that copy, the workers (not its children) must go on
    dl = DataLoader(D.Squares(6), batch_size=2, num_workers=2, worker_type="process", timeout=10)
    it = iter(dl)
    assert next(it)[0].tolist() == [0, 1]
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        try:
            it._pool.shutdown()
        finally:
            os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0
    assert [b[0].tolist() for b in it] == [[2, 3], [4, 5]]
