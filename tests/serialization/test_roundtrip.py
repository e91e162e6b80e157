"""ember.save / ember.load round trips: dtypes, shapes, nested structures, devices, file kinds."""

import io
import json
import math
import os
import pathlib
from collections import OrderedDict

import numpy as np
import pytest

import ember
from ember.serialization import CheckpointError

DTYPES = [
    ember.float32,
    ember.float64,
    ember.float16,
    ember.bfloat16,
    ember.int64,
    ember.int32,
    ember.int16,
    ember.int8,
    ember.uint8,
    ember.bool,
]
SHAPES = [(), (0,), (3,), (2, 3), (2, 0, 4), (1, 1, 1, 5)]


def _sample(dtype, shape, rng):
    a = rng.standard_normal(shape) * 50
    if dtype is ember.bool:
        a = a > 0
    return ember.tensor(a).to(dtype)


def _round_trip(obj, tmp_path, **kw):
    path = tmp_path / "ckpt.safetensors"
    ember.save(obj, path)
    return ember.load(path, **kw)


def _assert_same(a, b):
    if isinstance(a, ember.Tensor):
        assert isinstance(b, ember.Tensor)
        assert b.dtype is a.dtype and b.shape == a.shape
        assert b.requires_grad == a.requires_grad
        x, y = a.detach().numpy(), b.detach().numpy()
        assert x.tobytes() == y.tobytes()  # bit-exact, NaNs included
        return
    assert type(a) is type(b), (a, b)
    if isinstance(a, dict):
        assert list(a) == list(b) and [type(k) for k in a] == [type(k) for k in b]
        for k in a:
            _assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_and_shape(dtype, tmp_path):
    rng = np.random.default_rng(0)
    obj = {f"t{i}": _sample(dtype, s, rng) for i, s in enumerate(SHAPES)}
    _assert_same(obj, _round_trip(obj, tmp_path))


def test_mixed_dtypes_are_aligned_in_the_file(tmp_path):
    rng = np.random.default_rng(1)
    obj = {str(d): _sample(d, (3,), rng) for d in DTYPES}
    back = _round_trip(obj, tmp_path)
    _assert_same(obj, back)
    raw = (tmp_path / "ckpt.safetensors").read_bytes()
    n = int.from_bytes(raw[:8], "little")
    assert (8 + n) % 8 == 0  # header padded so the buffer starts 8-aligned
    assert raw[8 : 8 + n].rstrip(b" ").endswith(b"}")


def test_bfloat16_special_values(tmp_path):
    t = ember.tensor([1.5, -0.0, float("inf"), float("nan"), 3e38], dtype=ember.bfloat16)
    _assert_same(t, _round_trip(t, tmp_path))


def test_single_tensor_and_scalars(tmp_path):
    for obj in [ember.tensor(2.5), ember.ones(2, 3), 3, 2.5, "s", None, True, [], {}, ()]:
        _assert_same(obj, _round_trip(obj, tmp_path))


def test_non_contiguous_and_views(tmp_path):
    base = ember.arange(24, dtype=ember.float32).reshape(2, 3, 4)
    obj = {
        "t": base.transpose(0, 2),
        "slice": base.select(1, 1),
        "step": ember.from_numpy(base.numpy()[..., ::2]),  # a strided view of the same storage
        "expanded": ember.ones(3, 1).expand(3, 4),  # zero strides
        "base": base,
    }
    back = _round_trip(obj, tmp_path)
    for k in obj:
        np.testing.assert_array_equal(back[k].numpy(), obj[k].numpy())
        assert back[k].is_contiguous()


def test_shared_tensor_stored_once_and_loaded_shared(tmp_path):
    """As in PyTorch: one tensor held in several places comes back as one tensor."""
    w = ember.ones(4)
    obj = {"a": w, "b": w, "c": w.narrow(0, 1, 2), "d": [w]}
    back = _round_trip(obj, tmp_path)
    assert back["a"] is back["b"] is back["d"][0]
    back["a"].add_(1)
    np.testing.assert_array_equal(back["b"].numpy(), np.full(4, 2.0))
    np.testing.assert_array_equal(back["c"].numpy(), np.ones(2))  # a view is stored on its own
    assert back["a"].numpy().flags.writeable and back["a"].numpy().flags.aligned
    from ember.serialization import safetensors as st

    with open(tmp_path / "ckpt.safetensors", "rb") as f:
        arrays, _ = st.read(f)
    assert sorted(arrays) == ["a", "c"]


