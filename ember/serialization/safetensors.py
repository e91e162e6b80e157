"""A reader and writer of the safetensors format (no dependency on the ``safetensors`` package).

The format: an 8-byte little-endian header length ``N``, ``N`` bytes of UTF-8 JSON that start
with ``{`` (padded with spaces), then the byte buffer. The header maps each tensor name to
``{"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}`` (offsets into the buffer,
little-endian, C order) and may hold ``"__metadata__": {str: str}``. The tensors must tile the
buffer exactly: no gaps, no overlaps, nothing after the last one.

The reader treats the file as hostile: every number is checked against the file's real size
before anything is allocated, and every problem is a ``CheckpointError`` naming the file.

>>> import io, numpy as np
>>> from ember.serialization import safetensors as st
>>> buf = io.BytesIO()
>>> st.write(buf, {"w": np.arange(3, dtype=np.float32)}, {"format": "pt"})
>>> arrays, meta = st.read(io.BytesIO(buf.getvalue()))
>>> arrays["w"], meta
(array([0., 1., 2.], dtype=float32), {'format': 'pt'})
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping
from typing import BinaryIO, NamedTuple

import ml_dtypes
import numpy as np

from .errors import CheckpointError

MAX_HEADER = 100 * 1024 * 1024  # the reference implementation's cap
MAX_NDIM = 64  # NumPy's limit
_MAX_DIM = 1 << 62

DTYPES: dict[str, np.dtype] = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype(ml_dtypes.bfloat16),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}
_CODES = {dt: code for code, dt in DTYPES.items()}
# In the format but with no ember dtype: named in the error instead of "unknown".
_FOREIGN = {"U16", "U32", "U64", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4", "C64"}


class TensorInfo(NamedTuple):
    """One header entry, checked: offsets are relative to the start of the buffer."""

    name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    begin: int
    end: int


class Header(NamedTuple):
    """A checked header: the tensors in header order, the metadata, where the buffer starts."""

    tensors: dict[str, TensorInfo]
    metadata: dict[str, str]
    data_start: int  # absolute position of the buffer in the stream


def dtype_code(dtype: np.dtype) -> str:
    """The safetensors spelling of a NumPy dtype ember can store.

    >>> import numpy as np
    >>> from ember.serialization.safetensors import dtype_code
    >>> dtype_code(np.dtype(np.float32))
    'F32'
    """
    code = _CODES.get(np.dtype(dtype))
    if code is None:
        raise CheckpointError(f"safetensors: cannot store dtype {np.dtype(dtype)}")
    return code


# -- writing -------------------------------------------------------------------------------------


def _host_array(arr) -> np.ndarray:
    """Contiguous little-endian host copy-or-view of ``arr``."""
    if not arr.flags.c_contiguous:  # (np.ascontiguousarray would turn 0-d into 1-d)
        arr = arr.copy(order="C")
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return arr


def _write_array(f: BinaryIO, arr: np.ndarray) -> None:
    """Write one contiguous array's bytes (kept separate so tests can fail a save midway)."""
    if arr.size:
        f.write(memoryview(arr.reshape(-1).view(np.uint8)))


