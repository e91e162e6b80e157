"""Hostile and corrupt files: every one is refused with a CheckpointError naming the problem.

Nothing from the file is run, nothing huge is allocated, and nothing hangs: the fuzz below
flips bytes and truncates a valid file and checks each result either loads tensors whose sizes
fit in the file or raises ``CheckpointError`` (never another exception type).
"""

import io
import json
import time

import numpy as np
import pytest

import ember
from ember.serialization import CheckpointError
from ember.serialization import safetensors as st


def _blob(header, data=b"", n=None, pad=True):
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    if pad:
        raw += b" " * (-len(raw) % 8)
    return (len(raw) if n is None else n).to_bytes(8, "little") + raw + data


def _load(blob):
    return ember.load(io.BytesIO(blob))


def _entry(dtype="F32", shape=(2,), offsets=(0, 8)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


def _meta(root):
    return {"__metadata__": {"ember": json.dumps({"version": 1, "root": root})}}


HOSTILE = [
    (b"", "file is 0 bytes, shorter than the 8-byte header length"),
    (b"\x05\x00\x00", "file is 3 bytes"),
    (_blob(b"{}", n=2**63), "over the 104857600-byte limit"),
    (_blob(b"{}", n=100 * 1024 * 1024 + 1), "over the 104857600-byte limit"),
    (_blob(b"{}", n=4096), "header length 4096 runs past the end"),
    (_blob(b"[]"), "does not start with '{'"),
    (_blob(b"  {}"), "does not start with '{'"),
    (_blob(b'{"a": 1'), "not valid JSON"),
    (_blob(b"{\xff\xfe}"), "not UTF-8"),
    (_blob(b'{"a": NaN}'), "NaN is not valid JSON"),
    (_blob(b'{"a":' + b"[" * 100000 + b"1" + b"]" * 100000 + b"}"), "nested too deeply"),
    (_blob(b'{"x": ' + _blob(b"{}")[8:].strip() + b', "x": {}}'), "duplicate key 'x'"),
    (_blob({"w": 3}), "header entry 'w' is a int"),
    (_blob({"w": {"dtype": "F32", "shape": [2]}}), "has no 'data_offsets'"),
    (_blob({"w": _entry(dtype="F128")}, b"\0" * 8), "unknown dtype 'F128'"),
    (_blob({"w": _entry(dtype=7)}, b"\0" * 8), "unknown dtype 7"),
    (_blob({"w": _entry(dtype="U32")}, b"\0" * 8), "dtype U32, which ember has no dtype for"),
    (_blob({"w": _entry(shape=(-2,))}, b"\0" * 8), "invalid size -2"),
    (_blob({"w": _entry(shape=(2.0,))}, b"\0" * 8), "invalid size 2.0"),
    (_blob({"w": _entry(shape=(True,))}, b"\0" * 8), "invalid size True"),
    (_blob({"w": _entry(shape=(0, 2**62))}), "invalid size 4611686018427387904"),
    (_blob({"w": {**_entry(), "shape": 2}}, b"\0" * 8), "shape must be a list"),
    (_blob({"w": _entry(shape=(1,) * 65, offsets=(0, 4))}, b"\0" * 4), "at most 64 sizes"),
    (_blob({"w": _entry(shape=(3,))}, b"\0" * 8), r"hold 8 bytes but shape \(3,\) of F32 needs 12"),
    (_blob({"w": _entry(offsets=(8, 0))}, b"\0" * 8), "hold -8 bytes"),
    (_blob({"w": _entry(offsets=(0, 8, 9))}, b"\0" * 8), "data_offsets must be two integers"),
    (_blob({"w": _entry(offsets=(-8, 0))}, b"\0" * 8), "data_offsets must be two integers"),
    (_blob({"w": _entry(offsets=(4, 12))}, b"\0" * 12), "leaves a gap before it"),
    (
        _blob({"a": _entry(offsets=(0, 8)), "b": _entry(offsets=(4, 12))}, b"\0" * 12),
        "'b' at byte 4 overlaps the tensor before it",
    ),
    (
        _blob({"a": _entry(offsets=(0, 8)), "b": _entry(offsets=(0, 8))}, b"\0" * 8),
        "overlaps",
    ),
    (_blob({"w": _entry(shape=(2**30,), offsets=(0, 2**32))}, b"\0" * 8), "truncated"),
    (_blob({"w": _entry()}, b"\0" * 4), "need 8 bytes of data but the file holds 4"),
    (_blob({"w": _entry()}, b"\0" * 12), "extra bytes at the end"),
    (_blob({"__metadata__": {"a": 1}}), "__metadata__ must be an object whose values"),
    (_blob({"__metadata__": []}), "__metadata__ must be an object"),
    (_blob({"__metadata__": {"ember": "{"}}), "ember metadata is not valid JSON"),
    (_blob({"__metadata__": {"ember": "[]"}}), "not an object with root/version"),
    (_blob({"__metadata__": {"ember": '{"version": 3, "root": 1}'}}), "version 3 is not supported"),
    (_blob({"__metadata__": {"ember": '{"version": 2, "pickle": 7}'}}), "pickle is not base64"),
    (_blob({"__metadata__": {"ember": '{"version": 2, "pickle": "@@"}'}}), "pickle is not base64"),
    (_blob(_meta({"tensor": "missing"})), "refers to tensor 'missing', which is not in the file"),
    (_blob(_meta({"tensor": 3})), "bad tensor node"),
    (_blob(_meta({"tensor": "w", "x": 1})), "unexpected keys"),
    (_blob(_meta({"tuple": [], "dict": []})), "is not one tagged value"),
    (_blob(_meta({"weird": 1})), "is not one tagged value"),
    (_blob(_meta({"tuple": 3})), "tuple node does not hold a list"),
    (_blob(_meta({"dict": [[1, 2, 3]]})), "is not a \\[key, value\\] pair"),
    (_blob(_meta({"dict": [[1.5, 2]]})), "dict key 1.5 is not a str or int"),
    (_blob(_meta({"dict": [[True, 2]]})), "dict key True"),
    (_blob(_meta({"dict": [["a", 1], ["a", 2]]})), "duplicate dict key 'a'"),
    (_blob(_meta({"float": "1e400"})), "float node"),
    (_blob(_meta({"dtype": "complex128"})), "unknown dtype 'complex128'"),
    (_blob(_meta({"dtype": ["float32"]})), "unknown dtype"),
    (_blob(_meta({"device": "tpu:0"})), "bad device 'tpu:0'"),
    (_blob(_meta({"device": {}})), "bad device"),
    (
        _blob({**_meta({"tensor": "w", "location": "tpu"}), "w": _entry()}, b"\0" * 8),
        "tensor 'w' has bad device 'tpu'",
    ),
    (
        _blob({**_meta({"tensor": "w", "requires_grad": True}), "w": _entry("I32")}, b"\0" * 8),
        "tensor 'w' of dtype int32 cannot require grad",
    ),
    (
        _blob({**_meta({"tensor": "w", "requires_grad": 1}), "w": _entry()}, b"\0" * 8),
        "bad tensor node",
    ),
    (
        _blob({"__metadata__": {"ember": '{"version":1,"root":' + "[" * 5000 + "]" * 5000 + "}"}}),
        "nested too deeply",
    ),
]


@pytest.mark.parametrize("blob,match", HOSTILE, ids=[m[:40] for _, m in HOSTILE])
def test_hostile_file_is_refused(blob, match):
    with pytest.raises(CheckpointError, match=match):
        _load(blob)


def test_error_names_the_file(tmp_path):
    path = tmp_path / "broken.safetensors"
    path.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json!!}    ")
    with pytest.raises(CheckpointError, match=r"broken\.safetensors: not a valid safetensors file"):
        ember.load(path)


