"""Checkpoint integrity: checksums, tensors loaded once, bounded memory, fuzzed corruptions.

Every corrupted file either loads exactly the saved object (a harmless change, e.g. header
padding) or raises ``CheckpointError`` naming the file: never wrong numbers, another exception,
a hang or an allocation the file's size does not pay for.
"""

import io
import json
import time
import tracemalloc

import numpy as np
import pytest

import ember
from ember.serialization import CheckpointError
from ember.serialization import safetensors as st


def _save(obj, **kw) -> bytes:
    buf = io.BytesIO()
    ember.save(obj, buf, **kw)
    return buf.getvalue()


def _split(blob):
    n = int.from_bytes(blob[:8], "little")
    return json.loads(blob[8 : 8 + n]), blob[8 + n :]


def _join(header, data):
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    return len(raw).to_bytes(8, "little") + raw + data


def _data_offset(blob, name):
    header, _ = _split(blob)
    n = int.from_bytes(blob[:8], "little")
    return 8 + n + header[name]["data_offsets"][0]


def _same(a, b):
    if isinstance(a, ember.Tensor):
        return (
            isinstance(b, ember.Tensor)
            and a.dtype is b.dtype
            and a.shape == b.shape
            and a.requires_grad == b.requires_grad
            and np.array_equal(a.numpy(force=True), b.numpy(force=True), equal_nan=True)
        )
    if isinstance(a, dict):
        return type(a) is type(b) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    return type(a) is type(b) and a == b


# -- item 2: one stored tensor, loaded once ---------------------------------------------------


def test_structure_naming_one_tensor_many_times_loads_it_once():
    big = ember.arange(250_000, dtype=ember.float32)  # 1 MB
    blob = _save({"w": big})
    header, data = _split(blob)
    doc = json.loads(header["__metadata__"]["ember"])
    doc["root"] = [{"tensor": "w"}] * 2000
    header["__metadata__"]["ember"] = json.dumps(doc)
    del header["__metadata__"]["ember_checksums"]  # a hand-edited file: no checksums
    hostile = _join(header, data)
    tracemalloc.start()
    try:
        back = ember.load(io.BytesIO(hostile))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(back) == 2000 and all(t is back[0] for t in back)
    assert peak < 3 * len(hostile)  # was 2,000 copies (2 GB)
    np.testing.assert_array_equal(back[0].numpy(), big.numpy())


def test_one_name_with_two_locations_or_grad_flags_is_refused():
    blob = _save({"w": ember.ones(2)})
    for other in ({"tensor": "w", "requires_grad": True}, {"tensor": "w", "location": "cuda:0"}):
        header, data = _split(blob)
        doc = json.loads(header["__metadata__"].pop("ember"))
        doc["root"] = [{"tensor": "w"}, other]
        header["__metadata__"] = {"ember": json.dumps(doc)}
        with pytest.raises(CheckpointError, match="'w' is referred to with location"):
            ember.load(io.BytesIO(_join(header, data)))


def test_shared_tensor_round_trip_keeps_requires_grad_and_parameters_tied(tmp_path):
    emb = ember.nn.Parameter(ember.randn(3, 2))
    sd = {"embed.weight": emb, "head.weight": emb, "step": 4}
    ember.save(sd, tmp_path / "tied.safetensors")
    back = ember.load(tmp_path / "tied.safetensors")
    assert back["embed.weight"] is back["head.weight"] and back["head.weight"].requires_grad
    np.testing.assert_array_equal(back["head.weight"].detach().numpy(), emb.detach().numpy())


# -- item 3: checksums ------------------------------------------------------------------------


def _obj():
    rng = np.random.default_rng(0)
    return {
        "model": {"w": ember.tensor(rng.standard_normal((3, 2)), dtype=ember.float32)},
        "mask": ember.tensor([True, False, True]),
        "h": ember.tensor([1.5, 2], dtype=ember.bfloat16),
        "empty": ember.zeros(0, 3),
        "epoch": 3,
        "lr": 0.001,
    }


