"""A reader and writer of the safetensors format (no dependency on the ``safetensors`` package).

The format: an 8-byte little-endian header length ``N``, ``N`` bytes of UTF-8 JSON that start
with ``{`` (padded with spaces), then the byte buffer. The header maps each tensor name to
``{"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}`` (offsets into the buffer,
little-endian, C order) and may hold ``"__metadata__": {str: str}``. The tensors must tile the
buffer exactly: no gaps, no overlaps, nothing after the last one.

The reader treats the file as hostile: every number is checked against the file's real size
before anything is allocated, and every problem is a ``CheckpointError`` naming the file.

Checksums (ember's addition, invisible to other readers): the writer puts a CRC-32 of each
tensor (its dtype, shape and bytes) and of the rest of the metadata under the metadata key
``ember_checksums`` (``{"algorithm": "crc32", "metadata": "1a2b3c4d", "tensors": {name:
"..."}}``), so the file stays a plain safetensors file. The reader checks them by default
(``verify=False`` skips it); files without the key (written by other tools) load unchecked.

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
import zlib
from collections.abc import Mapping
from typing import BinaryIO, NamedTuple

import ml_dtypes
import numpy as np

from .errors import CheckpointError

MAX_HEADER = 100 * 1024 * 1024  # the reference implementation's cap
CHECKSUM_KEY = "ember_checksums"
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
    """A checked header: the tensors in header order, the metadata (without the checksum
    table), where the buffer starts, and each tensor's CRC-32 to check (None: don't check)."""

    tensors: dict[str, TensorInfo]
    metadata: dict[str, str]
    data_start: int  # absolute position of the buffer in the stream
    checksums: dict[str, int] | None = None


def _tensor_crc(data, code: str, shape) -> int:
    """CRC-32 of a tensor's bytes, seeded with its dtype and shape (so a flipped shape or dtype
    that keeps the byte count is caught too)."""
    return zlib.crc32(data, zlib.crc32(f"{code}{list(shape)}".encode()))


def _metadata_crc(metadata: Mapping[str, str]) -> int:
    text = json.dumps(sorted(metadata.items()), separators=(",", ":"), ensure_ascii=True)
    return zlib.crc32(text.encode())


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


def _bytes_of(arr: np.ndarray) -> memoryview:
    return memoryview(arr.reshape(-1).view(np.uint8))


def _write_array(f: BinaryIO, arr: np.ndarray) -> None:
    """Write one contiguous array's bytes (kept separate so tests can fail a save midway)."""
    if arr.size:
        f.write(_bytes_of(arr))