def test_training_checkpoint_structure(tmp_path):
    rng = np.random.default_rng(2)
    model = OrderedDict(
        [("fc1.weight", _sample(ember.float32, (4, 3), rng)), ("fc1.bias", ember.zeros(4))]
    )
    optim = {
        "state": {
            0: {"step": ember.tensor(3.0), "exp_avg": ember.ones(4, 3)},
            1: {"step": ember.tensor(3.0), "exp_avg": ember.zeros(4)},
        },
        "param_groups": [
            {
                "lr": 0.001,
                "betas": (0.9, 0.999),
                "eps": 1e-8,
                "weight_decay": 0,
                "amsgrad": False,
                "maximize": False,
                "foreach": None,
                "params": [0, 1],
            }
        ],
    }
    obj = {
        "model": model,
        "optimizer": optim,
        "epoch": 3,
        "best": float("inf"),
        "worst": -math.inf,
        "nan": math.nan,
        "big": 2**80,
        "name": 'run-β ☃ "quoted" \\ \ud800',
        "dtype": ember.bfloat16,
        "device": ember.device("cuda:1"),
        "ints": {-1: "neg", 0: "zero", 10**20: "huge"},
        "mixed_keys": {1: "int", "1": "str"},
        "nested": [[[], ({"x": [ember.tensor([1, 2])]},)]],
    }
    back = _round_trip(obj, tmp_path)
    _assert_same(obj, back)
    assert type(back["model"]) is OrderedDict and type(back["optimizer"]["state"]) is dict
    assert back["dtype"] is ember.bfloat16 and back["device"] == ember.device("cuda", 1)


def test_plain_state_dict_keeps_tensor_names_in_the_file(tmp_path):
    from ember.serialization import safetensors as st

    sd = {"layer.0.weight": ember.ones(2), "layer.0.bias": ember.zeros(1)}
    ember.save(sd, tmp_path / "m.safetensors")
    with open(tmp_path / "m.safetensors", "rb") as f:
        header = st.read_header(f)
    assert set(header.tensors) == set(sd) and header.metadata["format"] == "pt"


def test_colliding_flat_names_stay_distinct(tmp_path):
    obj = {"a.b": ember.ones(1), "a": {"b": ember.zeros(1)}, "__metadata__": ember.ones(2)}
    _assert_same(obj, _round_trip(obj, tmp_path))


def test_requires_grad_is_kept_and_tensors_are_leaves(tmp_path):
    w = ember.ones(2, requires_grad=True)
    y = w * 2
    back = _round_trip({"w": w, "y": y}, tmp_path)
    assert back["w"].requires_grad and back["w"].is_leaf
    assert back["y"].requires_grad and back["y"].is_leaf  # as torch.load gives for non-leaves


def test_file_objects_path_like_and_str(tmp_path):
    obj = {"w": ember.arange(5)}
    buf = io.BytesIO()
    buf.write(b"prefix")  # the checkpoint can sit inside a larger stream
    ember.save(obj, buf)
    buf.seek(6)
    _assert_same(obj, ember.load(buf))
    for path in [tmp_path / "p.st", str(tmp_path / "s.st"), pathlib.PurePath(tmp_path / "q.st")]:
        ember.save(obj, path)
        _assert_same(obj, ember.load(path))
    with open(tmp_path / "h.st", "wb") as f:
        ember.save(obj, f)
    with open(tmp_path / "h.st", "rb") as f:
        _assert_same(obj, ember.load(f))


def test_non_seekable_stream(tmp_path):
    obj = {"w": ember.arange(5)}
    ember.save(obj, tmp_path / "x.st")
    r, w = os.pipe()
    with open(w, "wb") as fw:
        fw.write((tmp_path / "x.st").read_bytes())
    with open(r, "rb", buffering=0) as fr:
        _assert_same(obj, ember.load(fr))


def test_symlink_is_written_through(tmp_path):
    target = tmp_path / "real.st"
    ember.save({"v": ember.ones(1)}, target)
    link = tmp_path / "link.st"
    link.symlink_to(target)
    ember.save({"v": ember.zeros(1)}, link)
    assert link.is_symlink()
    assert ember.load(target)["v"].item() == 0.0


