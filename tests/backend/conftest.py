"""Fixtures of the kernel tests: the emulated CuPy (``_emulator``, g++ runs ember's kernel
sources) and the stand-in cuDNN frontend (``_fakecudnn``, PyTorch convolves)."""

from __future__ import annotations

import pytest

import ember
from ember.backend import kernels
from ember.backend.kernels import attention as kattention
from ember.backend.kernels import conv as kconv
from ember.backend.kernels import rows, vectorized

from . import _emulator


@pytest.fixture
def xp(monkeypatch):
    """The emulated CuPy, with small blocks (32 threads) to keep the emulation quick."""
    if not _emulator.available():
        pytest.skip("needs g++ to emulate kernels")
    monkeypatch.setattr(rows, "BLOCK", 32)
    monkeypatch.setattr(vectorized, "BLOCK", 32)
    monkeypatch.setattr(ember.backends.cudnn, "_module", [None])  # the stand-in: ``fake_cudnn``
    kernels.clear()
    yield _emulator.emulated_xp()
    kernels.clear()


@pytest.fixture
def fake_cudnn(xp, monkeypatch):
    """The stand-in cuDNN frontend, with kernels/conv.py reading NumPy arrays' addresses."""
    from . import _fakecudnn

    monkeypatch.setattr(ember.backends.cudnn, "_module", [_fakecudnn])
    monkeypatch.setattr(kconv, "fused", lambda xp: True)
    monkeypatch.setattr(kattention, "fused", lambda xp: True)
    monkeypatch.setattr(kconv, "ptr", lambda a: a.ctypes.data)
    monkeypatch.setattr(kconv, "device_id", lambda a: 0)
    _fakecudnn.log.clear()
    _fakecudnn.fail_build[0] = False
    kconv.clear()
    kattention.clear()
    yield _fakecudnn
    kconv.clear()
    kattention.clear()