def write(
    f: BinaryIO,
    arrays: Mapping[str, np.ndarray],
    metadata: Mapping[str, str] | None,
    *,
    checksums: bool = True,
) -> None:
    """Write ``arrays`` (name -> host array) and string ``metadata`` to the binary stream ``f``.

    Tensors are laid out widest dtype first, so with the header padded to 8 bytes every tensor
    starts at a multiple of its item size (as the reference writer does). ``checksums`` adds
    the ``ember_checksums`` metadata entry (see the module docstring).

    >>> import io, numpy as np
    >>> from ember.serialization import safetensors as st
    >>> buf = io.BytesIO()
    >>> st.write(buf, {"w": np.zeros(2, np.float32)}, None)
    >>> st.CHECKSUM_KEY.encode() in buf.getvalue()
    True
    """
    prepared = []
    for name, arr in arrays.items():
        if not isinstance(name, str) or name == "__metadata__":
            raise CheckpointError(f"safetensors: invalid tensor name {name!r}")
        arr = _host_array(arr)
        prepared.append((name, dtype_code(arr.dtype), arr))
    prepared.sort(key=lambda item: -item[2].itemsize)  # stable: keeps the caller's order otherwise
    header: dict = {}
    metadata = dict(metadata or {})
    for k, v in metadata.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise CheckpointError("safetensors: __metadata__ must map strings to strings")
    if checksums:
        if CHECKSUM_KEY in metadata:
            raise CheckpointError(f"safetensors: the metadata key {CHECKSUM_KEY!r} is ember's own")
        table = {
            name: f"{_tensor_crc(_bytes_of(arr), code, arr.shape):08x}"
            for name, code, arr in prepared
        }
        metadata[CHECKSUM_KEY] = json.dumps(
            {"algorithm": "crc32", "metadata": f"{_metadata_crc(metadata):08x}", "tensors": table},
            separators=(",", ":"),
        )
    if metadata:
        header["__metadata__"] = metadata
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
        return "; it is a zip archive (a torch.save file? ember.load reads those)"
    if head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return (
            "; it is a Python pickle but not a torch.save file (those start with PyTorch's "
            "magic number): ember never runs a bare pickle"
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
        if isinstance(code, str) and code in _FOREIGN:
            fail(f"tensor {name!r} has dtype {code}, which ember has no dtype for")
        fail(f"tensor {name!r} has unknown dtype {code!r:.40}")
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


def _checksum_table(metadata: dict, tensors: dict, fail) -> dict[str, int] | None:
    """The checksum table of a file's metadata (removed from it), checked against the rest."""
    raw = metadata.pop(CHECKSUM_KEY, None)
    if raw is None:
        return None
    try:
        doc = parse_json(raw)
    except (ValueError, RecursionError):
        doc = None
    if not (
        isinstance(doc, dict)
        and doc.get("algorithm") == "crc32"
        and isinstance(doc.get("tensors"), dict)
        and isinstance(doc.get("metadata"), str)
        and all(isinstance(v, str) for v in doc["tensors"].values())
    ):
        fail(f"its {CHECKSUM_KEY} metadata is damaged (not a crc32 table)")

    def number(text: str, what: str) -> int:
        if len(text) != 8 or text.strip("0123456789abcdef"):
            fail(f"the checksum of {what} in {CHECKSUM_KEY} is damaged ({text!r:.20})")
        return int(text, 16)

    if number(doc["metadata"], "the metadata") != _metadata_crc(metadata):
        fail("the header's metadata does not match its checksum (the file is corrupted)")
    table = doc["tensors"]
    for name in tensors:
        if name not in table:
            fail(
                f"tensor {name!r:.80} has no checksum in {CHECKSUM_KEY} (the file was changed "
                "after ember wrote it, or is corrupted; load with verify=False to skip checks)"
            )
    for name in table:
        if name not in tensors:
            fail(f"{CHECKSUM_KEY} lists tensor {name!r:.80}, which the file does not hold")
    return {name: number(text, f"tensor {name!r:.80}") for name, text in table.items()}


def read_header(f: BinaryIO, source: str = "<stream>", verify: bool = True) -> Header:
    """Read and check the header of the safetensors stream ``f`` (positioned at its start).

    With ``verify``, the checksum table (when the file has one) is checked against the
    metadata, and kept for ``read_array`` to check each tensor's bytes.

    >>> import io, numpy as np
    >>> from ember.serialization import safetensors as st
    >>> buf = io.BytesIO()
    >>> st.write(buf, {"w": np.zeros((2, 3), np.float32)}, {"note": "hi"})
    >>> _ = buf.seek(0)
    >>> h = st.read_header(buf)
    >>> h.tensors["w"].shape, h.metadata
    ((2, 3), {'note': 'hi'})
    """

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
    if verify:
        checksums = _checksum_table(metadata, tensors, fail)
    else:
        checksums = None
        metadata.pop(CHECKSUM_KEY, None)
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
    return Header(tensors, metadata, start + 8 + n, checksums)


def read_array(
    f: BinaryIO, header: Header, info: TensorInfo, source: str = "<stream>"
) -> np.ndarray:
    """Read one tensor into a fresh, writable, aligned array of its own, checking its
    checksum when the header holds one (``CheckpointError`` naming the tensor if it differs)."""
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
    if header.checksums is not None:
        crc = _tensor_crc(
            memoryview(arr.reshape(-1).view(np.uint8)), _CODES[info.dtype], info.shape
        )
        if crc != header.checksums[info.name]:
            raise CheckpointError(
                f"{source}: tensor {info.name!r} is corrupted: its bytes do not match the "
                f"checksum written with it (crc32 {crc:08x}, expected "
                f"{header.checksums[info.name]:08x}); load with verify=False to read it anyway"
            )
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


def read(
    f: BinaryIO, source: str = "<stream>", verify: bool = True
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """All tensors of a safetensors stream (in header order) and its metadata (checksums
    checked unless ``verify=False``)."""
    f = seekable(f)
    header = read_header(f, source, verify)
    arrays = {name: read_array(f, header, info, source) for name, info in header.tensors.items()}
    return arrays, header.metadata
