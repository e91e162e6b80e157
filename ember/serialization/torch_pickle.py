"""PyTorch's pickle vocabulary, read without torch: ``TorchPolicy`` for ``torch.save`` files.

A ``torch.save`` pickle names ``torch._utils._rebuild_tensor_v2`` and friends, storage types
(``torch.FloatStorage``), dtypes, ``torch.Size``, ``torch.device``, and for whole objects
``torch.nn.modules.linear.Linear``, ``torch.optim.sgd.SGD`` or the user's classes. Here:

- the rebuild functions, dtypes, Size and device are PyTorch's default allowlist, resolved to
  ember's versions, which check their arguments (no view reads past its storage);
- in a weights-only load any other global must be allowlisted
  (``ember.serialization.add_safe_globals``): a ``torch.X`` path is allowed when ``ember.X``
  is an allowlisted object (so ``safe_globals([ember.nn.Linear])`` allows
  ``torch.nn.modules.linear.Linear``), other paths by name as in PyTorch;
- in a trusted load ``torch.X`` resolves to ``ember.X`` (a ``CheckpointError`` where ember has
  none) and other paths import as pickle does (``__main__.Net`` is the program's class);
- a tensor's bytes are read after the whole pickle (the legacy format stores them after it):
  a rebuilt tensor starts as a placeholder of its shape and dtype and ``fill`` gives it its
  array; work that needs the values (an optimizer's state) is queued in ``after``.

>>> import io, pickle
>>> from ember.serialization.torch_pickle import TorchPolicy
>>> from ember.serialization.unpickler import WeightsOnlyUnpickler
>>> data = b"\\x80\\x02ctorch\\nSize\\nK\\x02K\\x03\\x86\\x85R."
>>> WeightsOnlyUnpickler(io.BytesIO(data), TorchPolicy("m.pt", lambda pid: None)).load()
ember.Size([2, 3])
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from .. import dtypes as _dt
from .._errors import DeviceError
from .._tensor import Size, Tensor
from ..backend import Device
from ..backend.arrays import strided_view
from . import tensor_types
from .errors import CheckpointError
from .safe_globals import user_allowed
from .torch_objects import build_from_torch
from .unpickler import PYTHON_GLOBALS, Invalid, Policy, Refused, check, import_global

MAX_NDIM = 64  # NumPy's limit
_MAX_DIM = 1 << 62
COPY_FACTOR = 4
COPY_SLACK = 1 << 20

# torch dtype name -> NumPy dtype (little-endian storage order)
DTYPES: dict[str, np.dtype] = {
    "float64": np.dtype("<f8"),
    "float32": np.dtype("<f4"),
    "float16": np.dtype("<f2"),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "int64": np.dtype("<i8"),
    "int32": np.dtype("<i4"),
    "int16": np.dtype("<i2"),
    "int8": np.dtype("i1"),
    "uint8": np.dtype("u1"),
    "bool": np.dtype("?"),
}
# torch's typed storage classes (``torch.FloatStorage`` ...) -> dtype name
STORAGES: dict[str, str] = {
    "DoubleStorage": "float64",
    "FloatStorage": "float32",
    "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16",
    "LongStorage": "int64",
    "IntStorage": "int32",
    "ShortStorage": "int16",
    "CharStorage": "int8",
    "ByteStorage": "uint8",
    "BoolStorage": "bool",
}
# the packages whose modules repeat PyTorch's paths (``ember.nn.modules.linear``): a weights-only
# load may import these to see whether ``torch.X`` is an allowlisted ember object
ALIAS_PACKAGES = ("ember.nn.modules", "ember.optim")


class _Sealed:
    """Base of the inert values a PyTorch pickle gets from here: no state to set."""

    __slots__ = ()

    def __setstate__(self, state: Any) -> None:
        raise Invalid(f"the pickle tries to set the state of {self!r} (BUILD)")


class Marker(_Sealed):
    """A named class stand-in that is only passed along (a storage type, ``torch.Tensor``)."""

    __slots__ = ("name", "dtype")

    def __init__(self, name: str, dtype: str | None = None) -> None:
        self.name, self.dtype = name, dtype

    def __repr__(self) -> str:
        return self.name


class StorageRef(_Sealed):
    """One storage of the file: ``key``, ``numel`` elements of ``dtype`` (a torch dtype name)
    saved on ``location``."""

    __slots__ = ("key", "dtype", "numel", "location")

    def __init__(self, key: str, dtype: str, numel: int, location: str) -> None:
        self.key, self.dtype, self.numel, self.location = key, dtype, numel, location

    @property
    def nbytes(self) -> int:
        return self.numel * DTYPES[self.dtype].itemsize

    def __repr__(self) -> str:
        return f"storage {self.key!r}"


class View:
    """Where a rebuilt tensor's elements lie: a strided view (in elements) of a storage."""

    __slots__ = ("storage", "dtype", "offset", "size", "stride")

    def __init__(self, storage: StorageRef, dtype: str, offset: int, size: tuple, stride: tuple):
        self.storage, self.dtype, self.offset = storage, dtype, offset
        self.size, self.stride = size, stride


