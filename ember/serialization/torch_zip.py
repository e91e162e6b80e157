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

import pickle
import struct
import zipfile
import zlib
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

from .._errors import DeviceError
from .._tensor import Tensor
from ..backend import Device
from ..backend.arrays import strided_view
from .errors import CheckpointError
from .torch_pickle import DTYPES, Refused, StorageRef, TensorRef, materialize, storage_pid, unpickle

COPY_FACTOR = 4
COPY_SLACK = 1 << 20
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # a zip member's local file header
ALLOWED_TEXT = (
    "tensors (PyTorch's rebuild functions and storages), dtypes, torch.Size, torch.device, "
    "OrderedDict, set and plain containers of numbers and strings"
)


def is_torch_zip(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a zip archive (as ``torch.save`` writes).

    >>> from ember.serialization.torch_zip import is_torch_zip
    >>> is_torch_zip(b"PK\\x03\\x04"), is_torch_zip(b"{}")
    (True, False)
    """
    return head.startswith(b"PK\x03\x04")


def _refusal(source: str, problem: str) -> CheckpointError:
    if not problem.startswith("global:"):
        return CheckpointError(f"{source}: not a plain PyTorch state dict: {problem}")
    name = problem[len("global:") :]
    leaf = name.rsplit(".", 1)[-1]
    if leaf[:1].isupper():
        what = (
            f"it holds a pickled {name} object, not only weights (a whole model saved with "
            "torch.save(model)?); save model.state_dict() with PyTorch instead, which loads"
        )
    else:
        what = f"it calls {name}, which a checkpoint of weights never needs"
    return CheckpointError(
        f"{source}: refused to load this torch.save file: {what}. ember unpickles PyTorch "
        f"checkpoints as torch.load(weights_only=True) does, allowing only {ALLOWED_TEXT}; "
        "nothing from the file was run"
    )


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
                raise Refused(f"storage {key!r} is named as {seen.dtype} and as {dtype}")
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
        arr = np.empty(info.file_size, np.uint8)
        self.f.seek(start)
        view, got = memoryview(arr), 0
        while got < info.file_size:
            k = self.f.readinto(view[got:])
            if not k:
                self.fail(f"the file ends inside {info.filename!r:.80} (truncated?)")
            got += k
        if self.verify and zlib.crc32(view) != info.CRC:
            self.fail(f"storage {info.filename!r:.80} does not match its CRC-32 (corrupted)")
        self.raw[ref.key] = arr
        return arr


def _contiguous(size: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for n in reversed(size):
        strides.append(acc)
        acc *= n
    return tuple(reversed(strides))


def load(
    f: BinaryIO, source: str, place: Callable[[Tensor, str], Tensor], verify: bool = True
) -> Any:
    """The object of the ``torch.save`` zip archive ``f`` (seekable), with ember tensors.

    ``place(tensor, location)`` puts each tensor (built on the CPU) where ``map_location``
    says. Tensors come back with their dtype, shape and values, each with an array of its own;
    a tensor object the file holds in several places is one tensor in those places;
    Parameters keep their ``requires_grad``. ``verify`` checks each storage's CRC-32.

    >>> import io, pickle, zipfile
    >>> from ember.serialization.torch_zip import load
    >>> buf = io.BytesIO()
    >>> with zipfile.ZipFile(buf, "w") as z:
    ...     z.writestr("m/data.pkl", pickle.dumps({"epoch": 3}, protocol=2))
    >>> load(buf, "m.pt", lambda t, loc: t)
    {'epoch': 3}
    """
    try:
        archive = _Archive(f, source, verify)
        obj = unpickle(archive.read_member("data.pkl"), archive.storage)
        total = sum(s.nbytes for s in archive.storages.values())
        budget = COPY_FACTOR * total + COPY_SLACK
        taken: set[str] = set()

        def tensor(ref: TensorRef) -> Tensor:
            nonlocal budget
            dt = DTYPES[ref.dtype]
            dt = dt if archive.little else dt.newbyteorder(">")
            flat = archive.bytes_of(ref.storage).view(dt)
            numel = int(np.prod(ref.size, dtype=object))
            key = ref.storage.key
            if (
                key not in taken
                and ref.offset == 0
                and numel == flat.size
                and (numel <= 1 or ref.stride == _contiguous(ref.size))
            ):
                taken.add(key)
                arr = flat.reshape(ref.size)
            else:
                budget -= numel * dt.itemsize
                if budget < 0:
                    archive.fail(
                        f"its tensors would take more than {COPY_FACTOR}x the bytes of its "
                        f"storages (a view of size {ref.size} of {ref.storage!r})"
                    )
                strides = tuple(s * dt.itemsize for s in ref.stride)
                view = strided_view(flat[ref.offset :], tuple(ref.size), strides)
                arr = np.array(view, order="C")
            if not dt.isnative:
                arr = arr.astype(dt.newbyteorder("="))
            if dt.kind == "b":  # any nonzero byte is True (keeps NumPy bools canonical)
                np.not_equal(arr.view(np.uint8), 0, out=arr)
            location = ref.storage.location
            try:
                Device(location)
            except DeviceError:
                archive.fail(
                    f"{ref!r} was saved on {location!r:.40}, which ember has no device for"
                )
            t = place(Tensor._make(arr), location)
            if ref.requires_grad:
                t.requires_grad_(True)
            return t

        def device(spec: str) -> Device:
            try:
                return Device(spec)
            except DeviceError:
                archive.fail(f"it holds torch.device({spec!r:.40}), which ember has no device for")

        return materialize(obj, tensor, device)
    except Refused as e:
        raise _refusal(source, str(e)) from None
    except (CheckpointError, DeviceError):
        raise
    except RecursionError:
        raise CheckpointError(f"{source}: the checkpoint's object is nested too deeply") from None
    except (
        pickle.UnpicklingError,
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        EOFError,
        OSError,
        ValueError,
        TypeError,
        AttributeError,
        IndexError,
        KeyError,
        OverflowError,
        MemoryError,
        struct.error,
        NotImplementedError,
    ) as e:
        raise CheckpointError(
            f"{source}: not a valid PyTorch checkpoint (damaged or truncated zip archive or "
            f"pickle): {type(e).__name__}: {e}"
        ) from None
