"""Reading PyTorch's legacy checkpoints (``torch.save(..., _use_new_zipfile_serialization=False)``).

The file is a run of pickles, then raw bytes (``torch/serialization.py``'s ``_legacy_save``):
the magic number ``0x1950A86A20F9469CFC6C``, the protocol version 1001, a dict of system info
(``little_endian``), the object (storages are persistent ids ``('storage', type, key,
location, numel, None)``; in a whole model each module class is ``('module', class, source
file, source)``), the sorted list of storage keys, and then each storage in that order: its
element count (int64) and its bytes. Every pickle goes through the weights-only unpickler
(the object's through the trusted one with ``weights_only=False``); storages are read once
each, after checking that the file holds their bytes, so a small file cannot make the loader
allocate more than its size (views copy at most ``torch_pickle.COPY_FACTOR`` times that).

>>> from ember.serialization.torch_legacy import MAGIC, is_torch_legacy
>>> is_torch_legacy(b"\\x80\\x02" + MAGIC), is_torch_legacy(b"{}")
(True, False)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

from .._tensor import Tensor
from .torch_pickle import StorageRef, TorchPolicy, read_exactly, storage_pid
from .unpickler import Policy, check, guarded, read_pickle

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
MAGIC = b"\x8a\x0a" + MAGIC_NUMBER.to_bytes(10, "little")  # the magic number as pickled


def is_torch_legacy(head: bytes) -> bool:
    """Whether a file starting with ``head`` (its first 32 bytes) is a legacy ``torch.save``
    file: a pickle holding the magic number (no safetensors file can start so: its byte 8 is
    ``{``).

    >>> import pickle
    >>> from ember.serialization.torch_legacy import MAGIC_NUMBER, is_torch_legacy
    >>> is_torch_legacy(pickle.dumps(MAGIC_NUMBER, protocol=2))
    True
    """
    return head[:1] == b"\x80" and MAGIC in head[:32]


def _storages(
    f: BinaryIO, keys: Any, refs: dict[str, StorageRef], size: int, little: bool
) -> dict[str, np.ndarray]:
    """Each listed storage's bytes, read in order after checking its count and the file size."""
    check(isinstance(keys, list) and all(isinstance(k, str) for k in keys), "storage key list")
    raw: dict[str, np.ndarray] = {}
    for key in keys:
        ref = refs.get(key)
        check(ref is not None, f"the storage key list names {key!r:.40}, which no tensor uses")
        check(key not in raw, f"the storage key list names {key!r:.40} twice")
        count = f.read(8)
        check(len(count) == 8, f"the file ends before storage {key!r} (truncated?)")
        numel = int.from_bytes(count, "little" if little else "big", signed=True)
        check(
            numel == ref.numel,
            f"storage {key!r} holds {numel} elements but its tensors name {ref.numel}",
        )
        left = size - f.tell()
        check(
            ref.nbytes <= left,
            f"storage {key!r} needs {ref.nbytes} bytes but the file has {left} left (truncated?)",
        )
        raw[key] = read_exactly(f, ref.nbytes, _truncated, f"storage {key!r}")
    return raw


def _truncated(message: str) -> None:
    check(False, message)


def load(
    f: BinaryIO,
    source: str,
    place: Callable[[Tensor, str], Tensor],
    weights_only: bool = True,
) -> Any:
    """The object of the legacy ``torch.save`` file ``f`` (seekable, at its start), with ember
    tensors placed by ``place(tensor, location)`` (see ``torch_zip.load``).

    >>> import io, pickle
    >>> from ember.serialization.torch_legacy import MAGIC_NUMBER, PROTOCOL_VERSION, load
    >>> parts = [MAGIC_NUMBER, PROTOCOL_VERSION, {"little_endian": True}, {"epoch": 3}, []]
    >>> blob = b"".join(pickle.dumps(p, protocol=2) for p in parts)
    >>> load(io.BytesIO(blob), "old.pt", lambda t, loc: t)
    {'epoch': 3}
    """

    def run() -> Any:
        start = f.tell()
        size = f.seek(0, os.SEEK_END)
        f.seek(start)
        plain = Policy()
        check(read_pickle(f, plain, True) == MAGIC_NUMBER, "Invalid magic number; corrupt file?")
        version = read_pickle(f, plain, True)
        check(version == PROTOCOL_VERSION, f"Invalid protocol version: {version!r:.20}")
        sys_info = read_pickle(f, plain, True)
        check(isinstance(sys_info, dict), "its system info is not a dict")
        little = sys_info.get("little_endian", True)
        check(type(little) is bool, "its system info's little_endian is not a bool")
        refs: dict[str, StorageRef] = {}

        def storage(pid: Any) -> Any:
            if isinstance(pid, tuple) and len(pid) == 4 and pid[0] == "module":
                return pid[1]  # a module class (trusted loads only: the policy refuses it else)
            key, dtype, location, numel = storage_pid(pid, 6)
            check(pid[5] is None, "a storage view (files of PyTorch before 1.0)")
            ref = refs.get(key)
            if ref is None:
                ref = refs[key] = StorageRef(key, dtype, numel, location)
                check(ref.nbytes <= size, f"storage {key!r} claims more bytes than the file")
            check((ref.dtype, ref.numel) == (dtype, numel), f"storage {key!r} named twice")
            return ref

        policy = TorchPolicy(source, storage, weights_only)
        obj = read_pickle(f, policy, weights_only)
        raw = _storages(f, read_pickle(f, plain, True), refs, size, little)

        def bytes_of(ref: StorageRef) -> np.ndarray:
            check(ref.key in raw, f"storage {ref.key!r} is not in the file's storage list")
            return raw[ref.key]

        policy.fill(bytes_of, little, place)
        return obj

    return guarded(run, source, "PyTorch checkpoint (legacy format)", weights_only)
