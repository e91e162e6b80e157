"""``ember.save`` / ``ember.load``: checkpoints as safetensors files; ``torch.save`` files read.

The tensors of the saved object go into the safetensors buffer under their dotted paths; the
rest of the object (dicts, lists, numbers, strings) goes into the header's ``__metadata__`` as
JSON under the key ``"ember"``. A plain state dict therefore makes a standard safetensors file
that other tools (``safetensors``, Hugging Face ``transformers``) read, and loading runs no code
from the file. ``load`` also reads PyTorch's zip checkpoints through a restricted unpickler
(``torch_zip``, ``torch_pickle``).
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import os
import pickle
from collections.abc import Callable
from typing import Any, BinaryIO, Union

import numpy as np

from .._errors import DeviceError
from .._tensor import Tensor
from ..backend import CPU, Device, to_device
from . import pickled as _pickled
from . import safetensors as _st
from . import torch_legacy as _torch_legacy
from . import torch_zip as _torch_zip
from .atomic import atomic_write
from .errors import CheckpointError
from .safe_globals import user_allowed
from .structure import NotPlain, flatten, unflatten
from .unpickler import guarded, read_pickle

FORMAT_VERSION = 1  # the JSON skeleton; a pickled object's document is version 2
PICKLE_VERSION = 2
_META_KEY = "ember"

PathLike = Union[str, "os.PathLike[str]"]  # noqa: UP007  (a runtime alias: no | with strings)
MapLocation = Union[None, str, Device, dict, Callable[[Tensor, str], Any]]  # noqa: UP007


def _host(t: Tensor) -> np.ndarray:
    arr = t._data
    if type(arr) is not np.ndarray:
        arr = to_device(arr, CPU)
    return arr


def save(
    obj: Any,
    f: PathLike | BinaryIO,
    pickle_module: Any = None,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """Save any picklable object to a safetensors file, atomically: its tensors as tensors.

    A tensor or a structure of dicts (str or int keys), lists and tuples of tensors, ints,
    floats, bools, None and strings, as ``{"model": model.state_dict(), "optimizer":
    opt.state_dict(), "epoch": 3}`` is, is stored as a JSON skeleton in the metadata, and a
    plain state dict makes a standard safetensors file. Anything else (a whole module, an
    optimizer, the user's classes, sets, Parameters) is pickled as ``torch.save`` pickles it,
    except that its tensors go to the file's tensors and the pickle only refers to them
    (``pickled``); ``ember.load`` reads it back with ``weights_only=False``, or with the
    classes allowlisted (``ember.serialization.safe_globals``). Tensors are saved from the host
    (cuda tensors are copied over); a tensor object held in several places is stored once and
    loads as one tensor (views of one storage are stored separately). Each tensor's CRC-32 goes
    into the header's metadata, which ``ember.load`` checks. ``f`` is a path (written via a
    temp file in the same folder, fsync and rename, so a crash never leaves a half-written
    file) or a binary file object.

    ``torch.save``'s other arguments are taken so PyTorch code runs: ``pickle_protocol`` is the
    protocol of the pickled part (2 by default, as PyTorch's); ``pickle_module`` may be
    Python's ``pickle`` (the pickler ember uses); the two ``_``-arguments choose between
    PyTorch's file layouts, and ember writes its own either way.

    >>> import ember, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt.safetensors")
    >>> ember.save({"w": ember.ones(2), "step": 3}, path)
    >>> ember.load(path)
    {'w': tensor([1., 1.]), 'step': 3}
    """
    _check_pickle_module("save", pickle_module)
    try:
        skeleton, tensors = flatten(obj)
        root = {"version": FORMAT_VERSION, "root": skeleton}
    except NotPlain:
        data, tensors = _pickled.dumps(obj, pickle_protocol)
        root = {"version": PICKLE_VERSION, "pickle": base64.b64encode(data).decode("ascii")}
    arrays = {name: _host(t) for name, t in tensors.items()}
    try:
        doc = json.dumps(root, separators=(",", ":"))
    except ValueError as e:  # e.g. an int with more digits than Python converts to str
        raise CheckpointError(f"save: cannot encode the object: {e}") from None
    metadata = {"format": "pt", _META_KEY: doc}
    if hasattr(f, "write"):
        _st.write(f, arrays, metadata)
        return
    with atomic_write(f) as fh:
        _st.write(fh, arrays, metadata)


def _check_pickle_module(fn: str, module: Any) -> None:
    if module is not None and module is not pickle:
        raise CheckpointError(
            f"{fn}: pickle_module={getattr(module, '__name__', module)!r} is not supported: "
            "ember uses Python's pickle (pass pickle_module=pickle, or leave it out)"
        )


def _placer(map_location: MapLocation, source: str) -> Callable[[Tensor, str], Tensor]:
    def move(t: Tensor, loc) -> Tensor:
        dev = Device(loc)
        if dev.type == "cpu":
            return t
        from ..backend import cuda

        if not cuda.is_available():
            raise DeviceError(
                f"load: {source} holds tensors saved on {loc}, but cuda is not available; "
                "pass map_location='cpu' to load them on the CPU"
            )
        return Tensor._make(to_device(t._data, dev))

    if map_location is None:
        return move
    if isinstance(map_location, (str, Device)):
        target = Device(map_location)
        return lambda t, loc: move(t, target)
    if isinstance(map_location, dict):
        table = [(Device(k), Device(v)) for k, v in map_location.items()]

        def by_table(t: Tensor, loc: str) -> Tensor:
            saved = Device(loc)
            for k, v in table:
                if k == saved:
                    return move(t, v)
            return move(t, saved)

        return by_table
    if callable(map_location):

        def by_call(t: Tensor, loc: str) -> Tensor:
            out = map_location(t, loc)
            if out is None:
                return move(t, loc)
            if isinstance(out, (str, Device)):  # a location to put it, as a dict value would be
                return move(t, out)
            if not isinstance(out, Tensor):
                raise DeviceError(
                    f"load: map_location returned {type(out).__name__} for a tensor saved on "
                    f"{loc}; expected a tensor, a device or None"
                )
            return out

        return by_call
    raise DeviceError(
        f"load: map_location must be None, a device, a dict or a callable, got {map_location!r}"
    )


def _tensors_of(header: _st.Header, fh: BinaryIO, source: str, place) -> Callable:
    """``tensor(name, location, requires_grad)``: each stored tensor read once, on demand."""
    loaded: dict[str, tuple[Tensor, str, bool]] = {}
    # What a header may make the loader allocate: the tensors it holds, each once; the
    # tiling check in read_header already ties that to the file's size, and this budget
    # keeps it so (a structure naming one tensor many times costs nothing more).
    budget = header.data_start + sum(i.end - i.begin for i in header.tensors.values())

    def tensor(name: str, loc: str = "cpu", requires_grad: bool = False) -> Tensor:
        nonlocal budget
        info = header.tensors.get(name)
        if info is None:
            raise CheckpointError(
                f"{source}: the ember metadata refers to tensor {name!r:.80}, "
                "which is not in the file"
            )
        seen = loaded.get(name)
        if seen is not None:
            t, seen_loc, seen_grad = seen
            if (seen_loc, seen_grad) != (loc, requires_grad):
                raise CheckpointError(
                    f"{source}: invalid ember structure metadata: tensor {name!r:.80} is "
                    f"referred to with location {seen_loc!r:.40} / requires_grad "
                    f"{seen_grad} and with {loc!r:.40} / {requires_grad}"
                )
            return t
        budget -= info.end - info.begin
        if budget < 0:  # unreachable for a checked header; kept as the loader's cap
            raise CheckpointError(
                f"{source}: the header asks for more memory than the file's size allows"
            )
        try:
            Device(loc)
        except DeviceError:
            raise CheckpointError(f"{source}: tensor {name!r} has bad device {loc!r:.40}") from None
        if requires_grad and info.dtype.kind != "f" and info.dtype.name != "bfloat16":
            raise CheckpointError(
                f"{source}: tensor {name!r} of dtype {info.dtype} cannot require grad"
            )
        t = place(Tensor._make(_st.read_array(fh, header, info, source)), loc)
        if requires_grad:
            t.requires_grad_(True)
        loaded[name] = (t, loc, requires_grad)
        return t

    return tensor


def _unpickle(doc: dict, tensor: Callable, source: str, weights_only: bool) -> Any:
    text = doc.get("pickle")
    try:
        data = base64.b64decode(text, validate=True) if isinstance(text, str) else None
    except (binascii.Error, ValueError):
        data = None
    if data is None:
        raise CheckpointError(f"{source}: the ember metadata's pickle is not base64 text")
    policy = _pickled.EmberPolicy(lambda name, loc: tensor(name, loc, False))
    return guarded(
        lambda: read_pickle(io.BytesIO(data), policy, weights_only),
        source,
        "ember checkpoint",
        weights_only,
    )


def _open(f):
    if hasattr(f, "read"):
        return _st.seekable(f), str(getattr(f, "name", "<file object>")), False
    path = os.fspath(f)
    return open(path, "rb"), str(path), True


def load(
    f: PathLike | BinaryIO,
    map_location: MapLocation = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    verify: bool = True,
) -> Any:
    """Load an object saved by ``ember.save`` (or any safetensors file) with fresh tensors.

    Every stored tensor is read once into a new, writable array of its own: a tensor the saved
    object held in several places (``{"a": t, "b": t}``) comes back as one tensor in those
    places, as with PyTorch. ``verify`` (default True) checks the CRC-32 checksums ember writes
    with each tensor and with the metadata, raising ``CheckpointError`` naming the corrupted
    tensor; ``verify=False`` skips the check (about 60 ms per 100 MB saved). Files without
    checksums (written by other tools or older ember) load without the check.

    ``map_location`` says where tensors go: ``None`` puts each on the device it was saved from;
    ``'cpu'``, ``'cuda'`` or an ``ember.device`` puts all there; a dict maps saved locations to
    new ones (``{'cuda:0': 'cpu'}``); a callable ``fn(tensor, location)`` gets each tensor (on
    the CPU) and its saved location and returns the tensor to use, a device to put it on, or
    None for the default. ``'cuda'`` means the current GPU; loading tensors saved on a GPU
    without one raises a ``DeviceError`` that suggests ``map_location='cpu'``. A safetensors
    file not written by ember loads as a dict of name -> tensor.

    ``weights_only`` (default True, as ``torch.load`` since PyTorch 2.6) says how a pickled
    object is read. True: only tensors, dtypes, devices, ``Size``, plain containers,
    ``OrderedDict``/``Counter``/``set``/``complex``/``bytearray`` and the globals allowlisted
    with ``ember.serialization.add_safe_globals`` or ``safe_globals`` load; anything else is a
    ``WeightsOnlyError`` (a ``CheckpointError`` and ``pickle.UnpicklingError``) with PyTorch's
    message, raised before anything from the file runs. False: the pickle may run any code it
    names; use it only for files you trust. A state dict (JSON skeleton) loads either way.

    Files ``torch.save`` wrote load too, without torch: zip archives and the legacy format
    (``_use_new_zipfile_serialization=False``), state dicts and whole objects alike. A
    ``torch.X`` global is ``ember.X`` (``torch.nn.modules.linear.Linear`` is
    ``ember.nn.Linear``, ``torch.optim.sgd.SGD`` is ``ember.optim.SGD``), so a whole PyTorch
    model comes back as the ember model with PyTorch's weights and ``training`` flags, and the
    program's own classes (``__main__.Net``) are the program's (ember) classes. Tensors come
    back on the CPU (then ``map_location`` applies), each with an array of its own;
    Parameters stay Parameters; ``verify`` checks a zip archive's CRC-32s.

    Files that are not valid (truncated, corrupt, hostile, other pickles) raise
    ``CheckpointError`` naming the file and the problem.

    ``pickle_module`` may be Python's ``pickle`` (what ember unpickles with) and ``mmap`` is
    taken as PyTorch's hint: ember reads every tensor into memory of its own either way.

    >>> import ember, io
    >>> buf = io.BytesIO()
    >>> ember.save([ember.tensor([1, 2]), (1.5, "a", None)], buf)
    >>> _ = buf.seek(0)
    >>> ember.load(buf, map_location="cpu")
    [tensor([1, 2]), (1.5, 'a', None)]
    """
    _check_pickle_module("load", pickle_module)
    weights_only = True if weights_only is None else bool(weights_only)
    if weights_only:
        user_allowed()  # a malformed allowlist fails here, as in torch.load
    fh, source, owned = _open(f)
    try:
        start = fh.tell()
        head = fh.read(32) or b""
        fh.seek(start)
        place = _placer(map_location, source)
        if _torch_zip.is_torch_zip(head):
            return _torch_zip.load(fh, source, place, verify, weights_only)
        if _torch_legacy.is_torch_legacy(head):
            return _torch_legacy.load(fh, source, place, weights_only)
        header = _st.read_header(fh, source, verify)
        tensor = _tensors_of(header, fh, source, place)
        doc = header.metadata.get(_META_KEY)
        if doc is None:
            return {name: tensor(name) for name in header.tensors}
        try:
            doc = _st.parse_json(doc)
        except RecursionError:
            raise CheckpointError(f"{source}: the ember metadata is nested too deeply") from None
        except ValueError as e:
            raise CheckpointError(f"{source}: the ember metadata is not valid JSON ({e})") from None
        if (
            not isinstance(doc, dict)
            or "version" not in doc
            or not ("root" in doc or "pickle" in doc)
        ):
            raise CheckpointError(
                f"{source}: the ember metadata is not an object with root/version"
            )
        if doc["version"] == PICKLE_VERSION:
            return _unpickle(doc, tensor, source, weights_only)
        if doc["version"] != FORMAT_VERSION:
            raise CheckpointError(
                f"{source}: ember checkpoint format version {doc['version']!r:.20} is not "
                f"supported (this ember reads versions {FORMAT_VERSION} and {PICKLE_VERSION}); "
                "upgrade ember"
            )
        return unflatten(doc["root"], tensor, source)
    finally:
        if owned:
            fh.close()