def read_exactly(f, nbytes: int, fail: Callable[[str], None], what: str) -> np.ndarray:
    """``nbytes`` bytes of ``f`` into a new uint8 array; ``fail(message)`` (which raises)
    when the file ends inside ``what``. Both torch file readers load storages with it.

    >>> import io
    >>> read_exactly(io.BytesIO(b"abc"), 2, print, "a storage").tobytes()
    b'ab'
    """
    arr = np.empty(nbytes, np.uint8)
    view, got = memoryview(arr), 0
    while got < nbytes:
        k = f.readinto(view[got:])
        if not k:
            fail(f"the file ends inside {what} (truncated?)")
        got += k
    return arr


def _int(x: Any, what: str, low: int = 0) -> int:
    check(type(x) is int and low <= x < _MAX_DIM, f"{what} is {x!r:.40}, not an integer >= {low}")
    return x


def _empty_hooks(hooks: Any) -> None:
    check(
        isinstance(hooks, dict) and not hooks,
        "a tensor with backward hooks (hooks are code; weights_only refuses them too)",
    )


def storage_pid(pid: Any, length: int = 5) -> tuple[str, str, str, int]:
    """Check a ``('storage', storage_type, key, location, numel, ...)`` persistent id of
    ``length`` items; return its ``(key, dtype name, location, numel)``."""
    check(
        isinstance(pid, tuple) and len(pid) == length and pid[0] == "storage",
        f"a persistent id that is not a storage ({type(pid).__name__} of "
        f"{len(pid) if isinstance(pid, tuple) else 1})",
    )
    kind, key, location, numel = pid[1:5]
    check(isinstance(kind, Marker) and kind.dtype in DTYPES, f"storage type {kind!r:.40}")
    check(isinstance(key, str) and key.isalnum() and len(key) < 64, f"storage key {key!r:.40}")
    check(isinstance(location, str) and len(location) < 64, f"location {location!r:.40}")
    return key, kind.dtype, location, _int(numel, "a storage size")


