"""Files ember writes are standard safetensors files, and the other way round; bare pickles
refused."""

import io
import pickle

import ml_dtypes
import numpy as np
import pytest

import ember
from ember.serialization import CheckpointError

NP_DTYPES = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int64, np.int32, np.int16]
NP_DTYPES += [np.int8, np.uint8, np.bool_]


def _arrays():
    rng = np.random.default_rng(0)
    out = {}
    for i, dt in enumerate(NP_DTYPES):
        shape = [(2, 3), (), (0, 4), (5,)][i % 4]
        values = np.asarray(rng.standard_normal(shape) * 20)
        out[f"block.{i}.{np.dtype(dt).name}"] = values.astype(dt)
    return out


def test_official_reader_reads_ember_state_dict(tmp_path):
    st_numpy = pytest.importorskip("safetensors.numpy")
    from safetensors import safe_open

    arrays = _arrays()
    ember.save({k: ember.from_numpy(v) for k, v in arrays.items()}, tmp_path / "m.safetensors")
    back = st_numpy.load_file(str(tmp_path / "m.safetensors"))
    assert set(back) == set(arrays)
    for k, v in arrays.items():
        assert back[k].dtype == v.dtype and back[k].shape == v.shape
        np.testing.assert_array_equal(back[k], v)
    with safe_open(str(tmp_path / "m.safetensors"), "np") as f:
        assert f.metadata()["format"] == "pt"


def test_official_reader_reads_nested_checkpoint(tmp_path):
    st_numpy = pytest.importorskip("safetensors.numpy")
    obj = {"model": {"w": ember.ones(2)}, "opt": {"state": {0: {"m": ember.zeros(2)}}}, "epoch": 1}
    ember.save(obj, tmp_path / "c.safetensors")
    back = st_numpy.load_file(str(tmp_path / "c.safetensors"))
    assert sorted(back) == ["model.w", "opt.state.0.m"]


def test_ember_reads_official_numpy_file(tmp_path):
    st_numpy = pytest.importorskip("safetensors.numpy")
    arrays = _arrays()
    st_numpy.save_file(arrays, str(tmp_path / "o.safetensors"), metadata={"k": "v"})
    back = ember.load(tmp_path / "o.safetensors")
    assert set(back) == set(arrays)
    for k, v in arrays.items():
        assert isinstance(back[k], ember.Tensor)
        assert back[k].numpy().dtype == v.dtype and back[k].shape == v.shape
        np.testing.assert_array_equal(back[k].numpy(), v)
    # the bytes round-trip too: official bytes -> ember -> official (whose numpy.load has no BF16)
    arrays = {k: v for k, v in arrays.items() if v.dtype != ml_dtypes.bfloat16}
    blob = st_numpy.save(arrays)
    again = st_numpy.load(_resave(ember.load(io.BytesIO(blob))))
    for k, v in arrays.items():
        np.testing.assert_array_equal(again[k], v)


def _resave(obj):
    buf = io.BytesIO()
    ember.save(obj, buf)
    return buf.getvalue()


def test_ember_reads_official_torch_file(tmp_path):
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch")
    sd = {
        "w": torch.randn(3, 4),
        "h": torch.randn(2, dtype=torch.bfloat16),
        "i": torch.arange(5),
        "m": torch.tensor([True, False]),
        "s": torch.tensor(2.5, dtype=torch.float64),
    }
    st_torch.save_file(sd, str(tmp_path / "t.safetensors"))
    back = ember.load(tmp_path / "t.safetensors")
    for k, v in sd.items():
        assert str(back[k].dtype).split(".")[1] == str(v.dtype).split(".")[1]
        np.testing.assert_array_equal(back[k].float().numpy(), v.float().numpy())
    # and torch reads ember's file of the same state dict
    ember.save(back, tmp_path / "e.safetensors")
    again = st_torch.load_file(str(tmp_path / "e.safetensors"))
    for k, v in sd.items():
        assert again[k].dtype == v.dtype and torch.equal(again[k], v)


def test_torch_save_zip_loads(tmp_path):
    torch = pytest.importorskip("torch")
    torch.save({"w": torch.ones(2)}, tmp_path / "t.pt")
    back = ember.load(tmp_path / "t.pt")
    np.testing.assert_array_equal(back["w"].numpy(), np.ones(2, np.float32))


def test_bare_pickle_is_refused(tmp_path):
    (tmp_path / "t.pt").write_bytes(pickle.dumps({"w": _Boom()}, protocol=2))
    with pytest.raises(CheckpointError, match=r"t\.pt.*Python pickle.*never runs a bare"):
        ember.load(tmp_path / "t.pt")


class _Boom:
    def __reduce__(self):
        return (_explode, ())


def _explode():
    raise AssertionError("code from the file was run")


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_plain_pickle_is_refused_without_running_it(protocol, tmp_path):
    (tmp_path / "p.pkl").write_bytes(pickle.dumps({"x": _Boom(), "y": list(range(100))}, protocol))
    with pytest.raises(CheckpointError, match="Python pickle.*never runs a bare pickle"):
        ember.load(tmp_path / "p.pkl")


def test_npy_file_gets_a_hint(tmp_path):
    np.save(tmp_path / "a.npy", np.ones(3))
    with pytest.raises(CheckpointError, match="NumPy .npy file"):
        ember.load(tmp_path / "a.npy")
