"""``ember.load`` reads ``torch.save`` zip files as ``torch.load(weights_only=True)`` does."""

from __future__ import annotations

import io
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import ember
from ember.serialization import CheckpointError, WeightsOnlyError

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64"]
DTYPES += ["uint8", "bool"]


def _np(t):
    """A torch tensor's values as NumPy (bfloat16 through ml_dtypes, like ember's)."""
    if t.dtype == torch.bfloat16:
        return t.float().numpy().astype(ember.bfloat16.np)
    return t.detach().numpy()


def _same(e, t):
    assert isinstance(e, ember.Tensor), type(e)
    assert e.dtype.name == str(t.dtype).split(".")[1]
    assert tuple(e.shape) == tuple(t.shape)
    assert e.requires_grad == t.requires_grad
    np.testing.assert_array_equal(e.detach().numpy(), _np(t))


def _check_tree(e, t):
    """``e`` (from ember.load) matches ``t`` (from torch.load(weights_only=True))."""
    if isinstance(t, torch.Tensor):
        _same(e, t)
    elif isinstance(t, dict):
        assert type(e) is type(t) and list(e) == list(t)
        for k in t:
            _check_tree(e[k], t[k])
    elif isinstance(t, torch.Size):
        assert type(e) is ember.Size and tuple(e) == tuple(t)
    elif isinstance(t, (list, tuple)):
        assert type(e) is type(t) and len(e) == len(t)
        for a, b in zip(e, t):
            _check_tree(a, b)
    elif isinstance(t, torch.dtype):
        assert e == ember.dtypes.to_dtype(str(t).split(".")[1])
    elif isinstance(t, torch.device):
        assert str(e) == str(t)
    else:
        assert type(e) is type(t) and e == t


def _roundtrip(obj, tmp_path, name="t.pth"):
    path = tmp_path / name
    torch.save(obj, path)
    back = ember.load(path)
    _check_tree(back, torch.load(path, weights_only=True))
    return back


def _values(dtype, shape):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=g) * 50
    if dtype == "bool":
        return x > 0
    return x.to(getattr(torch, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_each_dtype(dtype, tmp_path):
    _roundtrip({"x": _values(dtype, (3, 4)), "s": _values(dtype, ())}, tmp_path)


VIEWS = {
    "transpose": lambda x: x.t(),
    "slice_offset": lambda x: x[1:, 2:],
    "step": lambda x: x[::2, ::3],
    "column": lambda x: x[:, 1],
    "scalar_in_storage": lambda x: x[2, 3],
    "expanded": lambda x: x[0:1].expand(5, 6),
    "empty_view": lambda x: x[2:2],
    "permuted_3d": lambda x: x.reshape(2, 3, 6).permute(2, 0, 1),
}


@pytest.mark.parametrize("view", list(VIEWS), ids=list(VIEWS))
def test_views_read_the_right_elements(view, tmp_path):
    base = torch.arange(36, dtype=torch.float32).reshape(6, 6)
    back = _roundtrip({"v": VIEWS[view](base)}, tmp_path)
    assert back["v"].numpy().flags.c_contiguous


def test_shared_storage_views_and_the_base(tmp_path):
    base = torch.arange(24, dtype=torch.int64).reshape(4, 6)
    obj = {"t": base.t(), "base": base, "row": base[2], "again": base, "chunks": base.chunk(2)}
    back = _roundtrip(obj, tmp_path)
    assert back["base"] is back["again"]  # one tensor object in two places stays one
    back["base"].add_(1)  # values are right whichever way the memory is shared
    np.testing.assert_array_equal(back["base"].numpy(), base.numpy() + 1)


def test_nested_containers_and_plain_values(tmp_path):
    obj = {
        "model": OrderedDict([("w", torch.ones(2, 3)), ("b", torch.zeros(3))]),
        "opt": {"state": {0: {"step": torch.tensor(3.0), "m": [torch.ones(1)]}}, "lr": 1e-3},
        "list": [1, 2.5, "s", None, True, (4, "x", [5])],
        "size": torch.Size([2, 3]),
        "dtype": torch.float16,
        "device": torch.device("cpu"),
        "bytes": b"\x00\xffab",
        "set": {1, 2},
        "empty": torch.empty(0, 4),
        "big": 2**70,
        "neg": -1.5e300,
    }
    back = _roundtrip(obj, tmp_path)
    assert isinstance(back["model"], OrderedDict)
    assert back["size"] == ember.Size([2, 3]) and back["dtype"] is ember.float16


def test_parameters_keep_requires_grad(tmp_path):
    obj = {
        "p": torch.nn.Parameter(torch.ones(2)),
        "frozen": torch.nn.Parameter(torch.ones(2), requires_grad=False),
        "leaf": torch.ones(2, requires_grad=True),
    }
    back = _roundtrip(obj, tmp_path)
    assert back["p"].requires_grad and not back["frozen"].requires_grad
    assert back["leaf"].requires_grad


def test_tensor_with_python_attributes_loads_without_them(tmp_path):
    t = torch.ones(2)
    t.note = "hi"
    back = ember.load(_save_to(tmp_path, {"t": t}))
    np.testing.assert_array_equal(back["t"].numpy(), np.ones(2, np.float32))


def _save_to(tmp_path, obj, name="t.pth"):
    torch.save(obj, tmp_path / name)
    return tmp_path / name


def _torch_net():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1),
        torch.nn.BatchNorm2d(4),
        torch.nn.ReLU(),
        torch.nn.Flatten(),
        torch.nn.Linear(4 * 5 * 5, 3),
    )


