"""Keep freed host memory in the process instead of handing it back to the system (glibc).

A training step allocates and frees the same large arrays every time (activations, patch
matrices, gradients: 0.1-5 MiB each for LeNet). glibc's ``malloc`` returns freed memory at the
top of its heap to the system once more than ``M_TRIM_THRESHOLD`` is free there, and serves big
requests from ``mmap`` (unmapped again on ``free``); the next step then touches fresh pages, a
minor page fault per 4 KiB page: 550-1200 faults per LeNet step, 15-40% of its time.

At import (``ember.backend``) ember sets, once, through ``mallopt`` (ctypes):

- ``M_MMAP_THRESHOLD`` = 32 MiB (glibc's own upper bound for its dynamic threshold on 64-bit):
  blocks below it come from the heap and are reused by later steps;
- ``M_TRIM_THRESHOLD`` = 128 MiB: up to that much free memory at the top of the heap stays
  mapped.

So a process keeps up to about 128 MiB (per malloc arena) of freed memory for reuse; its peak
is unchanged. Nothing is done when the C library is not glibc, when the process already chose
(``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_`` or ``GLIBC_TUNABLES`` set), or with
``EMBER_MALLOC_TUNE=0`` (the opt-out). ``settings()`` says what was applied.

>>> set(settings()) <= set(VALUES)  # empty where nothing was set
True
"""

from __future__ import annotations

import ctypes
import os
import platform

M_TRIM_THRESHOLD = -1  # glibc's malloc.h
M_MMAP_THRESHOLD = -3
VALUES = {"M_MMAP_THRESHOLD": 32 << 20, "M_TRIM_THRESHOLD": 128 << 20}
_PARAMS = {"M_MMAP_THRESHOLD": M_MMAP_THRESHOLD, "M_TRIM_THRESHOLD": M_TRIM_THRESHOLD}
_OWN = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")

_applied: dict[str, int] = {}


def wanted(env=os.environ) -> bool:
    """Whether ember should set the allocator: glibc, not opted out, not set by the user."""
    if env.get("EMBER_MALLOC_TUNE", "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    if any(k in env for k in _OWN):
        return False
    return platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


def tune(env=os.environ) -> dict[str, int]:
    """Apply ``VALUES`` with ``mallopt`` where ``wanted(env)``; returns what was applied (also
    kept for ``settings()``). Calling again does nothing more."""
    if _applied or not wanted(env):
        return dict(_applied)
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return {}
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    for name, value in VALUES.items():
        if mallopt(_PARAMS[name], value) == 1:  # mallopt returns 1 on success
            _applied[name] = value
    return dict(_applied)


def settings() -> dict[str, int]:
    """``{parameter: value}`` that ember set at import (empty if none)."""
    return dict(_applied)
