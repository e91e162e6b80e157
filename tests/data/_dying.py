"""Datasets whose worker dies in a chosen way, at module level so process workers (any start
method) can unpickle them. No torch import: spawned workers import this module."""

from __future__ import annotations

import faulthandler
import os
import signal
import threading

import numpy as np

import ember.data as edata


class Dies(edata.Dataset):
    """``n`` samples ``i -> i``; the worker that loads index ``bad`` dies as ``how`` says.

    ``raise``: a ValueError; ``systemexit``: ``SystemExit(3)``; ``exit``: ``os._exit(3)``;
    ``sigkill`` / ``sigsegv``: that signal, at once; ``midsend``: the sample is a 16 MB array
    and a timer SIGKILLs the worker ``delay`` seconds later, while the loader is not reading,
    so the worker dies halfway through sending it.
    """

    def __init__(self, n: int, bad: int, how: str, delay: float = 0.5) -> None:
        self.n, self.bad, self.how, self.delay = n, bad, how, delay

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if i != self.bad:
            return i
        how = self.how
        if how == "raise":
            raise ValueError(f"bad sample {i}")
        if how == "systemexit":
            raise SystemExit(3)
        if how == "exit":
            os._exit(3)
        if how in ("sigkill", "sigsegv"):
            faulthandler.disable()  # pytest's handler would dump this worker's stack
            os.kill(os.getpid(), signal.SIGKILL if how == "sigkill" else signal.SIGSEGV)
        if how == "midsend":
            pid = os.getpid()
            threading.Timer(self.delay, os.kill, (pid, signal.SIGKILL)).start()
            return np.ones(4 * 1024 * 1024, np.float32)
        raise AssertionError(how)


def exit_in_worker_1(worker_id: int) -> None:
    """A worker_init_fn: worker 1 exits with code 4 before loading anything."""
    if worker_id == 1:
        os._exit(4)