@pytest.mark.parametrize(
    "obj,global_name",
    [
        ({"a": object()}, "GLOBAL object was not"),
        ([np.zeros(2)], "GLOBAL numpy"),
    ],
)
def test_objects_beyond_the_skeleton_are_pickled_and_refused_by_default(obj, global_name, tmp_path):
    ember.save(obj, tmp_path / "x.st")  # tests/serialization/test_whole_objects.py has more
    with pytest.raises(CheckpointError, match=global_name):
        ember.load(tmp_path / "x.st")
    back = ember.load(tmp_path / "x.st", weights_only=False)
    assert type(back) is type(obj)


def test_cycles_are_pickled(tmp_path):
    a = []
    a.append(a)
    ember.save(a, tmp_path / "x.st")
    back = ember.load(tmp_path / "x.st")
    assert back[0] is back


def test_numpy_scalars_become_python_numbers(tmp_path):
    back = _round_trip({"f": np.float32(1.5), "i": np.int64(3), "b": np.bool_(True)}, tmp_path)
    assert back == {"f": 1.5, "i": 3, "b": True}
    assert [type(v) for v in back.values()] == [float, int, bool]


def test_weights_only_is_accepted(tmp_path):
    ember.save({"w": ember.ones(1)}, tmp_path / "x.st")
    assert ember.load(tmp_path / "x.st", weights_only=True)["w"].item() == 1.0


# -- map_location --------------------------------------------------------------------------------


def _fake_cuda_file(tmp_path):
    """A file recording that "w" was saved from cuda:0 (built here so no GPU is needed)."""
    from ember.serialization import safetensors as st

    root = {"dict": [["w", {"tensor": "w", "location": "cuda:0"}], ["c", {"tensor": "c"}]]}
    meta = json.dumps({"version": 1, "root": root})
    path = tmp_path / "gpu.st"
    with open(path, "wb") as f:
        st.write(f, {"w": np.ones(2, np.float32), "c": np.zeros(1, np.float32)}, {"ember": meta})
    return path


@pytest.mark.parametrize(
    "map_location",
    ["cpu", ember.device("cpu"), {"cuda:0": "cpu"}, {"cuda": "cpu"}, lambda t, loc: t],
    ids=["str", "device", "dict", "dict-cuda", "callable"],
)
def test_map_location_to_cpu(map_location, tmp_path):
    back = ember.load(_fake_cuda_file(tmp_path), map_location=map_location)
    assert back["w"].device == ember.device("cpu") and back["c"].device == ember.device("cpu")
    np.testing.assert_array_equal(back["w"].numpy(), [1, 1])


def test_map_location_callable_sees_saved_location(tmp_path):
    seen = []

    def fn(t, loc):
        seen.append(loc)
        return t * 3 if loc.startswith("cuda") else None

    back = ember.load(_fake_cuda_file(tmp_path), map_location=fn)
    assert seen == ["cuda:0", "cpu"]
    np.testing.assert_array_equal(back["w"].numpy(), [3, 3])


@pytest.mark.skipif(ember.cuda.is_available(), reason="checks the no-GPU message")
def test_cuda_checkpoint_without_gpu_names_map_location(tmp_path):
    with pytest.raises(ember.DeviceError, match="saved on cuda:0.*map_location='cpu'"):
        ember.load(_fake_cuda_file(tmp_path))
    with pytest.raises(ember.DeviceError, match="cuda is not available"):
        ember.load(_fake_cuda_file(tmp_path), map_location="cuda")


def test_bad_map_location(tmp_path):
    with pytest.raises(ember.DeviceError, match="map_location must be"):
        ember.load(_fake_cuda_file(tmp_path), map_location=3.5)


@pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a GPU")
def test_cuda_round_trip(tmp_path):
    obj = {"g": ember.arange(6, dtype=ember.float32).reshape(2, 3).cuda().t(), "c": ember.ones(2)}
    back = ember.load(_save_and_path(obj, tmp_path))
    assert back["g"].is_cuda and not back["c"].is_cuda
    np.testing.assert_array_equal(back["g"].cpu().numpy(), obj["g"].cpu().numpy())
    cpu = ember.load(tmp_path / "ckpt.safetensors", map_location="cpu")
    assert not cpu["g"].is_cuda
    gpu = ember.load(tmp_path / "ckpt.safetensors", map_location="cuda")
    assert gpu["c"].is_cuda


def _save_and_path(obj, tmp_path):
    path = tmp_path / "ckpt.safetensors"
    ember.save(obj, path)
    return path