def test_checkpoint_error_is_an_ember_runtime_error():
    assert issubclass(CheckpointError, ember.EmberError)
    assert issubclass(CheckpointError, RuntimeError)
    assert ember.CheckpointError is CheckpointError


def test_valid_hand_built_files_load():
    # unpadded header, zero-size tensors sharing an offset, tensors out of header order, no metadata
    header = {
        "b": _entry("U8", (2,), (4, 6)),
        "a": _entry("I16", (2,), (0, 4)),
        "z": _entry("F64", (0, 3), (6, 6)),
        "y": _entry("BOOL", (), (6, 7)),
    }
    back = _load(_blob(header, bytes([1, 0, 2, 0, 7, 8, 5]), pad=False))
    assert list(back) == ["b", "a", "z", "y"]
    assert back["a"].tolist() == [1, 2] and back["b"].tolist() == [7, 8]
    assert back["z"].shape == (0, 3) and back["y"].item() is True  # nonzero byte reads as True


def _valid_blob():
    rng = np.random.default_rng(0)
    obj = {
        "model": {"w": ember.tensor(rng.standard_normal((3, 2))), "b": ember.zeros(3)},
        "h": ember.tensor([1, 2], dtype=ember.bfloat16),
        "m": ember.tensor([True, False]),
        "i": ember.tensor([[1, 2]], dtype=ember.int16),
        "e": ember.zeros(0, 2),
        "opt": {"state": {0: {"step": ember.tensor(2.0)}}, "groups": [{"lr": 0.1, "b": (1, 2)}]},
        "epoch": 3,
    }
    buf = io.BytesIO()
    ember.save(obj, buf)
    return buf.getvalue()


