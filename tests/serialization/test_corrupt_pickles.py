"""Fuzzing the pickle readers: PyTorch zip and legacy files of whole models, ember's pickled
checkpoints. Every truncated or bit-flipped file either loads, with no more tensor bytes than
the file allows, or raises ``CheckpointError`` naming the file; none hangs.

The weights-only loads allowlist the model's classes, so flips reach the module-building code
too; checksums are off where the format has them, so flips reach the unpickler.
"""

from __future__ import annotations

import io
import time

import numpy as np
import pytest

import ember
from ember.serialization import CheckpointError
from ember.serialization.torch_pickle import COPY_FACTOR, COPY_SLACK

torch = pytest.importorskip("torch")

CLASSES = [ember.nn.Sequential, ember.nn.Linear, ember.nn.ReLU, ember.nn.BatchNorm1d]


def _torch_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.BatchNorm1d(16))


def _blob(kind: str) -> bytes:
    buf = io.BytesIO()
    if kind == "ember":
        ember.save(ember.nn.Sequential(ember.nn.Linear(8, 16), ember.nn.ReLU()), buf)
    else:
        torch.save(_torch_model(), buf, _use_new_zipfile_serialization=kind == "zip")
    return buf.getvalue()


KINDS = ["zip", "legacy", "ember"]


def _tensor_bytes(obj, seen=None) -> int:
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, ember.Tensor):
        return obj.numpy(force=True).nbytes
    if isinstance(obj, ember.nn.Module):
        return sum(_tensor_bytes(t, seen) for t in obj.state_dict(keep_vars=True).values())
    return 0


def _try(blob: bytes, weights_only: bool) -> None:
    f = io.BytesIO(blob)
    f.name = "fuzzed.pt"
    try:
        with ember.serialization.safe_globals(CLASSES):
            out = ember.load(f, weights_only=weights_only, verify=False)
    except CheckpointError as e:
        assert "fuzzed.pt" in str(e)
        return
    assert _tensor_bytes(out) <= COPY_FACTOR * len(blob) + COPY_SLACK


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weights_only", [True, False])
def test_truncations(kind, weights_only):
    blob = _blob(kind)
    whole = ember.load(io.BytesIO(blob), weights_only=False)
    assert isinstance(whole, ember.nn.Sequential)  # the fuzzed file is a real model
    start = time.perf_counter()
    for cut in np.linspace(0, len(blob) - 1, 60).astype(int):
        _try(blob[:cut], weights_only)
    assert time.perf_counter() - start < 30


@pytest.mark.parametrize("kind", KINDS)
def test_byte_flips(kind):
    blob = bytearray(_blob(kind))
    rng = np.random.default_rng(len(blob))
    start = time.perf_counter()
    for _ in range(300):
        bad = bytearray(blob)
        for i in rng.integers(0, len(blob), size=rng.integers(1, 4)):
            bad[i] ^= 1 << int(rng.integers(0, 8))
        _try(bytes(bad), weights_only=True)
    assert time.perf_counter() - start < 60


@pytest.mark.parametrize("kind", ["legacy", "ember"])
def test_huge_counts_allocate_nothing(kind):
    """Every 4- and 8-byte field set to a huge number: a refusal, not a huge allocation."""
    blob = _blob(kind)
    for pos in range(0, len(blob) - 8, max(1, len(blob) // 400)):
        for width in (4, 8):
            _try(blob[:pos] + b"\xff" * (width - 1) + b"\x7f" + blob[pos + width :], True)