def _ember_net():
    nn = ember.nn
    return nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(4 * 5 * 5, 3),
    )


def test_load_state_dict_of_a_torch_model(tmp_path):
    torch.manual_seed(0)
    net = _torch_net()
    net.train()
    net(torch.randn(8, 3, 5, 5))  # moves running stats and num_batches_tracked
    net.eval()
    path = _save_to(tmp_path, net.state_dict(), "net.pth")
    mine = _ember_net()
    mine.load_state_dict(ember.load(path))
    mine.eval()
    assert mine.state_dict()["1.num_batches_tracked"].dtype is ember.int64
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    want = net(torch.from_numpy(x)).detach().numpy()
    got = mine(ember.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_map_location(tmp_path):
    path = _save_to(tmp_path, {"w": torch.ones(2)})
    seen = []
    back = ember.load(path, map_location=lambda t, loc: seen.append(loc))
    assert seen == ["cpu"] and back["w"].device.type == "cpu"
    assert ember.load(path, map_location="cpu")["w"].device.type == "cpu"


def test_file_objects_and_bytes(tmp_path):
    buf = io.BytesIO()
    torch.save({"w": torch.arange(3)}, buf)
    back = ember.load(io.BytesIO(buf.getvalue()))
    np.testing.assert_array_equal(back["w"].numpy(), np.arange(3))


# -- refusals ----------------------------------------------------------------------------------


def test_pickled_module_is_refused_by_default(tmp_path):
    path = _save_to(tmp_path, _torch_net(), "model.pth")
    with pytest.raises(
        WeightsOnlyError, match=r"(?s)model\.pth.*GLOBAL torch\.nn\.modules\.container\.Sequential"
    ):
        ember.load(path)


def _archive(tmp_path, data_pkl: bytes, name="evil.pth", extra=()) -> str:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", data_pkl)
        z.writestr("archive/byteorder", "little")
        for member, data in extra:
            z.writestr(member, data)
    return str(path)


class _System:
    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def test_crafted_pickle_calling_os_system_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    data = pickle.dumps({"w": _System(f"touch {marker}")}, protocol=2)
    for allowed in ([], [os.system]):  # a blocked module stays blocked, as in torch.load
        with ember.serialization.safe_globals(allowed):
            with pytest.raises(
                WeightsOnlyError, match=r"(?s)evil\.pth.*(posix|os)\.system.*blocked"
            ):
                ember.load(_archive(tmp_path, data))
    assert not marker.exists()


@pytest.mark.parametrize(
    "data",
    [
        b"cbuiltins\neval\n(S'1'\ntR.",  # a builtin not on the list
        b"ctorch._utils\n_rebuild_tensor_v2\n(I1\ntR.",  # allowed, misused
        b"ccollections\nOrderedDict\n)R}S'__class__'\nNsb.",  # BUILD on an instance is fine...
        b"ctorch._utils\n_rebuild_tensor_v2\n}S'x'\nI1\nsb.",  # ...but not on a stand-in
        b"\x80\x02",  # cut short
        b"not a pickle",
    ],
    ids=["eval", "misused", "build-odict", "build-global", "truncated", "garbage"],
)
def test_bad_pickles_are_checkpoint_errors(data, tmp_path):
    path = _archive(tmp_path, data)
    try:
        out = ember.load(path)
    except CheckpointError as e:
        assert "evil.pth" in str(e)
    else:  # only the harmless OrderedDict BUILD loads
        assert isinstance(out, OrderedDict)


def test_storage_larger_than_its_member_is_refused(tmp_path):
    data = (
        b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storage"
        b"ctorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuJ\x00\x00\x00\x40tQ"
        b"K\x00J\x00\x00\x00\x40\x85K\x01\x85\x89ccollections\nOrderedDict\n)Rtr."
    )
    path = _archive(tmp_path, data, extra=[("archive/data/0", b"\x00" * 8)])
    with pytest.raises(CheckpointError, match="needs 4294967296 bytes but its member holds 8"):
        ember.load(path)


def test_expanded_view_cannot_allocate_without_bound(tmp_path):
    huge = torch.zeros(1).expand(1 << 20, 1 << 10)  # 4 GiB from a 4-byte storage
    path = _save_to(tmp_path, {"x": huge})
    with pytest.raises(CheckpointError, match="more than 4x the bytes of its storages"):
        ember.load(path)


def test_truncated_and_corrupt_archives(tmp_path):
    path = _save_to(tmp_path, {"w": torch.arange(1000, dtype=torch.float32)})
    blob = path.read_bytes()
    for cut in (10, len(blob) // 2, len(blob) - 30):
        (tmp_path / "cut.pth").write_bytes(blob[:cut])
        with pytest.raises(CheckpointError, match=r"cut\.pth"):
            ember.load(tmp_path / "cut.pth")
    i = blob.index(np.arange(1000, dtype=np.float32)[500:502].tobytes())
    bad = blob[:i] + b"\xff\xff" + blob[i + 2 :]
    (tmp_path / "bad.pth").write_bytes(bad)
    with pytest.raises(CheckpointError, match=r"bad\.pth.*CRC-32"):
        ember.load(tmp_path / "bad.pth")
    back = ember.load(tmp_path / "bad.pth", verify=False)
    assert back["w"].numpy()[500] != 500


def test_torchscript_archive_is_named(tmp_path):
    scripted = torch.jit.script(torch.nn.Linear(2, 2))
    scripted.save(str(tmp_path / "s.pt"))
    with pytest.raises(CheckpointError, match="TorchScript"):
        ember.load(tmp_path / "s.pt")