def test_flipped_byte_in_a_tensor_names_the_tensor_and_file(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    ember.save(_obj(), path)
    blob = bytearray(path.read_bytes())
    blob[_data_offset(bytes(blob), "model.w") + 5] ^= 0x10
    path.write_bytes(bytes(blob))
    with pytest.raises(
        CheckpointError, match=r"ckpt\.safetensors: tensor 'model\.w' is corrupted.*verify=False"
    ):
        ember.load(path)
    back = ember.load(path, verify=False)  # the opt-out reads the damaged numbers
    assert back["model"]["w"].shape == (3, 2) and back["epoch"] == 3


def test_flipped_bool_byte_is_caught():
    blob = bytearray(_save(_obj()))
    blob[_data_offset(bytes(blob), "mask") + 1] = 7  # would read back as True
    with pytest.raises(CheckpointError, match="tensor 'mask' is corrupted"):
        ember.load(io.BytesIO(bytes(blob)))


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda h: h["model.w"].update(shape=[2, 3]), "'model.w' is corrupted"),
        (lambda h: h["model.w"].update(dtype="I32"), "'model.w' is corrupted"),
        (lambda h: h["h"].update(dtype="F16"), "'h' is corrupted"),
        (lambda h: _edit_doc(h, '"epoch"', '"epocj"'), "metadata does not match its checksum"),
        (lambda h: _edit_doc(h, "0.001", "0.007"), "metadata does not match its checksum"),
        (lambda h: h["__metadata__"].update(format="tf"), "metadata does not match its checksum"),
        (lambda h: h["__metadata__"].update(ember_checksums="{"), "ember_checksums metadata is"),
        (lambda h: _edit_sums(h, lambda d: d["tensors"].pop("mask")), "'mask' has no checksum"),
        (lambda h: _edit_sums(h, lambda d: d["tensors"].update(x="0" * 8)), "lists tensor 'x'"),
        (lambda h: _edit_sums(h, lambda d: d["tensors"].update(h="xyz")), "of tensor 'h' in"),
        (lambda h: _edit_sums(h, lambda d: d.update(algorithm="md5")), "not a crc32 table"),
        (lambda h: _edit_sums(h, lambda d: d.update(metadata=None)), "not a crc32 table"),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_header_changes_that_keep_the_file_valid_are_caught(edit, match):
    header, data = _split(_save(_obj()))
    edit(header)
    with pytest.raises(CheckpointError, match=match):
        ember.load(io.BytesIO(_join(header, data)))


def _edit_doc(h, old, new):
    assert old in h["__metadata__"]["ember"]
    h["__metadata__"]["ember"] = h["__metadata__"]["ember"].replace(old, new)


def _edit_sums(h, fn):
    doc = json.loads(h["__metadata__"]["ember_checksums"])
    fn(doc)
    h["__metadata__"]["ember_checksums"] = json.dumps(doc)


def test_files_without_checksums_load(tmp_path):
    header, data = _split(_save(_obj()))
    del header["__metadata__"]["ember_checksums"]
    assert _same(ember.load(io.BytesIO(_join(header, data))), _obj())
    buf = io.BytesIO()
    st.write(buf, {"a": np.arange(3, dtype=np.int16)}, {"format": "pt"}, checksums=False)
    assert b"ember_checksums" not in buf.getvalue()
    assert ember.load(io.BytesIO(buf.getvalue()))["a"].tolist() == [0, 1, 2]


def test_checksum_metadata_is_hidden_and_readable_by_other_tools(tmp_path):
    arrays, meta = st.read(io.BytesIO(_save({"w": ember.ones(2)})))
    assert "ember_checksums" not in meta and set(meta) == {"format", "ember"}
    st_numpy = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "m.safetensors"
    ember.save({"w": ember.ones(2)}, path)
    assert st_numpy.load_file(str(path))["w"].tolist() == [1.0, 1.0]


def test_metadata_key_is_reserved():
    with pytest.raises(CheckpointError, match="'ember_checksums' is ember's own"):
        st.write(io.BytesIO(), {}, {"ember_checksums": "{}"})


# -- item 8: malformed header fields are CheckpointErrors -------------------------------------


@pytest.mark.parametrize(
    "field, value",
    [
        ("dtype", ["F32"]),
        ("dtype", {"F32": 1}),
        ("dtype", None),
        ("dtype", 1.5),
        ("shape", [[2]]),
        ("shape", {"a": 1}),
        ("shape", [None]),
        ("data_offsets", [[0], 8]),
        ("data_offsets", {"0": 8}),
        ("data_offsets", "0,8"),
    ],
)
def test_wrongly_typed_header_fields_are_checkpoint_errors(field, value):
    header, data = _split(_save({"w": ember.ones(2)}))
    header["w"][field] = value
    with pytest.raises(CheckpointError, match="not a valid safetensors file: .*'w'"):
        ember.load(io.BytesIO(_join(header, data)))