def write(
    f: BinaryIO, arrays: Mapping[str, np.ndarray], metadata: Mapping[str, str] | None
) -> None:
    """Write ``arrays`` (name -> host array) and string ``metadata`` to the binary stream ``f``.

    Tensors are laid out widest dtype first, so with the header padded to 8 bytes every tensor
    starts at a multiple of its item size (as the reference writer does).
    """
    prepared = []
    for name, arr in arrays.items():
        if not isinstance(name, str) or name == "__metadata__":
            raise CheckpointError(f"safetensors: invalid tensor name {name!r}")
        arr = _host_array(arr)
        prepared.append((name, dtype_code(arr.dtype), arr))
    prepared.sort(key=lambda item: -item[2].itemsize)  # stable: keeps the caller's order otherwise
    header: dict = {}
    if metadata:
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise CheckpointError("safetensors: __metadata__ must map strings to strings")
        header["__metadata__"] = dict(metadata)
    offset = 0
    for name, code, arr in prepared:
        header[name] = {
            "dtype": code,
            "shape": list(arr.shape),
            "data_offsets": [offset, offset + arr.nbytes],
        }
        offset += arr.nbytes
    text = json.dumps(header, separators=(",", ":"), allow_nan=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    f.write(len(text).to_bytes(8, "little"))
    f.write(text)
    for _, _, arr in prepared:
        _write_array(f, arr)


# -- reading -------------------------------------------------------------------------------------


def _sniff(head: bytes) -> str:
    """A hint for files that are some other format (pickles above all)."""
    if head.startswith(b"PK\x03\x04"):
        return (
            "; it is a zip archive, as torch.save writes (a pickle inside): ember never unpickles "
            "files, since loading a pickle can run arbitrary code; convert it once with PyTorch "
            "(safetensors.torch.save_file(torch.load(path), new_path)) and load that"
        )
    if head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return (
            "; it is a Python pickle (e.g. an old torch.save file): ember never unpickles files, "
            "since loading a pickle can run arbitrary code; convert it to safetensors with PyTorch"
        )
    if head.startswith(b"\x93NUMPY"):
        return "; it is a NumPy .npy file: load it with numpy.load and wrap it with ember.tensor"
    return ""


def _stream_size(f: BinaryIO, start: int) -> int:
    end = f.seek(0, os.SEEK_END)
    f.seek(start)
    return end - start


def _read_exact(f: BinaryIO, n: int) -> bytes:
    data = f.read(n)
    return data if data is not None else b""


def _no_duplicates(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise ValueError(f"duplicate key {k!r}")
        d[k] = v
    return d


def _no_constants(name):
    raise ValueError(f"{name} is not valid JSON")


def parse_json(text: str):
    """``json.loads`` that refuses duplicate keys and NaN/Infinity (ValueError/RecursionError)."""
    return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)


def _is_uint(x) -> bool:
    return type(x) is int and x >= 0


def _check_entry(name: str, entry, fail) -> TensorInfo:
    if not isinstance(entry, dict):
        fail(f"header entry {name!r} is a {type(entry).__name__}, not an object")
    for key in ("dtype", "shape", "data_offsets"):
        if key not in entry:
            fail(f"header entry {name!r} has no {key!r}")
    code = entry["dtype"]
    if not isinstance(code, str) or code not in DTYPES:
        if code in _FOREIGN:
            fail(f"tensor {name!r} has dtype {code}, which ember has no dtype for")
        fail(f"tensor {name!r} has unknown dtype {code!r}")
    shape = entry["shape"]
    if not isinstance(shape, list) or len(shape) > MAX_NDIM:
        fail(
            f"tensor {name!r}: shape must be a list of at most {MAX_NDIM} sizes, not {shape!r:.80}"
        )
    for s in shape:
        if not _is_uint(s) or s >= _MAX_DIM:
            fail(f"tensor {name!r}: invalid size {s!r:.40} in shape (sizes are integers >= 0)")
    offsets = entry["data_offsets"]
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_is_uint, offsets))):
        fail(f"tensor {name!r}: data_offsets must be two integers >= 0, got {offsets!r:.80}")
    begin, end = offsets
    dtype = DTYPES[code]
    numel = 1
    for s in shape:
        numel *= s
    if end < begin or end - begin != numel * dtype.itemsize:
        fail(
            f"tensor {name!r}: data_offsets [{begin}, {end}] hold {end - begin} bytes but shape "
            f"{tuple(shape)} of {code} needs {numel * dtype.itemsize}"
        )
    return TensorInfo(name, dtype, tuple(shape), begin, end)


