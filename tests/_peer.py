"""PyTorch as the reference: the version the tests pin, and what to do on another one.

The test extra pins ``torch==2.13.0``. Elsewhere (a GPU machine with the PyTorch it has) a
reference call may fail only because that PyTorch lacks a newer feature (``bias=`` on
BatchNorm before 2.12, the derivative of ``aminmax`` before 2.12): ``newer_feature()`` turns
exactly those failures into a skip that names the version, and lets every failure through on the
pinned version, so the reference suite never hides one.
"""

from __future__ import annotations

import contextlib

import pytest

try:
    import torch
except ImportError:  # pragma: no cover - the test extra installs it
    torch = None

PINNED = "2.13.0"
_MISSING = ("unexpected keyword argument", "is not implemented", "has no attribute")


def is_pinned() -> bool:
    """Whether the installed PyTorch is the version the tests pin."""
    return torch is not None and torch.__version__.split("+")[0] == PINNED


@contextlib.contextmanager
def newer_feature():
    """Run PyTorch reference code; skip if this (unpinned) PyTorch lacks what it calls."""
    try:
        yield
    except (TypeError, RuntimeError, AttributeError, NotImplementedError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        if is_pinned() or not any(m in first for m in _MISSING):
            raise
        pytest.skip(f"needs PyTorch {PINNED} (this is {torch.__version__}): {first}")
