"""PyTorch's legacy format (``_use_new_zipfile_serialization=False``) loads as torch.load does.

The checks of ``test_torch_pth`` (every dtype, views, shared storages, plain values) run on
legacy files, compared with ``torch.load(weights_only=True)`` of the same file.
"""

from __future__ import annotations

import io
from collections import OrderedDict

import numpy as np
import pytest

import ember
from ember.serialization import CheckpointError, WeightsOnlyError

from .test_torch_pth import DTYPES, VIEWS, _check_tree, _values

torch = pytest.importorskip("torch")


def _legacy(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=False)
    return buf.getvalue()


def _roundtrip(obj, weights_only=True):
    blob = _legacy(obj)
    back = ember.load(io.BytesIO(blob), weights_only=weights_only)
    _check_tree(back, torch.load(io.BytesIO(blob), weights_only=True))
    return back


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
def test_each_dtype(dtype, weights_only):
    _roundtrip({"x": _values(dtype, (3, 4)), "s": _values(dtype, ())}, weights_only)


@pytest.mark.parametrize("view", list(VIEWS), ids=list(VIEWS))
def test_views_read_the_right_elements(view):
    base = torch.arange(36, dtype=torch.float32).reshape(6, 6)
    _roundtrip({"v": VIEWS[view](base), "base": base})


def test_state_dict_containers_and_shared_tensors():
    net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    w = torch.ones(2)
    obj = {
        "model": net.state_dict(),
        "same": [w, w],
        "meta": {"size": torch.Size([2, 3]), "dtype": torch.float16, "set": {1, 2}},
        "p": torch.nn.Parameter(torch.ones(2)),
    }
    back = _roundtrip(obj)
    assert isinstance(back["model"], OrderedDict)
    assert back["same"][0] is back["same"][1]
    assert type(back["p"]) is ember.nn.Parameter and back["p"].requires_grad


def test_a_state_dict_loads_into_an_ember_model():
    torch.manual_seed(0)
    net = torch.nn.Linear(4, 3)
    mine = ember.nn.Linear(4, 3)
    mine.load_state_dict(ember.load(io.BytesIO(_legacy(net.state_dict()))))
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    want = net(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(mine(ember.from_numpy(x)).detach().numpy(), want, rtol=1e-6)


def test_user_class_needs_an_allowlist():
    blob = _legacy({"opt": torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)})
    with pytest.raises(WeightsOnlyError, match=r"GLOBAL torch\.optim\.sgd\.SGD"):
        ember.load(io.BytesIO(blob))
    with pytest.raises(Exception, match=r"GLOBAL torch\.optim\.sgd\.SGD"):
        torch.load(io.BytesIO(blob))


@pytest.mark.parametrize(
    "edit,problem",
    [
        (
            lambda b: b[:2] + b"\x8a\x0a" + bytes(10) + b[14:],
            "a Python pickle but not a torch.save file",
        ),
        (lambda b: b.replace(b"M\xe9\x03", b"M\xea\x03", 1), "Invalid protocol version: 1002"),
        (lambda b: b[:-3], "truncated"),
        (lambda b: b[:-20], "truncated"),
    ],
    ids=["magic", "protocol", "cut-storage", "cut-more"],
)
def test_damaged_files_name_the_problem(edit, problem):
    blob = edit(_legacy({"w": torch.arange(6, dtype=torch.float32)}))
    with pytest.raises(CheckpointError, match=rf"(?s)old\.pt.*{problem}"):
        ember.load(_named(blob, "old.pt"))


def _named(blob: bytes, name: str) -> io.BytesIO:
    buf = io.BytesIO(blob)
    buf.name = name
    return buf


def test_storage_count_must_match_the_pickle():
    blob = _legacy({"w": torch.arange(6, dtype=torch.float32)})
    i = len(blob) - 6 * 4 - 8  # the storage's element count, before its bytes
    bad = blob[:i] + (7).to_bytes(8, "little") + blob[i + 8 :]
    with pytest.raises(CheckpointError, match="holds 7 elements but its tensors name 6"):
        ember.load(io.BytesIO(bad))