@pytest.mark.parametrize(
    "node",
    [
        {"float": ["inf"]},
        {"float": {"inf": 1}},
        {"dtype": ["float32"]},
        {"device": ["cpu"]},
        {"device": {"cpu": 1}},
        {"tensor": ["w"]},
        {"dict": [[["k"], 1]]},
        {"dict": {"k": 1}},
        {"tuple": {"a": 1}},
    ],
    ids=str,
)
def test_wrongly_typed_structure_nodes_are_checkpoint_errors(node):
    header, data = _split(_save({"w": ember.ones(2)}))
    doc = json.loads(header["__metadata__"].pop("ember"))
    doc["root"] = node
    header["__metadata__"] = {"ember": json.dumps(doc)}
    with pytest.raises(CheckpointError, match="invalid ember structure metadata"):
        ember.load(io.BytesIO(_join(header, data)))


# -- fuzz -------------------------------------------------------------------------------------


def _outcome(blob, want):
    """Load ``blob``: the saved object exactly, or a CheckpointError; nothing else."""
    tracemalloc.start()
    try:
        got = ember.load(io.BytesIO(blob))
    except CheckpointError:
        return "refused"
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < 64 * len(blob) + (1 << 20), "allocated more than the file pays for"
    assert _same(got, want), "a corrupted file loaded as different data"
    return "loaded"


def _mutations(blob, rng):
    n = int.from_bytes(blob[:8], "little")
    header_end = 8 + n
    kind = rng.integers(6)
    b = bytearray(blob)
    if kind == 0:  # flip bits, mostly in the header
        for _ in range(rng.integers(1, 4)):
            w = int(rng.integers(0, header_end if rng.integers(3) else len(b)))
            b[w] ^= 1 << int(rng.integers(8))
    elif kind == 1:  # random bytes anywhere
        for _ in range(rng.integers(1, 4)):
            b[int(rng.integers(len(b)))] = int(rng.integers(256))
    elif kind == 2:  # truncate
        del b[int(rng.integers(len(b))) :]
    elif kind == 3:  # duplicate a run of bytes
        i = int(rng.integers(len(b)))
        k = int(rng.integers(1, 64))
        b[i:i] = b[i : i + k]
    elif kind == 4:  # delete a run of bytes
        i = int(rng.integers(len(b)))
        del b[i : i + int(rng.integers(1, 64))]
    else:  # swap two tensors' data (same size in this object) or two bytes far apart
        i, j = sorted(int(x) for x in rng.integers(header_end, len(b), size=2))
        b[i], b[j] = b[j], b[i]
    return bytes(b)


def _fuzz_object():
    rng = np.random.default_rng(5)
    w = ember.tensor(rng.standard_normal((4, 3)), dtype=ember.float32)
    return {
        "model": {"w": w, "b": ember.zeros(4), "tied": w},
        "opt": {"state": {0: {"step": ember.tensor(2.0), "m": ember.ones(4, 3)}}},
        "mask": ember.tensor([True, False]),
        "i": ember.tensor([[1, -2]], dtype=ember.int16),
        "half": ember.tensor([0.5, 1], dtype=ember.bfloat16),
        "groups": [{"lr": 0.1, "betas": (0.9, 0.999), "nan": float("nan")}],
        "epoch": 3,
    }


def test_fuzz_corrupted_checkpoints_load_correctly_or_are_refused():
    want = _fuzz_object()
    blob = _save(want)
    assert _outcome(blob, want) == "loaded"
    rng = np.random.default_rng(2026)
    start = time.perf_counter()
    outcomes = []
    for _ in range(1500):
        outcomes.append(_outcome(_mutations(blob, rng), want))
        if time.perf_counter() - start > 30:
            break
    assert time.perf_counter() - start < 45
    assert outcomes.count("refused") > len(outcomes) // 2


def test_fuzz_header_fields_replaced_by_other_json():
    """Every field of every entry replaced by values of every JSON type."""
    want = _fuzz_object()
    header, data = _split(_save(want))
    values = [None, True, 0, -1, 2**64, 1.5, "F32", "", [], [1], [[1]], {}, {"a": 1}, "x" * 300]
    for name in [k for k in header if k != "__metadata__"]:
        for field in ("dtype", "shape", "data_offsets"):
            for v in values:
                h = json.loads(json.dumps(header))
                h[name][field] = v
                _outcome(_join(h, data), want)
    for key in ("ember", "ember_checksums", "format"):
        for v in values:
            h = json.loads(json.dumps(header))
            h["__metadata__"][key] = v if isinstance(v, str) else json.dumps(v)
            _outcome(_join(h, data), want)