def read_header(f: BinaryIO, source: str = "<stream>") -> Header:
    """Read and check the header of the safetensors stream ``f`` (positioned at its start)."""

    def fail(problem: str, hint: str = ""):
        raise CheckpointError(f"{source}: not a valid safetensors file: {problem}{hint}")

    start = f.tell()
    size = _stream_size(f, start)
    head = _read_exact(f, 8)
    if len(head) < 8:
        fail(f"the file is {size} bytes, shorter than the 8-byte header length", _sniff(head))
    n = int.from_bytes(head, "little")
    if n > MAX_HEADER:
        fail(f"header length {n} is over the {MAX_HEADER}-byte limit", _sniff(head))
    if 8 + n > size:
        fail(f"header length {n} runs past the end of the {size}-byte file", _sniff(head))
    raw = _read_exact(f, n)
    if len(raw) < n:
        fail(f"the file ended inside the {n}-byte header")
    if not raw.startswith(b"{"):
        fail("the header does not start with '{'", _sniff(head))
    try:
        header = parse_json(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        fail(f"the header is not UTF-8 ({e.reason} at byte {e.start})")
    except RecursionError:
        fail("the header JSON is nested too deeply")
    except ValueError as e:
        fail(f"the header is not valid JSON ({e})")
    if not isinstance(header, dict):
        fail(f"the header is a JSON {type(header).__name__}, not an object")
    metadata = header.pop("__metadata__", None)
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        fail("__metadata__ must be an object whose values are all strings")
    tensors = {name: _check_entry(name, entry, fail) for name, entry in header.items()}
    buffer = size - 8 - n
    pos = 0
    for info in sorted(tensors.values(), key=lambda t: (t.begin, t.end)):
        if info.begin != pos:
            what = "overlaps the tensor before it" if info.begin < pos else "leaves a gap before it"
            fail(f"tensor {info.name!r} at byte {info.begin} {what} (expected {pos})")
        pos = info.end
    if pos != buffer:
        if pos > buffer:
            fail(f"the tensors need {pos} bytes of data but the file holds {buffer} (truncated?)")
        fail(f"the tensors cover {pos} bytes but the file holds {buffer}: extra bytes at the end")
    return Header(tensors, metadata, start + 8 + n)


def read_array(
    f: BinaryIO, header: Header, info: TensorInfo, source: str = "<stream>"
) -> np.ndarray:
    """Read one tensor into a fresh, writable, aligned array of its own."""
    try:
        arr = np.empty(info.shape, dtype=np.uint8 if info.dtype.kind == "b" else info.dtype)
    except (ValueError, MemoryError) as e:
        raise CheckpointError(
            f"{source}: tensor {info.name!r} of shape {info.shape}: {e}"
        ) from None
    nbytes = info.end - info.begin
    if nbytes:
        f.seek(header.data_start + info.begin)
        view = memoryview(arr.reshape(-1).view(np.uint8))
        got = 0
        readinto = getattr(f, "readinto", None)
        while got < nbytes:
            if readinto is not None:
                k = readinto(view[got:])
            else:
                chunk = f.read(nbytes - got)
                k = len(chunk or b"")
                view[got : got + k] = chunk or b""
            if not k:
                raise CheckpointError(
                    f"{source}: the file ended inside tensor {info.name!r} (changed while loading?)"
                )
            got += k
    if info.dtype.kind == "b":
        out = arr.view(np.bool_)
        np.not_equal(arr, 0, out=out)  # any nonzero byte is True (keeps NumPy bools canonical)
        return out
    if not arr.dtype.isnative:  # big-endian hosts only
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return arr


def seekable(f: BinaryIO) -> BinaryIO:
    """``f`` itself when it can seek, else its remaining bytes in memory."""
    try:
        if f.seekable():
            return f
    except (AttributeError, OSError):
        pass
    return io.BytesIO(f.read())


def read(f: BinaryIO, source: str = "<stream>") -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """All tensors of a safetensors stream (in header order) and its metadata."""
    f = seekable(f)
    header = read_header(f, source)
    arrays = {name: read_array(f, header, info, source) for name, info in header.tensors.items()}
    return arrays, header.metadata
