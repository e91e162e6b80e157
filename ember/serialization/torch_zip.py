"""Reading PyTorch checkpoints (the zip archives ``torch.save`` writes) without torch.

The archive holds one folder ``<name>/`` with ``data.pkl`` (the pickled object; tensors refer
to storages by key), ``data/<key>`` (each storage's raw bytes, uncompressed), ``byteorder``
(``little`` or ``big``) and ``version``. ``data.pkl`` goes through the restricted unpickler of
``torch_pickle``, so only tensors, storages, dtypes, devices, ``torch.Size``, OrderedDict and
plain containers load; anything else is a ``CheckpointError`` naming the refused global.

The archive is treated as hostile: members must be stored uncompressed (as torch writes them),
a storage's size must equal its member's, every view must lie inside its storage, each storage
is read once and checked against the archive's CRC-32, and the tensors built from views that
cannot take their storage's array as is may copy at most ``COPY_FACTOR`` times the storage
bytes (plus ``COPY_SLACK``): a small file cannot make the loader allocate without bound.

>>> import io, zipfile
>>> from ember.serialization.torch_zip import is_torch_zip
>>> buf = io.BytesIO()
>>> with zipfile.ZipFile(buf, "w") as z:
...     z.writestr("m/data.pkl", b"\\x80\\x02}q\\x00.")
>>> is_torch_zip(buf.getvalue()[:4])
True
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

from .._tensor import Tensor
from .errors import CheckpointError
from .torch_pickle import StorageRef, TorchPolicy, read_exactly, storage_pid
from .unpickler import Invalid, guarded, read_pickle

_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # a zip member's local file header


def is_torch_zip(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a zip archive (as ``torch.save`` writes).

    >>> from ember.serialization.torch_zip import is_torch_zip
    >>> is_torch_zip(b"PK\\x03\\x04"), is_torch_zip(b"{}")
    (True, False)
    """
    return head.startswith(b"PK\x03\x04")


class _Archive:
    """The checked members of one torch zip archive and its storages, each read once."""

    def __init__(self, f: BinaryIO, source: str, verify: bool):
        self.f, self.source, self.verify = f, source, verify
        self.size = f.seek(0, 2)
        self.zip = zipfile.ZipFile(f)
        self.members = {i.filename: i for i in self.zip.infolist()}
        pkls = [n for n in self.members if n == "data.pkl" or n.endswith("/data.pkl")]
        if any(n.endswith("/constants.pkl") for n in self.members):
            self.fail("it is a TorchScript archive (torch.jit.save), not a torch.save file")
        if len(pkls) != 1:
            self.fail(f"it holds {len(pkls)} data.pkl files (a torch.save archive holds one)")
        self.prefix = pkls[0][: -len("data.pkl")]
        self.little = self._byteorder()
        self.storages: dict[str, StorageRef] = {}
        self.raw: dict[str, np.ndarray] = {}

    def fail(self, problem: str):
        raise CheckpointError(f"{self.source}: not a valid PyTorch checkpoint: {problem}")

    def member(self, name: str) -> zipfile.ZipInfo:
        info = self.members.get(self.prefix + name)
        if info is None:
            self.fail(f"the archive has no {self.prefix + name!r:.80}")
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            self.fail(f"member {info.filename!r:.80} is compressed (torch.save stores members)")
        if info.file_size > self.size:
            self.fail(f"member {info.filename!r:.80} claims more bytes than the file holds")
        return info

    def read_member(self, name: str) -> bytes:
        return self.zip.read(self.member(name))

    def _byteorder(self) -> bool:
        if self.prefix + "byteorder" not in self.members:
            return True  # archives of PyTorch before 1.10: little-endian
        order = self.read_member("byteorder")
        if order not in (b"little", b"big"):
            self.fail(f"its byteorder is {order!r:.20}")
        return order == b"little"

    def storage(self, pid) -> StorageRef:
        """``persistent_load``: the storage a persistent id names (checked, not yet read)."""
        key, dtype, location, numel = storage_pid(pid)
        seen = self.storages.get(key)
        if seen is not None:
            if (seen.dtype, seen.numel) != (dtype, numel):
                raise Invalid(f"storage {key!r} is named as {seen.dtype} and as {dtype}")
            return seen
        ref = StorageRef(key, dtype, numel, location)
        info = self.member(f"data/{key}")
        if info.file_size != ref.nbytes:
            self.fail(
                f"storage {key!r} of {numel} {dtype} elements needs {ref.nbytes} bytes but its "
                f"member holds {info.file_size}"
            )
        self.storages[key] = ref
        return ref

    def bytes_of(self, ref: StorageRef) -> np.ndarray:
        """The raw bytes of a storage as a fresh, writable uint8 array (read on first use)."""
        arr = self.raw.get(ref.key)
        if arr is not None:
            return arr
        info = self.member(f"data/{ref.key}")
        self.f.seek(info.header_offset)
        head = self.f.read(_LOCAL_HEADER.size)
        if len(head) < _LOCAL_HEADER.size or not head.startswith(b"PK\x03\x04"):
            self.fail(f"the local header of {info.filename!r:.80} is damaged")
        fields = _LOCAL_HEADER.unpack(head)
        start = info.header_offset + _LOCAL_HEADER.size + fields[10] + fields[11]
        if start + info.file_size > self.size:
            self.fail(f"the file ends inside {info.filename!r:.80} (truncated?)")
        self.f.seek(start)
        arr = read_exactly(self.f, info.file_size, self.fail, f"{info.filename!r:.80}")
        if self.verify and zlib.crc32(arr) != info.CRC:
            self.fail(f"storage {info.filename!r:.80} does not match its CRC-32 (corrupted)")
        self.raw[ref.key] = arr
        return arr


def load(
    f: BinaryIO,
    source: str,
    place: Callable[[Tensor, str], Tensor],
    verify: bool = True,
    weights_only: bool = True,
) -> Any:
    """The object of the ``torch.save`` zip archive ``f`` (seekable), with ember tensors.

    ``place(tensor, location)`` puts each tensor (built on the CPU) where ``map_location``
    says. Tensors come back with their dtype, shape and values, each with an array of its own;
    a tensor object the file holds in several places is one tensor in those places;
    Parameters stay Parameters. ``verify`` checks each storage's CRC-32. ``weights_only``
    picks the unpickler (``torch_pickle``'s module docstring says what each resolves).

    >>> import io, pickle, zipfile
    >>> from ember.serialization.torch_zip import load
    >>> buf = io.BytesIO()
    >>> with zipfile.ZipFile(buf, "w") as z:
    ...     z.writestr("m/data.pkl", pickle.dumps({"epoch": 3}, protocol=2))
    >>> load(buf, "m.pt", lambda t, loc: t)
    {'epoch': 3}
    """

    def run():
        archive = _Archive(f, source, verify)
        policy = TorchPolicy(source, archive.storage, weights_only)
        obj = read_pickle(io.BytesIO(archive.read_member("data.pkl")), policy, weights_only)
        policy.fill(archive.bytes_of, archive.little, place)
        return obj

    return guarded(run, source, "PyTorch checkpoint", weights_only)