def _check_outcome(blob):
    """Load ``blob``: it must load tensors that fit in the file, or raise CheckpointError."""
    try:
        obj = _load(blob)
    except CheckpointError:
        return "refused"
    total = 0
    stack = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, ember.Tensor):
            arr = x.numpy(force=True)
            assert arr.flags.writeable and arr.nbytes == x.numel() * x.element_size()
            total += arr.nbytes
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
    assert total <= len(blob)
    return "loaded"


def test_fuzz_truncations():
    blob = _valid_blob()
    assert _check_outcome(blob) == "loaded"
    outcomes = {_check_outcome(blob[:k]) for k in range(len(blob))}
    assert outcomes == {"refused"}  # the buffer must be fully covered: no prefix is valid


def test_fuzz_byte_flips():
    blob = _valid_blob()
    n = int.from_bytes(blob[:8], "little")
    rng = np.random.default_rng(1234)
    start = time.perf_counter()
    outcomes = []
    for i in range(600):
        b = bytearray(blob)
        k = int(rng.integers(1, 4))
        where = rng.integers(0, 8 + n if i % 3 else len(b), size=k)  # mostly the header
        for w in where:
            b[w] = int(rng.integers(0, 256)) if i % 2 else b[w] ^ (1 << int(rng.integers(8)))
        outcomes.append(_check_outcome(bytes(b)))
    assert time.perf_counter() - start < 20
    assert "refused" in outcomes and "loaded" in outcomes


def test_fuzz_flips_in_data_keep_shapes():
    blob = _valid_blob()
    n = int.from_bytes(blob[:8], "little")
    good = _load(blob)
    b = bytearray(blob)
    for i in range(8 + n, len(b)):
        b[i] ^= 0xFF
    with pytest.raises(CheckpointError, match="is corrupted: its bytes do not match"):
        _load(bytes(b))
    bad = ember.load(io.BytesIO(bytes(b)), verify=False)
    assert bad["model"]["w"].shape == good["model"]["w"].shape
    assert bad["m"].dtype is ember.bool and bad["m"].tolist() == [True, True]


def test_fuzz_random_headers():
    rng = np.random.default_rng(7)
    pieces = [b"{", b"}", b"[", b"]", b'"', b":", b",", b"0", b"-1", b"1e999", b"F32", b"BF16"]
    pieces += [b'"dtype"', b'"shape"', b'"data_offsets"', b'"__metadata__"', b" ", b"null", b"\\"]
    for _ in range(400):
        raw = b"{" + b"".join(pieces[j] for j in rng.integers(0, len(pieces), rng.integers(1, 30)))
        data = bytes(rng.integers(0, 256, rng.integers(0, 40), dtype=np.uint8))
        _check_outcome(_blob(raw, data, pad=bool(rng.integers(2))))


def test_header_length_cap_is_checked_before_reading(monkeypatch):
    monkeypatch.setattr(st, "MAX_HEADER", 16)
    with pytest.raises(CheckpointError, match="over the 16-byte limit"):
        _load(_blob({"a": _entry()}, b"\0" * 8))


def test_fuzz_numbers_in_header():
    """Rewrite shapes and offsets of a valid file with hostile numbers (huge, negative, zero)."""
    blob = _valid_blob()
    n = int.from_bytes(blob[:8], "little")
    header, data = json.loads(blob[8 : 8 + n]), blob[8 + n :]
    names = [k for k in header if k != "__metadata__"]
    rng = np.random.default_rng(3)
    choices = [0, 1, 2, 7, 8, -1, 2**31, 2**62, 2**63 + 5, 10**30, len(data), len(data) + 1]
    for _ in range(300):
        h = json.loads(json.dumps(header))
        entry = h[names[rng.integers(len(names))]]
        key = ["shape", "data_offsets"][rng.integers(2)]
        value = entry[key]
        if value and rng.integers(4):
            value[rng.integers(len(value))] = choices[rng.integers(len(choices))]
        else:
            value.append(choices[rng.integers(len(choices))])
        _check_outcome(_blob(h, data))