def _contiguous(size: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for n in reversed(size):
        strides.append(acc)
        acc *= n
    return tuple(reversed(strides))


class TorchPolicy(Policy):
    """How a ``torch.save`` pickle resolves (see the module docstring); ``storage(pid)`` is
    the file format's persistent load (a checked ``StorageRef``)."""

    def __init__(
        self, source: str, storage: Callable[[Any], Any], weights_only: bool = True
    ) -> None:
        self.source, self.storage, self.weights_only = source, storage, weights_only
        self.pending: dict[int, tuple[list[Tensor], View]] = {}
        self.after: list[Callable[[], None]] = []
        self.table = self._defaults()

    # -- resolution ------------------------------------------------------------------------
    def _defaults(self) -> dict[str, Any]:
        table: dict[str, Any] = dict(PYTHON_GLOBALS)
        for name in ("_rebuild_tensor", "_rebuild_tensor_v2", "_rebuild_tensor_v3"):
            table[f"torch._utils.{name}"] = getattr(self, name)
        table["torch._utils._rebuild_parameter"] = self._rebuild_parameter
        table["torch._utils._rebuild_parameter_with_state"] = self._rebuild_parameter
        table["torch._tensor._rebuild_from_type_v2"] = self._rebuild_from_type
        table["torch.Size"] = _size
        table["torch.device"] = self._device
        table["torch.Tensor"] = Marker("torch.Tensor")
        table["torch.nn.parameter.Parameter"] = Marker("torch.nn.parameter.Parameter")
        for name in DTYPES:
            table[f"torch.{name}"] = _dt.to_dtype(name)
        for cls, dtype in STORAGES.items():
            table[f"torch.{cls}"] = Marker(f"torch.{cls}", dtype)
        table["torch.storage.UntypedStorage"] = Marker("torch.storage.UntypedStorage", "uint8")
        return table

    def allowed(self, path: str) -> Any:
        found = self.table.get(path)
        if found is not None:
            return found
        users = user_allowed()
        found = users.get(path)
        if found is None and (path.startswith("torch.")):
            mine = _ember_alias(path)
            if mine is not None and any(mine is v for v in users.values()):
                found = mine
        return found

    def resolve(self, module: str, name: str) -> Any:
        found = self.table.get(f"{module}.{name}")
        if found is not None:
            return found
        if module == "torch" or module.startswith("torch."):
            try:
                return import_global("ember" + module[len("torch") :], name)
            except (ImportError, AttributeError):
                raise CheckpointError(
                    f"{self.source}: the file holds {module}.{name}, which ember has no "
                    f"counterpart of (ember.{module[6:] + '.' if module != 'torch' else ''}"
                    f"{name} does not exist)"
                ) from None
        return import_global(module, name)

    def persistent_load(self, pid: Any) -> Any:
        if self.weights_only and isinstance(pid, tuple) and pid and pid[0] != "storage":
            raise Refused(f"Only persistent_load of storage is allowed, but got {type(pid[0])}")
        return self.storage(pid)

    def build(self, inst: Any, state: Any) -> None:
        build_from_torch(inst, state, self.after)

    # -- the default globals -------------------------------------------------------------------
    def _device(self, kind: Any, index: Any = None) -> Device:
        check(isinstance(kind, str) and (index is None or type(index) is int), "torch.device")
        spec = kind if index is None else f"{kind}:{index}"
        try:
            return Device(spec)
        except DeviceError:
            raise Invalid(
                f"it holds torch.device({spec!r:.40}), which ember has no device for"
            ) from None

    def _tensor(self, storage, offset, size, stride, requires_grad, dtype: str) -> Tensor:
        check(isinstance(storage, StorageRef), f"a tensor's storage is a {type(storage).__name__}")
        offset = _int(offset, "a storage offset")
        check(
            isinstance(size, tuple) and len(size) <= MAX_NDIM, f"a tensor size of {len(size)} dims"
        )
        check(isinstance(stride, tuple) and len(stride) == len(size), "strides")
        size = tuple(_int(s, "a tensor size") for s in size)
        stride = tuple(_int(s, "a tensor stride") for s in stride)
        check(type(requires_grad) is bool, f"requires_grad {requires_grad!r:.40}")
        np_dtype = DTYPES[dtype]
        check(storage.nbytes % np_dtype.itemsize == 0, f"{dtype} view of {storage!r}")
        numel = storage.nbytes // np_dtype.itemsize
        if all(size):
            last = offset + sum((n - 1) * s for n, s in zip(size, stride))
            check(
                last < numel,
                f"a tensor of size {size}, strides {stride} at offset {offset} reads past the "
                f"{numel} elements of {storage!r}",
            )
        else:
            check(offset <= numel, f"offset {offset} past the {numel} elements of {storage!r}")
        if requires_grad:
            check(np_dtype.kind == "f" or dtype == "bfloat16", f"a {dtype} tensor requires grad")
        t = Tensor._make(np.broadcast_to(np.zeros((), np_dtype), size), requires_grad)
        self.pending[id(t)] = ([t], View(storage, dtype, offset, size, stride))
        return t

    def _rebuild_tensor(self, storage, offset, size, stride):
        check(isinstance(storage, StorageRef), f"a tensor's storage is a {type(storage).__name__}")
        return self._tensor(storage, offset, size, stride, False, storage.dtype)

    def _rebuild_tensor_v2(
        self, storage, offset, size, stride, requires_grad, hooks, metadata=None
    ):
        _empty_hooks(hooks)
        check(not metadata, "tensor metadata (conjugate/negative bits)")
        check(isinstance(storage, StorageRef), f"a tensor's storage is a {type(storage).__name__}")
        return self._tensor(storage, offset, size, stride, requires_grad, storage.dtype)

    def _rebuild_tensor_v3(
        self, storage, offset, size, stride, requires_grad, hooks, dtype, metadata=None
    ):
        _empty_hooks(hooks)
        check(not metadata, "tensor metadata (conjugate/negative bits)")
        check(isinstance(dtype, _dt.DType) and dtype.name in DTYPES, "tensor dtype")
        return self._tensor(storage, offset, size, stride, requires_grad, dtype.name)

    def _rebuild_parameter(self, data, requires_grad, hooks, state=None):
        check(id(data) in self.pending, f"a Parameter of a {type(data).__name__}")
        check(type(requires_grad) is bool, f"requires_grad {requires_grad!r:.40}")
        _empty_hooks(hooks)  # a Parameter's extra Python attributes (``state``) are dropped
        p = tensor_types.make("parameter", data, requires_grad)
        self.pending[id(data)][0].append(p)
        return p

    def _rebuild_from_type(self, func, new_type, args, state=None):
        # A Tensor or Parameter with extra Python attributes (``t.foo = 1``): the tensor is
        # rebuilt, the attributes (``state``) are dropped.
        check(
            func in (self._rebuild_tensor_v2, self._rebuild_tensor_v3, self._rebuild_parameter),
            "_rebuild_from_type_v2 of another function",
        )
        check(isinstance(new_type, Marker) and new_type.dtype is None, "rebuild type")
        check(isinstance(args, tuple), "rebuild arguments")
        return func(*args)

    # -- the tensors' bytes ----------------------------------------------------------------
    def fill(
        self,
        bytes_of: Callable[[StorageRef], np.ndarray],
        little: bool,
        place: Callable[[Tensor, str], Tensor],
    ) -> None:
        """Give every rebuilt tensor its array (``bytes_of(storage)``: the storage's bytes as
        a fresh uint8 array), put it where ``place`` says, then run ``after``. A view that
        cannot take its storage's array as is gets a copy; copies may take at most
        ``COPY_FACTOR`` times the storages' bytes (plus ``COPY_SLACK``)."""
        storages = {id(v.storage): v.storage for _, v in self.pending.values()}
        budget = COPY_FACTOR * sum(s.nbytes for s in storages.values()) + COPY_SLACK
        taken: set[str] = set()
        for tensors, view in self.pending.values():
            dt = DTYPES[view.dtype]
            dt = dt if little else dt.newbyteorder(">")
            flat = bytes_of(view.storage).view(dt)
            numel = int(np.prod(view.size, dtype=object))
            key = view.storage.key
            if (
                key not in taken
                and view.offset == 0
                and numel == flat.size
                and (numel <= 1 or view.stride == _contiguous(view.size))
            ):
                taken.add(key)
                arr = flat.reshape(view.size)
            else:
                budget -= numel * dt.itemsize
                if budget < 0:
                    raise Invalid(
                        f"its tensors would take more than {COPY_FACTOR}x the bytes of its "
                        f"storages (a view of size {view.size} of {view.storage!r})"
                    )
                strides = tuple(s * dt.itemsize for s in view.stride)
                arr = np.array(strided_view(flat[view.offset :], view.size, strides), order="C")
            if not dt.isnative:
                arr = arr.astype(dt.newbyteorder("="))
            if dt.kind == "b":  # any nonzero byte is True (keeps NumPy bools canonical)
                np.not_equal(arr.view(np.uint8), 0, out=arr)
            location = view.storage.location
            try:
                Device(location)
            except DeviceError:
                raise Invalid(
                    f"{view.storage!r} was saved on {location!r:.40}, which ember has no device for"
                ) from None
            placed = place(Tensor._make(arr), location)._data
            for t in tensors:
                t._data = placed
        self.pending.clear()
        for finish in self.after:
            finish()


def _size(dims: Any = ()) -> Size:
    check(isinstance(dims, tuple) and all(type(d) is int for d in dims), "torch.Size")
    return Size(dims)


def _ember_alias(path: str) -> Any:
    """The ember object at ``torch.X``'s path ``ember.X``, importing no module outside
    ``ALIAS_PACKAGES`` (a weights-only load runs no module code the file chooses)."""
    module, _, name = ("ember" + path[len("torch") :]).rpartition(".")
    mod = sys.modules.get(module)
    parts = module.split(".")
    alias = any(module == p or module.startswith(p + ".") for p in ALIAS_PACKAGES)
    if mod is None and alias and all(p.isidentifier() for p in parts):
        try:
            mod = importlib.import_module(module)
        except ImportError:
            return None
    return getattr(mod, name, None) if mod is not None and name.isidentifier() else None
